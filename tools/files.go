package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/workspace"
)

// Limits of the file tools.
const (
	// MaxReadBytes is the largest file read_file reads.
	MaxReadBytes = 10 << 20
	// MaxWriteBytes is the largest content write_file and edit_file write,
	// and the largest existing file they snapshot.
	MaxWriteBytes = 32 << 20
	// DefaultReadLines is the number of lines read_file returns without a
	// limit.
	DefaultReadLines = 2000
	// MaxLineChars truncates long lines in read_file output.
	MaxLineChars = 2000
	// MaxListEntries bounds list_dir output.
	MaxListEntries = 1000
)

// target is a validated model-supplied path, resolved once in Prepare.
// The gate judges its paths, and Run opens exactly the resolved path
// through the pinned form, without following a link that appeared since
// (workspace.ErrChanged), so nothing can move the action away from what
// was judged.
type target struct {
	// rel is the clean workspace-relative path the model named.
	rel string
	// resolved is rel with symlinks resolved inside the workspace; the gate
	// must judge it as well, since an in-root link can point at .git.
	resolved string
	pin      workspace.Pinned
}

func (t target) paths() []string {
	if t.resolved != t.rel {
		return []string{t.rel, t.resolved}
	}
	return []string{t.rel}
}

func resolveTarget(env *Env, p string) (target, error) {
	pin, err := env.WS.Pin(p)
	if err != nil {
		return target{}, err
	}
	return target{rel: pin.Rel(), resolved: pin.Resolved(), pin: pin}, nil
}

// ---- read_file ----

// ReadFile is the read_file tool.
type ReadFile struct{}

type readFileInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// Spec implements Tool.
func (ReadFile) Spec() ToolSpec {
	return ToolSpec{Name: "read_file", Description: description("read_file"), ReadOnly: true, ConcurrencySafe: true,
		Exposure: ExposureNative, MaxResultBytes: 100000, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the workspace or absolute inside it"},` +
			`"offset":{"type":"integer","minimum":1,"description":"First line to return (1-based)"},` +
			`"limit":{"type":"integer","minimum":1,"description":"Number of lines to return"}},` +
			`"required":["path"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (ReadFile) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in readFileInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return nil, errors.New("offset and limit must be positive")
	}
	t, err := resolveTarget(env, in.Path)
	if err != nil {
		return nil, err
	}
	return &readFileCall{in: in, t: t}, nil
}

type readFileCall struct {
	in readFileInput
	t  target
}

func (c *readFileCall) Request() engine.PermissionRequest {
	return engine.PermissionRequest{Paths: c.t.paths()}
}

func (c *readFileCall) Run(_ context.Context, rc *RunContext) (string, error) {
	data, fi, err := rc.Env.WS.ReadPinned(c.t.pin, MaxReadBytes)
	if err != nil {
		return "", err
	}
	rc.Env.reads.record(c.t.resolved, data, fi)
	if isBinary(data) {
		return fmt.Sprintf("(binary file %s, %d bytes, not shown)", c.t.rel, len(data)), nil
	}
	if len(data) == 0 {
		return fmt.Sprintf("(file %s is empty)", c.t.rel), nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first := max(c.in.Offset, 1)
	if first > len(lines) {
		return "", fmt.Errorf("offset %d is past the end of %s (%d lines)", first, c.t.rel, len(lines))
	}
	n := c.in.Limit
	if n == 0 {
		n = DefaultReadLines
	}
	last := min(first-1+n, len(lines))
	var sb strings.Builder
	for i := first - 1; i < last; i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		if len(l) > MaxLineChars {
			cut := MaxLineChars
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut] + " … (line truncated)"
		}
		fmt.Fprintf(&sb, "%6d\t%s\n", i+1, l)
	}
	if last < len(lines) {
		fmt.Fprintf(&sb, "(%d more lines; continue with offset %d)\n", len(lines)-last, last+1)
	}
	return sb.String(), nil
}

// isBinary reports whether data looks binary: a NUL byte in the first 8 KiB
// or content that is not UTF-8.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// A multi-byte rune cut at the 8 KiB boundary is not a sign of binary.
	for len(head) > 0 && !utf8.Valid(head) {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 && len(head) > 4 {
			return true
		}
		head = head[size:]
	}
	return false
}

// ---- write_file ----

// WriteFile is the write_file tool.
type WriteFile struct{}

type writeFileInput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Spec implements Tool.
func (WriteFile) Spec() ToolSpec {
	return ToolSpec{Name: "write_file", Description: description("write_file"), Destructive: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the workspace or absolute inside it"},` +
			`"content":{"type":"string","description":"The complete new content of the file"}},` +
			`"required":["path","content"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (WriteFile) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in writeFileInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if len(in.Content) > MaxWriteBytes {
		return nil, fmt.Errorf("content is %d bytes, more than the %d byte limit", len(in.Content), MaxWriteBytes)
	}
	t, err := resolveTarget(env, in.Path)
	if err != nil {
		return nil, err
	}
	old, existed, _, err := currentContent(env, t)
	if err != nil {
		return nil, err
	}
	return &writeCall{t: t, old: old, existed: existed, content: []byte(in.Content)}, nil
}

// currentContent reads what a write would replace.
func currentContent(env *Env, t target) (data []byte, existed bool, fi fs.FileInfo, err error) {
	e, err := env.WS.OpenEntry(t.pin)
	if err != nil {
		return nil, false, nil, err
	}
	defer func() { _ = e.Close() }()
	return entryContent(e)
}

// entryContent reads an open entry's current content, refusing first an
// entry the write could not replace (a hard link's content may be a file
// outside the workspace: it is neither shown in a diff nor snapshotted);
// a missing file is not an error.
func entryContent(e *workspace.Entry) (data []byte, existed bool, fi fs.FileInfo, err error) {
	if err := e.CheckReplace(); err != nil {
		return nil, false, nil, err
	}
	data, fi, err = e.Read(MaxWriteBytes)
	switch {
	case err == nil:
		return data, true, fi, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil, nil
	default:
		return nil, false, nil, err
	}
}

// writeCall replaces a file's content; write_file and edit_file share it.
type writeCall struct {
	t       target
	old     []byte
	existed bool
	content []byte
	// guard, when set, re-checks the file right before the write.
	guard func(env *Env, current []byte) error
}

func (c *writeCall) Request() engine.PermissionRequest {
	req := engine.PermissionRequest{Paths: c.t.paths(), Write: true, Diff: UnifiedDiff(c.t.rel, c.old, c.content, c.existed)}
	if c.selectable() {
		req.Selection = engine.SelectionContent
	}
	return req
}

func (c *writeCall) Run(ctx context.Context, rc *RunContext) (string, error) {
	env := rc.Env
	if env.Snapshots == nil {
		return "", errors.New("no snapshot store is configured, so kz does not write files")
	}
	// One open directory for the re-read, the snapshot and the write, so
	// the snapshot holds what is really replaced and the write replaces
	// exactly the entry that was read.
	ent, err := env.WS.OpenEntry(c.t.pin)
	if err != nil {
		return "", err
	}
	defer func() { _ = ent.Close() }()
	// Re-read right before writing: the snapshot must hold what is really
	// replaced, and edit_file must not clobber a change made meanwhile.
	old, existed, fi, err := entryContent(ent)
	if err != nil {
		return "", err
	}
	if c.guard != nil {
		if err := c.guard(env, old); err != nil {
			return "", err
		}
	}
	snap := Snapshot{SessionID: env.SessionID, ToolCallID: rc.ToolCallID, Path: c.t.resolved, Existed: existed, Content: old}
	if fi != nil {
		snap.Mode = fi.Mode().Perm()
	}
	if err := env.Snapshots.SaveSnapshot(ctx, snap); err != nil {
		return "", fmt.Errorf("save snapshot of %s: %w", c.t.rel, err)
	}
	if err := ent.Write(c.content, 0o644); err != nil {
		return "", err
	}
	env.reads.record(c.t.resolved, c.content, nil)
	diff, added, removed := unifiedDiff(c.t.rel, old, c.content, existed)
	rc.Emit(engine.Event{Type: engine.EventFileEdited, Path: c.t.rel, Diff: diff})
	verb := "Updated"
	if !existed {
		verb = "Created"
	}
	return fmt.Sprintf("%s %s (%d bytes, +%d -%d lines)", verb, c.t.rel, len(c.content), added, removed), nil
}

// ---- edit_file ----

// EditFile is the edit_file tool.
type EditFile struct{}

type editFileInput struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// Spec implements Tool.
func (EditFile) Spec() ToolSpec {
	return ToolSpec{Name: "edit_file", Description: description("edit_file"), Destructive: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the workspace or absolute inside it"},` +
			`"old_string":{"type":"string","description":"The exact text to replace"},` +
			`"new_string":{"type":"string","description":"The replacement text"},` +
			`"replace_all":{"type":"boolean","description":"Replace every occurrence instead of exactly one"}},` +
			`"required":["path","old_string","new_string"],"additionalProperties":false}`)}
}

// Errors of edit_file, for tests and callers.
var (
	ErrNotRead      = errors.New("file was not read in this session; read it first")
	ErrStale        = errors.New("file changed on disk since it was last read; read it again")
	ErrNoMatch      = errors.New("old_string was not found")
	ErrAmbiguous    = errors.New("old_string matches more than one place; add context or set replace_all")
	ErrNoChange     = errors.New("old_string and new_string are the same")
	ErrEmptyOldText = errors.New("old_string is empty; use write_file to create a file")
)

// Prepare implements Tool.
func (EditFile) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in editFileInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if in.OldString == "" {
		return nil, ErrEmptyOldText
	}
	if in.OldString == in.NewString {
		return nil, ErrNoChange
	}
	t, err := resolveTarget(env, in.Path)
	if err != nil {
		return nil, err
	}
	old, existed, _, err := currentContent(env, t)
	if err != nil {
		return nil, err
	}
	if !existed {
		return nil, fmt.Errorf("edit %s: %w", t.rel, fs.ErrNotExist)
	}
	if err := checkFresh(env, t, old); err != nil {
		return nil, err
	}
	n := bytes.Count(old, []byte(in.OldString))
	switch {
	case n == 0:
		return nil, fmt.Errorf("edit %s: %w", t.rel, ErrNoMatch)
	case n > 1 && !in.ReplaceAll:
		return nil, fmt.Errorf("edit %s: %d matches: %w", t.rel, n, ErrAmbiguous)
	}
	limit := 1
	if in.ReplaceAll {
		limit = -1
	}
	updated := bytes.Replace(old, []byte(in.OldString), []byte(in.NewString), limit)
	if len(updated) > MaxWriteBytes {
		return nil, fmt.Errorf("edit %s: result is larger than %d bytes", t.rel, MaxWriteBytes)
	}
	expected := sha256.Sum256(old)
	guard := func(env *Env, current []byte) error {
		if sha256.Sum256(current) != expected {
			return fmt.Errorf("edit %s: %w", t.rel, ErrStale)
		}
		return nil
	}
	return &writeCall{t: t, old: old, existed: true, content: updated, guard: guard}, nil
}

// checkFresh refuses a file the session has not read, or whose content
// differs from what it read.
func checkFresh(env *Env, t target, current []byte) error {
	if env.policyOnly {
		// kz policy check has no session that could have read the file.
		return nil
	}
	rec, ok := env.reads.get(t.resolved)
	if !ok {
		return fmt.Errorf("edit %s: %w", t.rel, ErrNotRead)
	}
	if rec.hash != sha256.Sum256(current) {
		return fmt.Errorf("edit %s: %w", t.rel, ErrStale)
	}
	return nil
}

// ---- list_dir ----

// ListDir is the list_dir tool.
type ListDir struct{}

type listDirInput struct {
	Path string `json:"path,omitempty"`
}

// Spec implements Tool.
func (ListDir) Spec() ToolSpec {
	return ToolSpec{Name: "list_dir", Description: description("list_dir"), ReadOnly: true, ConcurrencySafe: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Directory, relative to the workspace (default: the workspace)"}},` +
			`"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (ListDir) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in listDirInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if in.Path == "" {
		in.Path = "."
	}
	t, err := resolveTarget(env, in.Path)
	if err != nil {
		return nil, err
	}
	return &listDirCall{t: t}, nil
}

type listDirCall struct{ t target }

func (c *listDirCall) Request() engine.PermissionRequest {
	return engine.PermissionRequest{Paths: c.t.paths()}
}

func (c *listDirCall) Run(_ context.Context, rc *RunContext) (string, error) {
	filter, err := newReadFilter(rc.Env, c.t.resolved, false)
	if err != nil {
		return "", err
	}
	ents, err := rc.Env.WS.ReadDirPinned(c.t.pin)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	shown := 0
	for i, e := range ents {
		rel := e.Name()
		if c.t.resolved != "." {
			rel = c.t.resolved + "/" + e.Name()
		}
		if !filter.name(rel) {
			continue
		}
		if shown == MaxListEntries {
			fmt.Fprintf(&sb, "(%d more entries not shown)\n", len(ents)-i)
			break
		}
		shown++
		name := displayPath(e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			name += "@"
		case e.IsDir():
			name += "/"
		}
		sb.WriteString(name + "\n")
	}
	withheld := filter.summary()
	if shown == 0 && len(ents) == 0 {
		return fmt.Sprintf("(directory %s is empty)", displayPath(c.t.rel)), nil
	}
	if shown == 0 {
		return joinNote(fmt.Sprintf("(no entries of %s can be shown)", displayPath(c.t.rel)), withheld), nil
	}
	return sb.String() + withheld, nil
}

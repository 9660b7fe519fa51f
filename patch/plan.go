package patch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// DefaultMaxFileBytes bounds each file the applier reads or writes.
const DefaultMaxFileBytes = 8 << 20

// MaxFiles bounds the number of files one proposal may change.
const MaxFiles = 1000

// Applier validates, applies and undoes proposals in one workspace.
type Applier struct {
	// FS is the workspace. Required.
	FS FS
	// Guard is the gate's protected-path check; nil applies only the
	// built-in path rules.
	Guard PathGuard
	// Snapshots receives every touched file's previous state before the
	// first write, so Undo can restore it. Required by Apply.
	Snapshots SnapshotSaver
	// JournalDir is a directory outside the workspace (kz's data dir) where
	// in-flight changes are journaled for Recover. Required by Apply.
	JournalDir string
	// Root identifies the workspace in journals (its absolute path), so a
	// journal directory shared by several workspaces recovers each in its
	// own. Defaults to FS.Resolve(".").
	Root string
	// MaxFileBytes bounds file reads; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64

	// afterWrite, when set (tests only), runs after each file operation of
	// a commit; it can simulate a crash between two files.
	afterWrite func(n int)
	// beforeWrites, when set (tests only), runs once a commit's paths are
	// checked and journaled, right before its first write; it can swap a
	// path between the check and the write.
	beforeWrites func()
}

// Plan is a validated proposal: every new content computed in memory, ready
// for Preview and Apply. Nothing has been written.
type Plan struct {
	ChangeID string
	Proposal *Proposal
	Files    []PlannedFile
}

// PlannedFile is the computed change of one file.
type PlannedFile struct {
	Path      string    `json:"path"`
	NewPath   string    `json:"new_path,omitempty"`
	Operation Operation `json:"operation"`
	// Old state as read during validation.
	Existed    bool        `json:"existed"`
	OldContent []byte      `json:"-"`
	OldMode    fs.FileMode `json:"old_mode,omitempty"`
	// New state; NewContent is nil for a delete.
	NewContent []byte       `json:"-"`
	NewMode    fs.FileMode  `json:"new_mode,omitempty"`
	Edits      []EditResult `json:"edits,omitempty"`

	// pin and newPin are Path and NewPath as they were judged, which
	// Apply acts on (see pinnedPath).
	pin, newPin pinnedPath
}

// Select keeps only the files whose path (or rename target) is listed, for
// a person who accepts some files of a proposal.
func (p *Plan) Select(paths ...string) (*Plan, error) {
	want := map[string]bool{}
	for _, s := range paths {
		want[s] = true
	}
	out := &Plan{ChangeID: p.ChangeID, Proposal: p.Proposal}
	for _, f := range p.Files {
		if want[f.Path] || (f.NewPath != "" && want[f.NewPath]) {
			out.Files = append(out.Files, f)
			delete(want, f.Path)
			delete(want, f.NewPath)
		}
	}
	for s := range want {
		return nil, fmt.Errorf("select %q: not a file of this proposal", s)
	}
	return out, nil
}

func (a *Applier) maxBytes() int64 {
	if a.MaxFileBytes > 0 {
		return a.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

// NewChangeID returns a random identifier for a change.
func NewChangeID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chg_" + hex.EncodeToString(b[:])
}

// Validate checks every path and edit of p and computes every new content
// in memory. It writes nothing. On refusal it returns a *ValidationError
// listing all problems (FormatFeedback renders it for the model).
func (a *Applier) Validate(ctx context.Context, p *Proposal) (*Plan, error) {
	if a.FS == nil {
		return nil, errors.New("patch: Applier.FS is nil")
	}
	if p == nil || len(p.Files) == 0 {
		return nil, &ValidationError{Problems: []Problem{{Edit: -1, Kind: RefusedEmpty, Message: "the proposal changes no files"}}}
	}
	if len(p.Files) > MaxFiles {
		return nil, &ValidationError{Problems: []Problem{{Edit: -1, Kind: RefusedTooLarge, Message: fmt.Sprintf("the proposal changes %d files; at most %d are accepted at once", len(p.Files), MaxFiles)}}}
	}
	var probs []Problem
	bad := func(pth string, kind RefusalKind, format string, args ...any) {
		probs = append(probs, Problem{Path: pth, Edit: -1, Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	files := make([]FileChange, len(p.Files))
	copy(files, p.Files)
	var all []string
	for i := range files {
		f := &files[i]
		clean, err := CheckPath(f.Path)
		if err != nil {
			bad(f.Path, RefusedPath, "%v", err)
			continue
		}
		f.Path = clean
		all = append(all, clean)
		if f.Operation == OpRename {
			nc, err := CheckPath(f.NewPath)
			if err != nil {
				bad(f.NewPath, RefusedPath, "rename target: %v", err)
				continue
			}
			f.NewPath = nc
			all = append(all, nc)
		}
		if _, err := gitMode(f.Mode); err != nil {
			bad(f.Path, RefusedMode, "%v", err)
		}
	}
	probs = append(probs, conflicts(all)...)
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	plan := &Plan{ChangeID: NewChangeID(), Proposal: p}
	for i := range files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
		pf, fileProbs := a.planFile(ctx, &files[i])
		probs = append(probs, fileProbs...)
		if len(fileProbs) == 0 {
			plan.Files = append(plan.Files, pf)
		}
	}
	probs = append(probs, sameFiles(plan.Files)...)
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	return plan, nil
}

// sameFiles finds two paths of a plan that resolve to the same file
// through a symbolic link: the second write would silently replace the
// first, and the snapshots would hold one file twice.
func sameFiles(files []PlannedFile) []Problem {
	var out []Problem
	seen := map[string]string{}
	for _, f := range files {
		for _, p := range []pinnedPath{f.pin, f.newPin} {
			if !p.valid() {
				continue
			}
			k := strings.ToLower(p.resolved)
			if prev, ok := seen[k]; ok {
				out = append(out, Problem{Path: p.rel, Edit: -1, Kind: RefusedConflict,
					Message: fmt.Sprintf("the path is the same file as %q (through a symbolic link); change it once", prev)})
				continue
			}
			seen[k] = p.rel
		}
	}
	return out
}

// planFile validates one file and computes its new content.
func (a *Applier) planFile(ctx context.Context, f *FileChange) (PlannedFile, []Problem) {
	var probs []Problem
	bad := func(pth string, kind RefusalKind, format string, args ...any) (PlannedFile, []Problem) {
		probs = append(probs, Problem{Path: pth, Edit: -1, Kind: kind, Message: fmt.Sprintf(format, args...)})
		return PlannedFile{}, probs
	}
	// refused keeps a judged refusal whole, with its cause for errors.Is.
	refused := func(pth string, p *Problem) (PlannedFile, []Problem) {
		p.Path, p.Edit = pth, -1
		probs = append(probs, *p)
		return PlannedFile{}, probs
	}
	pf := PlannedFile{Path: f.Path, NewPath: f.NewPath, Operation: f.Operation}
	pin, prob := a.pinWritable(ctx, f.Path)
	if prob != nil {
		return refused(f.Path, prob)
	}
	pf.pin = pin
	if f.NewPath != "" {
		npin, prob := a.pinWritable(ctx, f.NewPath)
		if prob != nil {
			return refused(f.NewPath, prob)
		}
		if _, err := a.FS.Lstat(f.NewPath); !errors.Is(err, fs.ErrNotExist) {
			return bad(f.NewPath, RefusedExists, "the rename target already exists")
		}
		target, err := a.readAt(npin)
		if err != nil || target.Exists {
			return bad(f.NewPath, RefusedExists, "the rename target already exists")
		}
		pf.newPin = npin
	}
	// The name itself is looked at, not followed: a proposal edits the
	// file a path names, never the target of a link.
	info, err := a.FS.Lstat(f.Path)
	switch {
	case err == nil:
		pf.Existed = true
		if info.Mode()&fs.ModeSymlink != 0 {
			return bad(f.Path, RefusedNotRegular, "the path is a symbolic link; proposals edit regular files only")
		}
		if !info.Mode().IsRegular() {
			return bad(f.Path, RefusedNotRegular, "the path is not a regular file")
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return bad(f.Path, RefusedPath, "cannot inspect the path: %v", err)
	}
	if f.Operation == "" {
		f.Operation = OpAdd
		if pf.Existed {
			f.Operation = OpModify
		}
		pf.Operation = f.Operation
	}
	if f.Operation == OpAdd && pf.Existed {
		return bad(f.Path, RefusedExists, "the file already exists; modify it with edits instead of adding it")
	}
	if f.Operation != OpAdd && !pf.Existed {
		return bad(f.Path, RefusedMissing, "the file does not exist")
	}
	mode, _ := gitMode(f.Mode)
	if f.Operation == OpAdd {
		if f.Content == nil {
			return bad(f.Path, RefusedEmpty, "a new file needs its content")
		}
		if p := placeholderProblem(nil, splitText(*f.Content)); p != nil {
			return bad(f.Path, p.Kind, "%s", p.Message)
		}
		if mode == 0 {
			mode = 0o644
		}
		pf.NewContent, pf.NewMode = contentDoc(*f.Content, nil).bytes(), mode
		if int64(len(pf.NewContent)) > a.maxBytes() {
			return bad(f.Path, RefusedTooLarge, "the new content is larger than %d bytes", a.maxBytes())
		}
		return pf, nil
	}
	// The content is read through the pinned path, the one Apply will
	// check and write.
	cur, err := a.readAt(pin)
	if err != nil {
		if errors.Is(err, ErrChanged) || errors.Is(err, ErrNotRegular) || errors.Is(err, ErrHardLink) {
			return refused(f.Path, problemOf(err, ""))
		}
		return bad(f.Path, RefusedTooLarge, "cannot read the file: %v", err)
	}
	if !cur.Exists {
		return bad(f.Path, RefusedMissing, "the file does not exist")
	}
	old := cur.Content
	pf.OldContent, pf.OldMode = old, cur.Mode
	if f.BaseSHA256 != "" {
		want := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(f.BaseSHA256), "sha256:"))
		if got := SHA256Hex(old); got != want {
			return bad(f.Path, RefusedStale, "the file changed since you read it (its sha256 is now %s, you saw %s); read it again and propose the change again", got, want)
		}
	}
	pf.NewMode = pf.OldMode
	if mode != 0 {
		pf.NewMode = mode
	}
	if f.Operation == OpDelete {
		return pf, nil
	}
	d := parseDoc(old)
	switch {
	case f.Content != nil:
		if p := placeholderProblem(d.lines, splitText(*f.Content)); p != nil {
			return bad(f.Path, p.Kind, "%s", p.Message)
		}
		newLines := contentDoc(*f.Content, nil).lines
		repl, from, _ := buildReplacement(d.lines, newLines, 0, d.lines, func(s string) (string, bool) { return s, true })
		d.splice(0, len(d.lines), repl, from)
		if len(d.lines) == 0 {
			d.bom = false
		}
		pf.Edits = append(pf.Edits, EditResult{Index: 0, Step: StepWholeFile, Line: 1})
	case len(f.Edits) > 0:
		results, editProbs := applyEdits(d, f.Path, f.Edits)
		if len(editProbs) > 0 {
			return PlannedFile{}, editProbs
		}
		pf.Edits = results
	case f.Operation == OpModify && pf.NewMode == pf.OldMode:
		return bad(f.Path, RefusedEmpty, "the change for this file has no edits")
	}
	pf.NewContent = d.bytes()
	if int64(len(pf.NewContent)) > a.maxBytes() {
		return bad(f.Path, RefusedTooLarge, "the new content is larger than %d bytes", a.maxBytes())
	}
	return pf, nil
}

// applyEdits runs the ladder for each edit in order on d. All edits are
// tried, so the model hears about every failure at once.
func applyEdits(d *doc, pth string, edits []Edit) ([]EditResult, []Problem) {
	var results []EditResult
	var probs []Problem
	delta := 0
	for i, e := range edits {
		hint := -1
		if e.LineHint > 0 {
			hint = e.LineHint - 1 + delta
		}
		loc, prob := locateEdit(d.lines, e, hint)
		if prob != nil {
			prob.Path, prob.Edit, prob.Search = pth, i, e.Search
			probs = append(probs, *prob)
			continue
		}
		if loc.step == StepAlreadyApplied {
			results = append(results, EditResult{Index: i, Step: loc.step, Line: loc.start + 1, NoOp: true})
			continue
		}
		d.splice(loc.start, loc.n, loc.repl, loc.from)
		delta += len(loc.repl) - loc.n
		results = append(results, EditResult{Index: i, Step: loc.step, Line: loc.start + 1})
	}
	return results, probs
}

// checkWritable runs the built-in rules on the resolved path and the
// guard on both the given and the resolved path.
func (a *Applier) checkWritable(ctx context.Context, rel string) *Problem {
	_, p := a.judge(ctx, rel)
	return p
}

// judge is checkWritable returning the resolved path it judged, the one
// the applier then pins and acts on.
func (a *Applier) judge(ctx context.Context, rel string) (string, *Problem) {
	resolved, err := a.resolveRel(rel)
	if err != nil {
		return "", &Problem{Kind: RefusedPath, Message: fmt.Sprintf("the path does not stay inside the workspace: %v", err)}
	}
	if resolved != rel {
		if _, err := CheckPath(resolved); err != nil {
			return "", &Problem{Kind: RefusedPath, Message: fmt.Sprintf("the path resolves through a symbolic link to %q: %v", resolved, err)}
		}
	}
	if a.Guard != nil {
		for _, p := range []string{rel, resolved} {
			if err := a.Guard.CheckWrite(ctx, p); err != nil {
				return "", &Problem{Kind: RefusedProtected, Message: fmt.Sprintf("the path is protected: %v", err)}
			}
			if resolved == rel {
				break
			}
		}
	}
	return resolved, nil
}

// resolveRel resolves symlinks in rel inside the workspace. For a path
// that does not exist yet it resolves the nearest existing parent.
func (a *Applier) resolveRel(rel string) (string, error) {
	rest := ""
	cur := rel
	for {
		abs, err := a.FS.Resolve(cur)
		if err == nil {
			r, err := a.FS.Rel(abs)
			if err != nil {
				return "", err
			}
			r = strings.TrimPrefix(path.Clean(strings.ReplaceAll(r, `\`, "/")), "./")
			if rest == "" {
				return r, nil
			}
			if r == "." || r == "" {
				return rest, nil
			}
			return r + "/" + rest, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// A name that exists but does not resolve is a dangling symlink:
		// writing through it could create a file anywhere.
		if _, lerr := a.FS.Lstat(cur); lerr == nil {
			return "", fmt.Errorf("%s is a symbolic link that does not resolve", cur)
		}
		dir, base := path.Split(cur)
		if rest == "" {
			rest = base
		} else {
			rest = base + "/" + rest
		}
		cur = strings.TrimSuffix(dir, "/")
		if cur == "" {
			return rest, nil
		}
	}
}

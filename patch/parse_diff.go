package patch

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/kaizen-code/kz/internal/diff"
)

// ParseEnvelope reads the apply_patch envelope:
//
//	*** Begin Patch
//	*** Add File: path      (+ lines)
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path   (optional, right after Update)
//	@@ optional anchor line
//	 context / -removed / +added
//	*** End of File         (optional: the hunk ends at the end of the file)
//	*** End Patch
//
// A missing "*** End Patch" means the output was cut off and is refused.
func ParseEnvelope(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	lines := strings.Split(text, "\n")
	begin := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			begin = i
			break
		}
	}
	if begin < 0 {
		return nil, ErrNoProposal
	}
	p := &Proposal{Format: FormatEnvelope}
	index := map[string]int{}
	end := -1
	var cur *FileChange
	var h hunkBuilder
	var flushErr error
	flush := func() {
		if cur != nil && h.started() {
			if e, ok := h.edit(); ok {
				cur.Edits = append(cur.Edits, e)
			} else if flushErr == nil {
				flushErr = fmt.Errorf("a hunk of %s changes nothing: %w", cur.Path, ErrMalformed)
			}
		}
		h = hunkBuilder{}
	}
	for i := begin + 1; i < len(lines) && end < 0; i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		header := func(prefix string) (string, bool) {
			if !strings.HasPrefix(t, prefix) {
				return "", false
			}
			return strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(t, prefix)), "./"), true
		}
		if path, ok := header("*** Add File:"); ok {
			flush()
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("envelope line %d: %s appears twice: %w", i+1, path, ErrMalformed)
			}
			cur = changeFor(p, index, path, OpAdd)
			var body []string
			for i+1 < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "*** ") {
				i++
				body = append(body, strings.TrimPrefix(lines[i], "+"))
			}
			c := joinLines(trimTrailingEmpty(body))
			cur.Content = &c
			cur = nil
			continue
		}
		if path, ok := header("*** Delete File:"); ok {
			flush()
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("envelope line %d: %s appears twice: %w", i+1, path, ErrMalformed)
			}
			changeFor(p, index, path, OpDelete)
			cur = nil
			continue
		}
		if path, ok := header("*** Update File:"); ok {
			flush()
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("envelope line %d: %s appears twice: %w", i+1, path, ErrMalformed)
			}
			cur = changeFor(p, index, path, OpModify)
			continue
		}
		if path, ok := header("*** Move to:"); ok {
			if cur == nil || len(cur.Edits) > 0 || h.started() {
				return nil, fmt.Errorf("envelope line %d: *** Move to: must follow *** Update File: %w", i+1, ErrMalformed)
			}
			cur.Operation, cur.NewPath = OpRename, path
			continue
		}
		switch {
		case t == "*** End Patch":
			flush()
			end = i
			continue
		case t == "*** End of File":
			h.atEOF = true
			flush()
			continue
		case strings.HasPrefix(t, "***"):
			return nil, fmt.Errorf("envelope line %d: unknown header %q: %w", i+1, t, ErrMalformed)
		}
		if cur == nil {
			if t == "" {
				continue
			}
			return nil, fmt.Errorf("envelope line %d: hunk line outside an Update File section: %w", i+1, ErrMalformed)
		}
		if strings.HasPrefix(l, "@@") {
			flush()
			h.anchor = strings.TrimSpace(strings.TrimPrefix(l, "@@"))
			continue
		}
		if err := h.add(l); err != nil {
			return nil, fmt.Errorf("envelope line %d: %w", i+1, err)
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("no *** End Patch line: %w", ErrTruncated)
	}
	if flushErr != nil {
		return nil, flushErr
	}
	if len(p.Files) == 0 {
		return nil, ErrNoProposal
	}
	metadata(p, lines, func(i int) bool { return i >= begin && i <= end })
	return p, nil
}

// hunkBuilder accumulates " ", "-" and "+" lines into one Edit.
type hunkBuilder struct {
	search, replace []string
	changed         bool
	anchor          string
	atEOF           bool
	n               int
}

func (h *hunkBuilder) started() bool { return h.n > 0 }

func (h *hunkBuilder) add(l string) error {
	h.n++
	switch {
	case l == "":
		// Models drop the leading space of blank context lines.
		h.search = append(h.search, "")
		h.replace = append(h.replace, "")
	case l[0] == ' ':
		h.search = append(h.search, l[1:])
		h.replace = append(h.replace, l[1:])
	case l[0] == '-':
		h.search = append(h.search, l[1:])
		h.changed = true
	case l[0] == '+':
		h.replace = append(h.replace, l[1:])
		h.changed = true
	case l[0] == '\\':
		// "\ No newline at end of file": the file keeps its own state.
	default:
		return fmt.Errorf("hunk line %q does not start with ' ', '-' or '+': %w", truncate(l, 60), ErrMalformed)
	}
	return nil
}

// edit returns the hunk as an Edit; a hunk without changes is dropped.
func (h *hunkBuilder) edit() (Edit, bool) {
	if !h.changed {
		return Edit{}, false
	}
	return Edit{Search: joinLines(h.search), Replace: joinLines(h.replace), Anchor: h.anchor, AtEOF: h.atEOF}, true
}

func trimTrailingEmpty(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ParseUnified reads a proposal written as unified diffs (git or plain).
// diff.Parse reads the diff; what a proposal needs beyond what a review
// shows is checked here. Hunk line numbers are kept only as hints; a hunk
// the text ends inside (its header counts more lines) means the answer was
// cut off. Git's extended headers give file modes, new and deleted files
// and renames. Binary diffs, hunks without a ---/+++ file and files named
// twice are refused, each at its line; diff lines outside any hunk are
// prose.
func ParseUnified(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	// The final newline ends the last line; it does not start an empty
	// line (which a hunk would read as blank context).
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	p := &Proposal{Format: FormatUnified}
	index := map[string]int{}
	inBlock := make([]bool, len(lines))
	for _, f := range diff.Parse(text) {
		if err := unifiedChange(p, index, f, inBlock); err != nil {
			return nil, err
		}
	}
	if len(p.Files) == 0 {
		return nil, ErrNoProposal
	}
	for i := range p.Files {
		f := &p.Files[i]
		if f.Operation == OpAdd && f.Content == nil {
			empty := ""
			f.Content = &empty
		}
	}
	metadata(p, lines, func(i int) bool { return inBlock[i] })
	return p, nil
}

// unifiedChange adds the change of one file of a diff to p, and marks its
// ---/+++ pair and hunks in inBlock (0-based lines) so that no SUMMARY:
// or VERIFY: is read from them. Its problems are checked in the order of
// their lines, so that the first in the text is the one reported.
func unifiedChange(p *Proposal, index map[string]int, f diff.File, inBlock []bool) error {
	binaryBefore := func(line int) error {
		if f.Binary && f.BinaryLine < line {
			return fmt.Errorf("line %d: binary diffs are not supported: %w", f.BinaryLine, ErrMalformed)
		}
		return nil
	}
	var cur *FileChange
	if f.RenameFrom != "" && f.RenameTo != "" {
		// A pure rename has no ---/+++ lines.
		cur = changeFor(p, index, f.RenameFrom, OpRename)
		cur.NewPath = f.RenameTo
		if cur.Mode == "" {
			cur.Mode = f.NewMode
		}
	}
	if f.HeaderLine > 0 {
		if err := binaryBefore(f.HeaderLine); err != nil {
			return err
		}
		inBlock[f.HeaderLine-1], inBlock[f.HeaderLine] = true, true
		c, err := unifiedFile(p, index, f)
		if err != nil {
			return fmt.Errorf("line %d: %w", f.HeaderLine, err)
		}
		cur = c
	}
	for _, h := range f.Hunks {
		if h.Header == "" {
			continue // diff lines outside a hunk: prose
		}
		if err := binaryBefore(h.Src.Line); err != nil {
			return err
		}
		for i := h.Src.Line - 1; i < h.Src.EndLine; i++ {
			inBlock[i] = true
		}
		if cur == nil {
			return fmt.Errorf("line %d: hunk without a ---/+++ file header: %w", h.Src.Line, ErrMalformed)
		}
		if err := unifiedHunk(cur, h); err != nil {
			return err
		}
	}
	return binaryBefore(math.MaxInt)
}

// unifiedFile returns the change a ---/+++ pair names, refusing a path
// named twice (but for the pair of a rename its git headers announced).
func unifiedFile(p *Proposal, index map[string]int, f diff.File) (*FileChange, error) {
	oldPath, newPath := f.OldPath, f.NewPath
	switch {
	case oldPath == diff.DevNull && newPath == diff.DevNull:
		return nil, fmt.Errorf("both sides are /dev/null: %w", ErrMalformed)
	case oldPath == diff.DevNull:
		if _, dup := index[newPath]; dup {
			return nil, fmt.Errorf("%s appears twice: %w", newPath, ErrMalformed)
		}
		fc := changeFor(p, index, newPath, OpAdd)
		fc.Mode = cmp.Or(f.NewFileMode, f.NewMode)
		return fc, nil
	case newPath == diff.DevNull:
		if _, dup := index[oldPath]; dup {
			return nil, fmt.Errorf("%s appears twice: %w", oldPath, ErrMalformed)
		}
		return changeFor(p, index, oldPath, OpDelete), nil
	}
	if i, ok := index[oldPath]; ok && p.Files[i].Operation == OpRename && p.Files[i].NewPath == newPath {
		return &p.Files[i], nil
	}
	if _, dup := index[oldPath]; dup {
		return nil, fmt.Errorf("%s appears twice: %w", oldPath, ErrMalformed)
	}
	op := OpModify
	if oldPath != newPath {
		op = OpRename
	}
	fc := changeFor(p, index, oldPath, op)
	if op == OpRename {
		fc.NewPath = newPath
	}
	fc.Mode = f.NewMode
	return fc, nil
}

// unifiedHunk adds one hunk to cur: a new file's content, or an edit
// whose search text is the hunk's old side and whose replacement is its
// new side.
func unifiedHunk(cur *FileChange, h diff.Hunk) error {
	if h.Src.BadHeader || max(h.OldStart, h.NewStart) > MaxInputLines*10 || max(h.OldLines, h.NewLines) > MaxInputLines {
		return fmt.Errorf("line %d: bad hunk header %q: %w", h.Src.Line, truncate(h.Header, 60), ErrMalformed)
	}
	var search, replace []string
	changed := false
	for _, l := range h.Lines {
		// Proposal text has LF endings (normalizeNewlines); a CR left
		// at the end of a line is the line's own.
		text := strings.TrimSuffix(l.Text, "\n")
		if l.Op != diff.Add {
			search = append(search, text)
		}
		if l.Op != diff.Delete {
			replace = append(replace, text)
		}
		changed = changed || l.Op != diff.Context
	}
	if h.Src.Truncated {
		return fmt.Errorf("hunk at line %d for %s ends early (%d of %d old lines, %d of %d new lines): %w",
			h.Src.Line, cur.Path, len(search), h.OldLines, len(replace), h.NewLines, ErrTruncated)
	}
	switch cur.Operation {
	case OpAdd:
		if len(search) > 0 {
			return fmt.Errorf("hunk at line %d: a new file cannot have context or removed lines: %w", h.Src.Line, ErrMalformed)
		}
		c := ""
		if cur.Content != nil {
			c = *cur.Content
		}
		c += joinLines(replace)
		cur.Content = &c
		return nil
	case OpDelete:
		return nil
	}
	if !changed {
		return fmt.Errorf("hunk at line %d for %s changes nothing (cut off?): %w", h.Src.Line, cur.Path, ErrMalformed)
	}
	cur.Edits = append(cur.Edits, Edit{Search: joinLines(search), Replace: joinLines(replace), LineHint: h.OldStart})
	return nil
}

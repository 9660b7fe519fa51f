package tools

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// Kept is what the person kept of one file of a write they reviewed.
type Kept struct {
	// Whole says the file is taken as the runtime proposed it; Content is
	// then nil.
	Whole bool
	// Content is the file's whole new content otherwise: the old content
	// with only the kept hunks applied, the content the person wrote, or
	// the old content itself when they rejected the file.
	Content []byte
}

// Unchanged says the person kept nothing of the file's change.
func (k Kept) Unchanged(old []byte) bool { return !k.Whole && string(k.Content) == string(old) }

// KeptContent resolves an answer's selection (engine.Answer.Patch) for one
// file of a write whose request said engine.SelectionContent. old is the
// content the runtime computed fileDiff from, fileDiff that file's section
// of the request's Diff: the review numbered its hunks with
// diff.FileHunks of the same text and named the file as diff.Parse does,
// so an index here is the hunk the person saw.
//
// A nil selection takes everything. A selection that does not name the
// file rejects it (its content stays old). Hunks that no longer match old
// are an error, never a guess.
func KeptContent(sel *engine.PatchSelection, old []byte, fileDiff string) (Kept, error) {
	if sel == nil {
		return Kept{Whole: true}, nil
	}
	name := DiffName(fileDiff)
	i := slices.IndexFunc(sel.Files, func(f engine.FileSelection) bool { return f.Path == name })
	if i < 0 {
		return Kept{Content: old}, nil
	}
	fs := sel.Files[i]
	switch {
	case fs.Content != nil:
		return Kept{Content: fs.Content}, nil
	case fs.Hunks == nil:
		return Kept{Whole: true}, nil
	}
	hunks := diff.FileHunks(fileDiff)
	keep := make(map[int]bool, len(fs.Hunks))
	for _, h := range fs.Hunks {
		if h < 0 || h >= len(hunks) {
			return Kept{}, fmt.Errorf("%s: the selection keeps hunk %d of %d", name, h+1, len(hunks))
		}
		keep[h] = true
	}
	out, err := diff.Apply(old, hunks, func(h int) bool { return keep[h] })
	if err != nil {
		return Kept{}, fmt.Errorf("%s: the kept hunks no longer match the file: %w", name, err)
	}
	return Kept{Content: out}, nil
}

// DiffName is the name the review gives the file of a one-file diff: its
// new path, or its old one for a deletion, as diff.Parse reads them.
func DiffName(fileDiff string) string {
	files := diff.Parse(fileDiff)
	if len(files) == 0 {
		return ""
	}
	if f := files[0]; f.NewPath != diff.DevNull && f.NewPath != "" {
		return f.NewPath
	}
	return files[0].OldPath
}

// Narrower is a call whose write can be narrowed to what the person kept
// of it in the review (engine.Answer.Patch); its request then says
// engine.SelectionContent. The executor runs the narrowed call instead.
type Narrower interface {
	Narrow(sel *engine.PatchSelection) (Call, error)
}

// Narrow implements Narrower: the same write, of the kept content, read
// against the content its diff was computed from.
func (c *writeCall) Narrow(sel *engine.PatchSelection) (Call, error) {
	if !c.selectable() {
		return nil, fmt.Errorf("%s is too large to take in part", c.t.rel)
	}
	k, err := KeptContent(sel, c.old, UnifiedDiff(c.t.rel, c.old, c.content, c.existed))
	switch {
	case err != nil:
		return nil, err
	case k.Whole:
		return c, nil
	case k.Unchanged(c.old) && c.existed:
		return nil, errors.New("the person rejected every change")
	}
	n := *c
	n.content = append([]byte{}, k.Content...)
	return &n, nil
}

// selectable says the write's diff has hunks to select: contents too
// large to diff get a summary instead (see unifiedDiff).
func (c *writeCall) selectable() bool {
	return len(c.old) <= maxDiffInput && len(c.content) <= maxDiffInput
}

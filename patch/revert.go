package patch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// ErrRevertConflict means a later change touched lines of the change
// being reverted: reverting would undo or mangle that later work.
var ErrRevertConflict = errors.New("later changes touched the same lines")

// revertWindow is how far (in lines) from where the change left it a hunk
// is looked for: later changes above it move it by their line counts.
const revertWindow = 10000

// RevertChange undoes an older change that is no longer the last one: each
// hunk of each file's diff is applied in reverse to the file as it is now,
// found by its exact lines (the change's new lines with their context)
// nearest to where the change put them. When a hunk's lines are no longer
// there, a later change touched them and the revert is refused with
// ErrRevertConflict naming the lines. Only modified files can be reverted
// this way; a file the change created, deleted or renamed is undone with
// Undo while the change is the last. The revert is written as a new change
// (snapshots, journal, all or none), so it can be undone in turn; its id
// is returned.
func RevertChange(ctx context.Context, a *Applier, files []engine.FileChange) (string, error) {
	if len(files) == 0 {
		return "", errors.New("revert: the change has no files")
	}
	plan := &Plan{ChangeID: NewChangeID()}
	for _, f := range files {
		if op := Operation(f.Operation); op != OpModify && op != "" {
			return "", fmt.Errorf("revert %s: a file the change %s can only be undone while the change is the last (/undo)", f.Path, pastTense(op))
		}
		if _, err := CheckPath(f.Path); err != nil {
			return "", fmt.Errorf("revert %s: %w", f.Path, err)
		}
		// The revert is judged now and acts on what was judged: the path
		// is pinned, read through the pin, and Apply writes through it.
		pin, p := a.pinWritable(ctx, f.Path)
		if p != nil {
			return "", fmt.Errorf("revert %s: %w", f.Path, problemError(p))
		}
		hunks, err := reversible(f.Diff)
		if err != nil {
			return "", fmt.Errorf("revert %s: the change's diff cannot be reversed: %w", f.Path, err)
		}
		cur, err := a.readAt(pin)
		if err != nil {
			return "", fmt.Errorf("revert %s: %w", f.Path, err)
		}
		if !cur.Exists {
			return "", fmt.Errorf("revert %s: the file was deleted after the change: %w", f.Path, ErrRevertConflict)
		}
		lines := strings.SplitAfter(string(cur.Content), "\n")
		if n := len(lines); n > 0 && lines[n-1] == "" {
			lines = lines[:n-1]
		}
		rev := make([]diff.Hunk, len(hunks))
		shift, pos := 0, 0
		for hi, h := range hunks {
			// The reversed hunk's old side is the change's new side, which
			// must still be in the file.
			r := h.Reverse()
			var want []string
			for _, l := range r.Lines {
				if l.Op != diff.Add {
					want = append(want, l.Text)
				}
			}
			newStart, _ := h.NewSpan()
			expect := newStart + shift
			at := findBlock(lines, want, expect, pos)
			if at < 0 {
				first, last := expect+1, expect+len(want)
				return "", fmt.Errorf("revert %s: lines %d–%d were changed again after this change: %w", f.Path, first, last, ErrRevertConflict)
			}
			shift += at - expect
			pos = at + len(want)
			// Where diff.Apply finds the old side: at the line after at,
			// or after line at for a side without lines.
			r.OldStart = at
			if len(want) > 0 {
				r.OldStart++
			}
			rev[hi] = r
		}
		content, err := diff.Apply(cur.Content, rev, nil)
		if err != nil {
			return "", fmt.Errorf("revert %s: %w", f.Path, err)
		}
		plan.Files = append(plan.Files, PlannedFile{Path: f.Path, Operation: OpModify, Existed: true, OldContent: cur.Content,
			OldMode: cur.Mode, NewContent: content, NewMode: cur.Mode, pin: pin})
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		return "", fmt.Errorf("revert: %w", err)
	}
	return plan.ChangeID, nil
}

// findBlock returns the index at or after from where want occurs in
// lines, the nearest to expect, or -1.
func findBlock(lines, want []string, expect, from int) int {
	match := func(at int) bool {
		if at < from || at+len(want) > len(lines) {
			return false
		}
		for i, w := range want {
			if lines[at+i] != w {
				return false
			}
		}
		return true
	}
	for d := 0; d <= revertWindow; d++ {
		if match(expect - d) {
			return expect - d
		}
		if d > 0 && match(expect+d) {
			return expect + d
		}
		if expect-d < from && expect+d > len(lines) {
			break
		}
	}
	return -1
}

func pastTense(op Operation) string {
	switch op {
	case OpAdd:
		return "created"
	case OpDelete:
		return "deleted"
	case OpRename:
		return "renamed"
	}
	return string(op) + "d"
}

// reversible returns the @@ hunks of a change's recorded diff, in order.
func reversible(text string) ([]diff.Hunk, error) {
	var hunks []diff.Hunk
	for _, f := range diff.Parse(text) {
		for _, h := range f.Hunks {
			switch {
			case h.Header == "":
				continue // not kz's own: diff lines without a header
			case h.Src.BadHeader:
				return nil, fmt.Errorf("bad hunk header %q", h.Header)
			}
			hunks = append(hunks, h)
		}
	}
	if len(hunks) == 0 {
		return nil, errors.New("it has no hunks")
	}
	return hunks, nil
}

package patch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaizen-code/kz/engine"
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
		hunks, err := parseHunks(f.Diff)
		if err != nil || len(hunks) == 0 {
			return "", fmt.Errorf("revert %s: the change's diff cannot be reversed: %v", f.Path, err)
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
		rev := make([]diffHunk, len(hunks))
		shift, pos := 0, 0
		for hi, h := range hunks {
			// The hunk's new side, which must still be in the file.
			var want []string
			r := diffHunk{added: h.removed, removed: h.added}
			for _, l := range h.lines {
				switch l.op {
				case '+':
					want = append(want, l.text)
					r.lines = append(r.lines, diffLine{op: '-', text: l.text})
				case '-':
					r.lines = append(r.lines, diffLine{op: '+', text: l.text})
				default:
					want = append(want, l.text)
					r.lines = append(r.lines, l)
				}
			}
			expect := h.newStart + shift
			at := findBlock(lines, want, expect, pos)
			if at < 0 {
				first, last := expect+1, expect+len(want)
				return "", fmt.Errorf("revert %s: lines %d–%d were changed again after this change: %w", f.Path, first, last, ErrRevertConflict)
			}
			shift += at - expect
			pos = at + len(want)
			r.oldStart = at
			rev[hi] = r
		}
		all := map[int]bool{}
		for i := range rev {
			all[i] = true
		}
		content, err := applyHunkSubset(cur.Content, rev, all)
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

// hunkNewStart reads the 0-based first new line of "@@ -a,b +c,d @@".
func hunkNewStart(header string) (int, error) {
	for _, f := range strings.Fields(header) {
		if !strings.HasPrefix(f, "+") {
			continue
		}
		a, b, hasCount := strings.Cut(f[1:], ",")
		start, err := strconv.Atoi(a)
		if err != nil {
			return 0, fmt.Errorf("bad hunk header %q: %w", strings.TrimSpace(header), err)
		}
		if hasCount && b == "0" {
			return start, nil // an empty new side names the line it follows
		}
		return start - 1, nil
	}
	return 0, fmt.Errorf("bad hunk header %q", strings.TrimSpace(header))
}

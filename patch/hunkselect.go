package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// diffHunk is one @@ section of a Preview diff, with each line's exact
// bytes (line ending included) so that a selection rebuilds the file
// byte for byte.
type diffHunk struct {
	oldStart int // 0-based index of the first old line the hunk covers
	newStart int // the same on the new side
	lines    []diffLine
	added    int
	removed  int
}

// parseHunks reads the hunks of a diff written by UnifiedDiff. It is
// strict: the diff is kz's own, so anything unexpected is an error rather
// than something to guess around.
func parseHunks(diff string) ([]diffHunk, error) {
	var hunks []diffHunk
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "@@ "):
			start, oldCount, err := hunkOldRange(l)
			if err != nil {
				return nil, err
			}
			// A hunk that removes nothing names the line it follows.
			if oldCount > 0 {
				start--
			}
			newStart, err := hunkNewStart(l)
			if err != nil {
				return nil, err
			}
			hunks = append(hunks, diffHunk{oldStart: start, newStart: newStart})
		case len(hunks) == 0:
			// Headers before the first hunk (---, +++, old mode, new mode).
			continue
		case strings.HasPrefix(l, `\ `):
			h := &hunks[len(hunks)-1]
			if n := len(h.lines); n > 0 {
				h.lines[n-1].text = strings.TrimSuffix(h.lines[n-1].text, "\n")
			}
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			h := &hunks[len(hunks)-1]
			h.lines = append(h.lines, diffLine{op: l[0], text: l[1:]})
			switch l[0] {
			case '+':
				h.added++
			case '-':
				h.removed++
			}
		default:
			return nil, fmt.Errorf("diff line %d: unexpected %q", i+1, strings.TrimSpace(l))
		}
	}
	return hunks, nil
}

// hunkOldRange reads the old side of "@@ -start,count +start,count @@".
func hunkOldRange(header string) (start, count int, err error) {
	f := strings.Fields(header)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") {
		return 0, 0, fmt.Errorf("bad hunk header %q", strings.TrimSpace(header))
	}
	a, b, hasCount := strings.Cut(f[1][1:], ",")
	if start, err = strconv.Atoi(a); err != nil {
		return 0, 0, fmt.Errorf("bad hunk header %q: %w", strings.TrimSpace(header), err)
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("bad hunk header %q: %w", strings.TrimSpace(header), err)
		}
	}
	return start, count, nil
}

// applyHunkSubset rebuilds a file from its old content, taking the new
// lines of the hunks in keep and the old lines of the others. Every
// hunk's old side must match the old content exactly where the diff says;
// a mismatch is an error, never a guess.
func applyHunkSubset(old []byte, hunks []diffHunk, keep map[int]bool) ([]byte, error) {
	oldLines := strings.SplitAfter(string(old), "\n")
	if n := len(oldLines); n > 0 && oldLines[n-1] == "" {
		oldLines = oldLines[:n-1]
	}
	var out bytes.Buffer
	out.Grow(len(old))
	pos := 0
	for hi, h := range hunks {
		if h.oldStart < pos || h.oldStart > len(oldLines) {
			return nil, fmt.Errorf("hunk %d starts at line %d, outside the file or before the previous hunk", hi+1, h.oldStart+1)
		}
		for _, l := range oldLines[pos:h.oldStart] {
			out.WriteString(l)
		}
		k := h.oldStart
		for _, l := range h.lines {
			if l.op == '+' {
				continue
			}
			if k >= len(oldLines) || oldLines[k] != l.text {
				return nil, fmt.Errorf("hunk %d does not match line %d of the file", hi+1, k+1)
			}
			k++
		}
		for _, l := range h.lines {
			if l.op == ' ' || (keep[hi] && l.op == '+') || (!keep[hi] && l.op == '-') {
				out.WriteString(l.text)
			}
		}
		pos = k
	}
	for _, l := range oldLines[pos:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}

// SelectHunks returns a copy of the plan in which each file named in keep
// (by its path or rename target) changes only the listed hunks of its
// Preview diff: 0-based indexes in diff order. Files not named are kept
// whole; a file named with no hunk is left out. The partial content is
// checked again before it replaces the planned one: its own diff against
// the old content must add and remove exactly the kept hunks' lines.
// Apply then re-checks every file against the disk as for any plan.
func (p *Plan) SelectHunks(keep map[string][]int) (*Plan, error) {
	out := &Plan{ChangeID: p.ChangeID, Proposal: p.Proposal}
	used := map[string]bool{}
	diffs := Preview(p)
	for i, f := range p.Files {
		name := f.Path
		idx, ok := keep[name]
		if !ok && f.NewPath != "" {
			name = f.NewPath
			idx, ok = keep[name]
		}
		if !ok {
			out.Files = append(out.Files, f)
			continue
		}
		used[name] = true
		if len(idx) == 0 {
			continue
		}
		hunks, err := parseHunks(diffs[i].Diff)
		if err != nil {
			return nil, fmt.Errorf("select hunks of %s: %w", name, err)
		}
		set := map[int]bool{}
		for _, h := range idx {
			if h < 0 || h >= len(hunks) {
				return nil, fmt.Errorf("select hunks of %s: no hunk %d (the change has %d)", name, h+1, len(hunks))
			}
			set[h] = true
		}
		if len(set) == len(hunks) {
			out.Files = append(out.Files, f)
			continue
		}
		if f.Operation != OpModify && f.Operation != OpRename {
			return nil, fmt.Errorf("select hunks of %s: a file to %s is accepted or rejected whole", name, f.Operation)
		}
		content, err := applyHunkSubset(f.OldContent, hunks, set)
		if err != nil {
			return nil, fmt.Errorf("select hunks of %s: %w", name, err)
		}
		wantA, wantR := 0, 0
		for h := range set {
			wantA += hunks[h].added
			wantR += hunks[h].removed
		}
		if _, a, r := UnifiedDiff("a", "b", f.OldContent, content); a != wantA || r != wantR {
			return nil, fmt.Errorf("select hunks of %s: the result adds %d and removes %d lines, the kept hunks %d and %d",
				name, a, r, wantA, wantR)
		}
		f.NewContent, f.Edits = content, nil
		out.Files = append(out.Files, f)
	}
	for name := range keep {
		if !used[name] {
			return nil, fmt.Errorf("select hunks of %q: not a file of this proposal", name)
		}
	}
	if len(out.Files) == 0 {
		return nil, errors.New("select hunks: nothing is left to apply")
	}
	return out, nil
}

var _ engine.HunkApplier = (*prepared)(nil)

// ApplyHunks implements engine.HunkApplier: it applies the files in paths
// (all when empty) with only the listed hunks of those named in hunks,
// and returns the diffs of what it really wrote.
func (p *prepared) ApplyHunks(ctx context.Context, paths []string, hunks map[string][]int) ([]engine.FileChange, error) {
	plan := p.plan
	var err error
	if len(paths) > 0 {
		if plan, err = plan.Select(paths...); err != nil {
			return nil, err
		}
	}
	if len(hunks) > 0 {
		for name := range hunks {
			if len(paths) > 0 && !slices.Contains(paths, name) {
				return nil, fmt.Errorf("select hunks of %q: the file is not among the accepted ones", name)
			}
		}
		if plan, err = plan.SelectHunks(hunks); err != nil {
			return nil, err
		}
	}
	if _, err := p.r.Applier.Apply(ctx, plan); err != nil {
		return nil, err
	}
	return changes(Preview(plan), nil), nil
}

var _ engine.ContentApplier = (*prepared)(nil)

// ApplyContents implements engine.ContentApplier: like ApplyHunks, but the
// files named in contents get the content the person wrote in their
// editor from the review instead of the proposal's. Each such content is
// checked as a proposal's would be (the path writable by the gate, the
// size limit) and Apply checks every file against the disk.
func (p *prepared) ApplyContents(ctx context.Context, paths []string, hunks map[string][]int, contents map[string]string) ([]engine.FileChange, error) {
	plan := p.plan
	var err error
	if len(paths) > 0 {
		if plan, err = plan.Select(paths...); err != nil {
			return nil, err
		}
	}
	if len(hunks) > 0 {
		if plan, err = plan.SelectHunks(hunks); err != nil {
			return nil, err
		}
	}
	out := &Plan{ChangeID: plan.ChangeID, Proposal: plan.Proposal, Files: slices.Clone(plan.Files)}
	used := map[string]bool{}
	for i := range out.Files {
		f := &out.Files[i]
		name := f.Path
		c, ok := contents[name]
		if !ok && f.NewPath != "" {
			name = f.NewPath
			c, ok = contents[name]
		}
		if !ok {
			continue
		}
		used[name] = true
		if f.Operation == OpDelete {
			return nil, fmt.Errorf("edited content for %s: the proposal deletes it", name)
		}
		if int64(len(c)) > p.r.Applier.maxBytes() {
			return nil, fmt.Errorf("edited content for %s: %d bytes, more than the limit of %d", name, len(c), p.r.Applier.maxBytes())
		}
		if pr := p.r.Applier.checkWritable(ctx, name); pr != nil {
			return nil, fmt.Errorf("edited content for %s: %s", name, pr.Message)
		}
		f.NewContent, f.Edits = []byte(c), nil
	}
	for name := range contents {
		if !used[name] {
			return nil, fmt.Errorf("edited content for %q: not an accepted file of this proposal", name)
		}
	}
	if _, err := p.r.Applier.Apply(ctx, out); err != nil {
		return nil, err
	}
	return changes(Preview(out), nil), nil
}

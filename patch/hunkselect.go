package patch

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// SelectHunks returns a copy of the plan in which each file named in keep
// (by its path or rename target) changes only the listed hunks of its
// Preview diff: 0-based indexes into diff.FileHunks of that diff, the list
// the review numbers. Files not named are kept whole; a file named with no
// hunk is left out. The kept hunks are rebuilt onto the validated old
// content by diff.Apply, which refuses a hunk that does not match it;
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
		hunks := diff.FileHunks(diffs[i].Diff)
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
		content, err := diff.Apply(f.OldContent, hunks, func(i int) bool { return set[i] })
		if err != nil {
			return nil, fmt.Errorf("select hunks of %s: %w", name, err)
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

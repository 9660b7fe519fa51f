package patch

import (
	"context"
	"fmt"
	"slices"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// selectPlan returns the plan of what sel takes of p: the accepted files,
// each whole, with only its kept hunks, or with the content the person
// wrote. partial says some file is not taken as proposed, so its diff must
// be computed again. Each edited content is checked as a proposal's would
// be (the path writable by the gate, the size limit); Apply then checks
// every file against the disk as for any plan.
func (p *prepared) selectPlan(ctx context.Context, sel engine.PatchSelection) (plan *Plan, partial bool, err error) {
	if len(sel.Files) == 0 {
		return p.plan, false, nil
	}
	if plan, err = p.plan.Select(sel.Paths()...); err != nil {
		return nil, false, err
	}
	plan.Files = slices.Clone(plan.Files)
	for _, s := range sel.Files {
		if s.Hunks == nil && s.Content == nil {
			continue
		}
		i := slices.IndexFunc(plan.Files, func(f PlannedFile) bool { return f.Path == s.Path || (f.NewPath != "" && f.NewPath == s.Path) })
		if i < 0 {
			return nil, false, fmt.Errorf("select %q: not a file of this proposal", s.Path)
		}
		f := &plan.Files[i]
		if s.Content != nil {
			err = p.checkContent(ctx, f, s.Path, s.Content)
		} else {
			err = p.selectHunks(f, s.Path, s.Hunks)
		}
		if err != nil {
			return nil, false, err
		}
		partial = true
	}
	return plan, partial, nil
}

// selectHunks makes f change only the listed hunks of its diff: 0-based
// indexes into diff.FileHunks of the diff Files gave for it, which is how
// the review numbered them. The kept hunks are rebuilt onto the validated
// old content by diff.Apply, which refuses a hunk that does not match it.
// Listing every hunk takes the file whole.
func (p *prepared) selectHunks(f *PlannedFile, name string, keep []int) error {
	if len(keep) == 0 {
		return fmt.Errorf("select hunks of %s: no hunk is kept; leave the file out instead", name)
	}
	hunks := diff.FileHunks(p.diffOf(f.Path))
	set := make(map[int]bool, len(keep))
	for _, h := range keep {
		if h < 0 || h >= len(hunks) {
			return fmt.Errorf("select hunks of %s: no hunk %d (the change has %d)", name, h+1, len(hunks))
		}
		set[h] = true
	}
	if len(set) == len(hunks) {
		return nil
	}
	if f.Operation != OpModify && f.Operation != OpRename {
		return fmt.Errorf("select hunks of %s: a file to %s is accepted or rejected whole", name, f.Operation)
	}
	content, err := diff.Apply(f.OldContent, hunks, func(i int) bool { return set[i] })
	if err != nil {
		return fmt.Errorf("select hunks of %s: %w", name, err)
	}
	f.NewContent, f.Edits = content, nil
	return nil
}

// diffOf returns the diff Preview wrote for the planned file at path, the
// one Files hands to the review.
func (p *prepared) diffOf(path string) string {
	for _, d := range p.diffs {
		if d.Path == path {
			return d.Diff
		}
	}
	return ""
}

// checkContent makes f write content, the person's own for the file,
// instead of the proposal's.
func (p *prepared) checkContent(ctx context.Context, f *PlannedFile, name string, content []byte) error {
	if f.Operation == OpDelete {
		return fmt.Errorf("edited content for %s: the proposal deletes it", name)
	}
	if int64(len(content)) > p.r.Applier.maxBytes() {
		return fmt.Errorf("edited content for %s: %d bytes, more than the limit of %d", name, len(content), p.r.Applier.maxBytes())
	}
	if pr := p.r.Applier.checkWritable(ctx, name); pr != nil {
		return fmt.Errorf("edited content for %s: %s", name, pr.Message)
	}
	f.NewContent, f.Edits = slices.Clone(content), nil
	return nil
}

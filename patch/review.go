package patch

import (
	"context"
	"errors"
	"slices"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// Reviewer is the engine's Patcher over an Applier: it turns a model's
// answer into a validated plan with diffs for review, applies the accepted
// files, and runs verification commands through Run.
type Reviewer struct {
	Applier *Applier
	// Run executes one verification command in the workspace (the session
	// has already passed it through the gate) and returns its combined
	// output and exit code.
	Run func(ctx context.Context, command string) (string, int, error)
}

var _ engine.Patcher = (*Reviewer)(nil)

// Prepare implements engine.Patcher.
func (r *Reviewer) Prepare(ctx context.Context, text string) (engine.PreparedPatch, error) {
	p, err := Parse(text)
	if errors.Is(err, ErrNoProposal) {
		return nil, engine.ErrNoProposal
	}
	if err != nil {
		return nil, err
	}
	plan, err := r.Applier.Validate(ctx, p)
	if err != nil {
		return nil, err
	}
	return &prepared{r: r, plan: plan, diffs: Preview(plan)}, nil
}

// Feedback implements engine.Patcher.
func (r *Reviewer) Feedback(err error) string { return FormatFeedback(err) }

type prepared struct {
	r     *Reviewer
	plan  *Plan
	diffs []FileDiff
}

func (p *prepared) ID() string      { return p.plan.ChangeID }
func (p *prepared) Summary() string { return p.plan.Proposal.Summary }

func (p *prepared) Verification() []string { return p.plan.Proposal.Verification }

func (p *prepared) Files() []engine.FileChange { return changes(p.diffs, nil) }

func (p *prepared) Apply(ctx context.Context, paths []string) ([]engine.FileChange, error) {
	plan := p.plan
	if len(paths) > 0 {
		var err error
		if plan, err = plan.Select(paths...); err != nil {
			return nil, err
		}
	}
	if _, err := p.r.Applier.Apply(ctx, plan); err != nil {
		return nil, err
	}
	return changes(p.diffs, paths), nil
}

func (p *prepared) Verify(ctx context.Context, command string) (string, int, error) {
	if p.r.Run == nil {
		return "", -1, errors.New("no command runner is configured for verification")
	}
	return p.r.Run(ctx, command)
}

// changes converts previews, keeping only the listed paths when given.
func changes(diffs []FileDiff, only []string) []engine.FileChange {
	out := make([]engine.FileChange, 0, len(diffs))
	for _, d := range diffs {
		if len(only) > 0 && !slices.Contains(only, d.Path) && (d.NewPath == "" || !slices.Contains(only, d.NewPath)) {
			continue
		}
		path := d.Path
		if d.NewPath != "" {
			path = d.NewPath
		}
		out = append(out, engine.FileChange{Path: path, Operation: string(d.Operation), Diff: d.Diff, Added: d.Added, Removed: d.Removed})
	}
	return out
}

// StoreSnapshots keeps a session's patch snapshots in kz's store, so undo
// works across restarts.
type StoreSnapshots struct {
	Store     *store.Store
	SessionID string
}

// SaveSnapshot implements SnapshotSaver.
func (s StoreSnapshots) SaveSnapshot(ctx context.Context, sn Snapshot) error {
	return s.Store.SaveSnapshot(ctx, store.Snapshot{SessionID: s.SessionID, ChangeID: sn.ChangeID, Path: sn.Path,
		Existed: sn.Existed, Content: sn.Content, Mode: sn.Mode, AfterExists: sn.AfterExists, AfterSHA256: sn.AfterSHA256})
}

// LoadSnapshots implements SnapshotLoader.
func (s StoreSnapshots) LoadSnapshots(ctx context.Context, changeID string) ([]Snapshot, error) {
	rows, err := s.Store.Snapshots(ctx, changeID)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(rows))
	for _, r := range rows {
		out = append(out, Snapshot{ChangeID: r.ChangeID, Path: r.Path, Existed: r.Existed, Content: r.Content, Mode: r.Mode,
			AfterExists: r.AfterExists, AfterSHA256: r.AfterSHA256})
	}
	return out, nil
}

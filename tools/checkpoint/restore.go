package checkpoint

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kaizen-code/kz/patch"
)

// Record is a stored checkpoint as a restore reads it.
type Record struct {
	ID         int64
	TurnID     int64
	ToolCallID string
	Tool       string
	Runtime    string
	Created    time.Time
	Files      []FileChange
}

// BlobReader returns stored content by SHA-256.
type BlobReader interface {
	Blob(ctx context.Context, sha string) ([]byte, error)
}

// Plan is the restore of a run of checkpoints: the snapshots the patch
// applier puts back (all or none, each refused when the file no longer
// holds what the last checkpoint saw), and the files that changed but
// cannot be restored.
type Plan struct {
	Snapshots []patch.Snapshot
	// Unrestorable are the files whose state before is unknown (over the
	// size cap) or whose state after cannot be checked, with why.
	Unrestorable []Unrestorable
	// IDs are the checkpoints the plan undoes.
	IDs []int64
}

// Unrestorable is a file a restore leaves as it is.
type Unrestorable struct {
	Path   string
	Reason string
}

// Applied is a change kz recorded outside the checkpoints (an applied
// patch proposal, with its own snapshots) that a restore takes back
// together with them.
type Applied struct {
	When      time.Time
	Snapshots []patch.Snapshot
}

// Compose plans the restore of recs (oldest first) to the state before
// the first of them: each file goes back to its state before its earliest
// change, and is checked against its state after its latest one.
func Compose(ctx context.Context, recs []Record, blobs BlobReader) (Plan, error) {
	return ComposeWith(ctx, recs, nil, blobs)
}

// ComposeWith is Compose over checkpoints and applied changes together:
// a file's earliest change, of either kind, gives the state it goes back
// to, and its latest the state it must still hold, so that the whole
// restore is one all-or-none undo.
func ComposeWith(ctx context.Context, recs []Record, applied []Applied, blobs BlobReader) (Plan, error) {
	// step is one change of one file: a checkpoint's (fc) or an applied
	// change's (sn).
	type step struct {
		when time.Time
		fc   *FileChange
		sn   *patch.Snapshot
	}
	steps := map[string][]step{}
	var p Plan
	for _, r := range recs {
		p.IDs = append(p.IDs, r.ID)
		for i := range r.Files {
			f := &r.Files[i]
			steps[f.Path] = append(steps[f.Path], step{when: r.Created, fc: f})
		}
	}
	for _, a := range applied {
		for i := range a.Snapshots {
			sn := &a.Snapshots[i]
			steps[sn.Path] = append(steps[sn.Path], step{when: a.When, sn: sn})
		}
	}
	paths := make([]string, 0, len(steps))
	for k := range steps {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, path := range paths {
		st := steps[path]
		sort.SliceStable(st, func(i, j int) bool { return st[i].when.Before(st[j].when) })
		first, last := st[0], st[len(st)-1]
		sn := patch.Snapshot{Path: path}
		switch {
		case first.sn != nil:
			sn.Existed, sn.Content, sn.Mode, sn.CreatedDirs = first.sn.Existed, first.sn.Content, first.sn.Mode, first.sn.CreatedDirs
		case !first.fc.Restorable:
			p.Unrestorable = append(p.Unrestorable, Unrestorable{Path: path, Reason: "its content before was not kept (over the snapshot size cap)"})
			continue
		default:
			sn.Existed, sn.Mode = first.fc.BeforeExists, first.fc.BeforeMode
			if sn.Existed {
				b, err := blobs.Blob(ctx, first.fc.BeforeSHA256)
				if err != nil {
					return Plan{}, fmt.Errorf("restore %s: %w", path, err)
				}
				sn.Content = b
			}
		}
		switch {
		case last.sn != nil:
			sn.AfterExists, sn.AfterSHA256 = last.sn.AfterExists, last.sn.AfterSHA256
		case last.fc.AfterExists && last.fc.AfterSHA256 == "":
			p.Unrestorable = append(p.Unrestorable, Unrestorable{Path: path, Reason: "its content after is over the snapshot size cap, so a later edit could not be told from it"})
			continue
		default:
			sn.AfterExists, sn.AfterSHA256 = last.fc.AfterExists, last.fc.AfterSHA256
		}
		p.Snapshots = append(p.Snapshots, sn)
	}
	return p, nil
}

// Loader hands a plan's snapshots to patch.Applier.Undo, which restores
// them atomically under its journal and refuses, naming the files, when
// one changed since.
type Loader []patch.Snapshot

// LoadSnapshots implements patch.SnapshotLoader.
func (l Loader) LoadSnapshots(context.Context, string) ([]patch.Snapshot, error) {
	return []patch.Snapshot(l), nil
}

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

// Compose plans the restore of recs (oldest first) to the state before
// the first of them: each file goes back to its state before its earliest
// change, and is checked against its state after its latest one.
func Compose(ctx context.Context, recs []Record, blobs BlobReader) (Plan, error) {
	type span struct{ first, last FileChange }
	spans := map[string]*span{}
	var p Plan
	for _, r := range recs {
		p.IDs = append(p.IDs, r.ID)
		for _, f := range r.Files {
			if s, ok := spans[f.Path]; ok {
				s.last = f
				continue
			}
			spans[f.Path] = &span{first: f, last: f}
		}
	}
	paths := make([]string, 0, len(spans))
	for k := range spans {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, path := range paths {
		s := spans[path]
		switch {
		case !s.first.Restorable:
			p.Unrestorable = append(p.Unrestorable, Unrestorable{Path: path, Reason: "its content before was not kept (over the snapshot size cap)"})
			continue
		case s.last.AfterExists && s.last.AfterSHA256 == "":
			p.Unrestorable = append(p.Unrestorable, Unrestorable{Path: path, Reason: "its content after is over the snapshot size cap, so a later edit could not be told from it"})
			continue
		}
		sn := patch.Snapshot{Path: path, Existed: s.first.BeforeExists, Mode: s.first.BeforeMode,
			AfterExists: s.last.AfterExists, AfterSHA256: s.last.AfterSHA256}
		if sn.Existed {
			b, err := blobs.Blob(ctx, s.first.BeforeSHA256)
			if err != nil {
				return Plan{}, fmt.Errorf("restore %s: %w", path, err)
			}
			sn.Content = b
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

package checkpoint

import (
	"context"

	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
)

// SQLStore keeps a Tracker's baseline, blobs and checkpoints in kz's
// SQLite store; it is also the BlobReader a restore composes from.
type SQLStore struct{ St *store.Store }

var (
	_ Store      = SQLStore{}
	_ BlobReader = SQLStore{}
)

// Baseline implements Store.
func (c SQLStore) Baseline(ctx context.Context, ws string) ([]BaselineEntry, error) {
	rows, err := c.St.Baseline(ctx, ws)
	if err != nil {
		return nil, err
	}
	out := make([]BaselineEntry, len(rows))
	for i, r := range rows {
		out[i] = BaselineEntry{Path: r.Path, SHA256: r.SHA256,
			Stat: tools.FileStat{Size: r.Size, MtimeNs: r.MtimeNs, CtimeNs: r.CtimeNs, Ino: r.Ino, Mode: r.Mode}}
	}
	return out, nil
}

// Commit implements Store.
func (c SQLStore) Commit(ctx context.Context, sc Commit) error {
	out := store.ScanCommit{Workspace: sc.Workspace, Blobs: sc.Blobs, Deletes: sc.Deletes, Forget: sc.Forget}
	for _, u := range sc.Upserts {
		out.Upserts = append(out.Upserts, store.BaselineEntry{Path: u.Path, Size: u.Stat.Size, MtimeNs: u.Stat.MtimeNs,
			CtimeNs: u.Stat.CtimeNs, Ino: u.Stat.Ino, Mode: u.Stat.Mode, SHA256: u.SHA256})
	}
	if cp := sc.Checkpoint; cp != nil {
		rec := &store.Checkpoint{SessionID: cp.SessionID, TurnID: cp.TurnID, ToolCallID: cp.ToolCallID, Tool: cp.Tool,
			Runtime: cp.Runtime, Workspace: sc.Workspace}
		for _, f := range cp.Files {
			rec.Files = append(rec.Files, store.CheckpointFile{Path: f.Path, BeforeExists: f.BeforeExists, BeforeSHA256: f.BeforeSHA256,
				BeforeMode: f.BeforeMode, AfterExists: f.AfterExists, AfterSHA256: f.AfterSHA256, AfterSize: f.AfterSize, Restorable: f.Restorable})
		}
		out.Checkpoint = rec
	}
	_, err := c.St.CommitScan(ctx, out)
	return err
}

// Blob implements BlobReader.
func (c SQLStore) Blob(ctx context.Context, sha string) ([]byte, error) {
	return c.St.Blob(ctx, sha)
}

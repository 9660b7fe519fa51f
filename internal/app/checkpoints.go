package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/checkpoint"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
)

// newTracker is the checkpointer of a session in ws; own are the paths it
// leaves out (see Env.unrecorded). confined says every command and agent
// CLI of the session runs in the OS sandbox, in a PID namespace of its
// own: none of their processes can then leave kz's tree of descendants,
// so proc.WriteHeld of kz sees every one that still lives, and a turn's
// end may rely on the tracker's change watcher (checkpoint.Options.WriteHeld).
func newTracker(st *store.Store, ws *workspace.Workspace, own []string, confined bool) *checkpoint.Tracker {
	opt := checkpoint.Options{WS: ws, Store: checkpoint.SQLStore{St: st}, Own: own}
	if confined {
		self := os.Getpid()
		opt.WriteHeld = func() ([]uint64, bool) { return proc.WriteHeld(self) }
	}
	return checkpoint.New(opt)
}

// unrecorded are the files and directories no checkpoint of a workspace
// holds (checkpoint.Own), when the workspace holds them (kz run in the
// home directory). kz's own: the user config directory (kz writes the
// grants of "always" answers there), the data directory and the
// configured one when --data-dir names another (the store, its locks,
// the sandbox's saved search), the state directory (the log and the
// agents' homes, where the CLIs keep their own sessions) and kz's cache
// directory (the sandbox's probe). And the home's credential files that
// only their place names (permission.HomeCredentialPaths: the agents'
// logins, tokens under ~/.config, shell histories): a checkpoint would
// keep their secrets in the store. Credentials known by their names
// (.env, keys) are left out wherever they are (checkpoint.Tracker).
func (e *Env) unrecorded() []string {
	paths := []string{filepath.Dir(e.Paths.UserConfig), e.DataDir, e.Paths.DataDir, e.Paths.StateDir}
	if dir, err := os.UserCacheDir(); err == nil {
		paths = append(paths, filepath.Join(dir, "kz"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		for _, rel := range permission.HomeCredentialPaths() {
			paths = append(paths, filepath.Join(home, rel))
		}
	}
	return paths
}

// records reads a session's standing checkpoints in ws, oldest first.
// The files of the unrecorded paths that an older kz recorded are left
// out, so that an undo or a rewind never puts an old store back under the
// live one; a checkpoint of nothing else is left out whole.
func (e *Env) records(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string) ([]checkpoint.Record, error) {
	rows, err := st.Checkpoints(ctx, sessionID, ws.Dir(), false)
	if err != nil {
		return nil, err
	}
	own := checkpoint.OwnPaths(ws, e.unrecorded())
	out := make([]checkpoint.Record, 0, len(rows))
	for _, r := range rows {
		rec := checkpoint.Record{ID: r.ID, TurnID: r.TurnID, ToolCallID: r.ToolCallID, Tool: r.Tool, Runtime: r.Runtime, Created: r.Created}
		for _, f := range r.Files {
			if own.Covers(f.Path) {
				continue
			}
			rec.Files = append(rec.Files, checkpoint.FileChange{Path: f.Path, BeforeExists: f.BeforeExists, BeforeSHA256: f.BeforeSHA256,
				BeforeMode: f.BeforeMode, AfterExists: f.AfterExists, AfterSHA256: f.AfterSHA256, AfterSize: f.AfterSize, Restorable: f.Restorable})
		}
		if len(rec.Files) > 0 {
			out = append(out, rec)
		}
	}
	return out, nil
}

// ChangeKind names what made the change undo takes back.
type ChangeKind string

// Kinds of change.
const (
	// KindProposal is a patch proposal applied as a whole.
	KindProposal ChangeKind = "patch proposal"
	// KindToolCall is what one tool call of any runtime changed (kz's
	// write_file, Claude Code's Edit, a shell command, ...).
	KindToolCall ChangeKind = "tool call"
	// KindTurn is what a turn changed that no tool call accounts for.
	KindTurn ChangeKind = "turn"
)

// LastChange is what kz undo would take back next.
type LastChange struct {
	Kind ChangeKind
	// ID names the proposal (chg_…) or the checkpoint (checkpoint N).
	ID      string
	TurnID  int64
	Tool    string
	Runtime string
	When    time.Time
	// Files are the files it restores, each with what undo does to it.
	Files []string
	// Unrestorable are the files it changed and cannot restore.
	Unrestorable []checkpoint.Unrestorable

	checkpoint *checkpoint.Record
}

// FindLastChange returns the newest change of any kind a session made in
// ws that still stands: an applied proposal or a tool call's checkpoint,
// whichever came last. ok is false when there is none.
func (e *Env) FindLastChange(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string) (_ LastChange, ok bool, _ error) {
	recs, err := e.records(ctx, st, ws, sessionID)
	if err != nil {
		return LastChange{}, false, err
	}
	log := changeLog{st: st, sessionID: sessionID, workspace: ws.Dir()}
	chg, err := log.LastChangeIn(ctx, ws.Dir())
	if err != nil {
		return LastChange{}, false, err
	}
	var lc LastChange
	if chg != "" {
		when, err := st.ChangeTime(ctx, chg)
		if err != nil {
			return LastChange{}, false, err
		}
		lc = LastChange{Kind: KindProposal, ID: chg, When: when}
		snaps, err := log.LoadSnapshots(ctx, chg)
		if err != nil {
			return LastChange{}, false, err
		}
		for _, s := range snaps {
			lc.Files = append(lc.Files, describe(s))
		}
		ok = true
	}
	if n := len(recs); n > 0 && (!ok || !recs[n-1].Created.Before(lc.When)) {
		r := recs[n-1]
		kind := KindToolCall
		if r.ToolCallID == "" {
			kind = KindTurn
		}
		lc = LastChange{Kind: kind, ID: fmt.Sprintf("checkpoint %d", r.ID), TurnID: r.TurnID, Tool: r.Tool, Runtime: r.Runtime,
			When: r.Created, checkpoint: &r}
		plan, err := checkpoint.Compose(ctx, []checkpoint.Record{r}, checkpoint.SQLStore{St: st})
		if err != nil {
			return LastChange{}, false, err
		}
		for _, s := range plan.Snapshots {
			lc.Files = append(lc.Files, describe(s))
		}
		lc.Unrestorable = plan.Unrestorable
		ok = true
	}
	return lc, ok, nil
}

// describe says what restoring a snapshot does to its file.
func describe(s patch.Snapshot) string {
	switch {
	case !s.Existed && s.AfterExists:
		return s.Path + " (remove: the change created it)"
	case s.Existed && !s.AfterExists:
		return s.Path + " (put back: the change deleted it)"
	}
	return s.Path + " (restore its previous content)"
}

// UndoAny takes back the newest change of any kind a session made in ws
// (kz undo): a proposal through the patch applier's undo, a checkpoint by
// restoring its files' previous content atomically, refusing, naming the
// file, when one changed since outside kz. It says what it did.
func (e *Env) UndoAny(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string) (string, error) {
	lc, ok, err := e.FindLastChange(ctx, st, ws, sessionID)
	if err != nil {
		return "", err
	}
	if !ok || lc.Kind == KindProposal {
		// The proposal path also explains why there is nothing to undo
		// here (the session's changes may be in another folder).
		return e.Undo(ctx, st, ws, sessionID)
	}
	n, err := e.restore(ctx, st, ws, sessionID, []checkpoint.Record{*lc.checkpoint})
	if err != nil {
		return "", err
	}
	by := string(lc.Kind) + " of turn " + fmt.Sprint(lc.TurnID)
	if lc.Tool != "" {
		by = fmt.Sprintf("%s call of turn %d (%s)", lc.Tool, lc.TurnID, lc.Runtime)
	}
	return fmt.Sprintf("undid the %s: restored %s", by, n), nil
}

// restore puts the files of recs (oldest first) back as they were before
// the first, all or none, and marks the checkpoints undone. It returns a
// summary of what it restored and what it could not.
func (e *Env) restore(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string, recs []checkpoint.Record) (string, error) {
	plan, err := checkpoint.Compose(ctx, recs, checkpoint.SQLStore{St: st})
	if err != nil {
		return "", err
	}
	return e.restorePlan(ctx, st, ws, sessionID, plan)
}

// restorePlan carries out a composed restore as one all-or-none undo and
// marks its checkpoints undone; it says what it restored.
func (e *Env) restorePlan(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string, plan checkpoint.Plan) (string, error) {
	// The undo's journal names the newest checkpoint it takes back, or
	// says it is a rewind of proposals only.
	id := "rewind"
	if n := len(plan.IDs); n > 0 {
		id = fmt.Sprintf("checkpoint_%d", plan.IDs[n-1])
	}
	if len(plan.Snapshots) > 0 {
		if err := e.applier(ws, st, sessionID).Undo(ctx, checkpoint.Loader(plan.Snapshots), id); err != nil {
			return "", err
		}
	}
	if err := st.MarkCheckpointsUndone(ctx, plan.IDs); err != nil {
		return "", err
	}
	paths := make([]string, 0, len(plan.Snapshots))
	for _, s := range plan.Snapshots {
		paths = append(paths, s.Path)
	}
	msg := fmt.Sprintf("%d file(s): %s", len(paths), strings.Join(paths, ", "))
	if len(paths) == 0 {
		msg = "no file"
	}
	for _, u := range plan.Unrestorable {
		msg += fmt.Sprintf("; %s left as it is: %s", u.Path, u.Reason)
	}
	return msg, nil
}

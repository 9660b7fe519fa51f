package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/checkpoint"
	"github.com/kaizen-code/kz/tools/workspace"
	"github.com/kaizen-code/kz/tui"
)

// RewindPoint is one turn /rewind can go back to before.
type RewindPoint struct {
	Turn    int64
	Prompt  string
	Started time.Time
	// Files are the files the turn changed (checkpoints still standing).
	Files []string
}

// RewindPoints lists a session's turns, oldest first, with the files each
// changed in ws.
func (e *Env) RewindPoints(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string) ([]RewindPoint, error) {
	turns, err := st.Turns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	recs, err := e.records(ctx, st, ws, sessionID)
	if err != nil {
		return nil, err
	}
	files := map[int64]map[string]bool{}
	for _, r := range recs {
		if files[r.TurnID] == nil {
			files[r.TurnID] = map[string]bool{}
		}
		for _, f := range r.Files {
			files[r.TurnID][f.Path] = true
		}
	}
	// A standing patch proposal belongs to the last turn started before
	// it was applied.
	props, err := st.ChangesOfSessionSince(ctx, sessionID, ws.Dir(), time.Time{})
	if err != nil {
		return nil, err
	}
	for id, paths := range props {
		when, err := st.ChangeTime(ctx, id)
		if err != nil {
			return nil, err
		}
		var turn int64
		for _, t := range turns {
			if !t.Started.After(when) {
				turn = t.TurnID
			}
		}
		if turn == 0 {
			continue
		}
		if files[turn] == nil {
			files[turn] = map[string]bool{}
		}
		for _, p := range paths {
			files[turn][p] = true
		}
	}
	out := make([]RewindPoint, 0, len(turns))
	for _, t := range turns {
		p := RewindPoint{Turn: t.TurnID, Prompt: t.Prompt, Started: t.Started}
		for f := range files[t.TurnID] {
			p.Files = append(p.Files, f)
		}
		sort.Strings(p.Files)
		out = append(out, p)
	}
	return out, nil
}

// RewindFiles restores the files of ws to their state before turn: every
// standing checkpoint of that turn and the later ones is taken back at
// once, all or none, refused, naming the file, when a file changed since
// outside kz. It says what it restored.
func (e *Env) RewindFiles(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string, turn int64) (string, error) {
	turns, err := st.Turns(ctx, sessionID)
	if err != nil {
		return "", err
	}
	var started time.Time
	for _, t := range turns {
		if t.TurnID == turn {
			started = t.Started
		}
	}
	if started.IsZero() {
		return "", fmt.Errorf("rewind: the session has no turn %d", turn)
	}
	all, err := e.records(ctx, st, ws, sessionID)
	if err != nil {
		return "", err
	}
	var recs []checkpoint.Record
	for _, r := range all {
		if r.TurnID >= turn {
			recs = append(recs, r)
		}
	}
	// The patch proposals applied since keep their own snapshots (a
	// patch-proposal turn's checkpoint does not repeat them): they are
	// taken back in the same all-or-none undo, ordered in time with the
	// checkpoints, and then leave the change log.
	log := changeLog{st: st, sessionID: sessionID, workspace: ws.Dir()}
	props, err := st.ChangesOfSessionSince(ctx, sessionID, ws.Dir(), started)
	if err != nil {
		return "", err
	}
	var applied []checkpoint.Applied
	var forget []string
	for id := range props {
		snaps, err := log.LoadSnapshots(ctx, id)
		if err != nil {
			return "", err
		}
		when, err := st.ChangeTime(ctx, id)
		if err != nil {
			return "", err
		}
		applied = append(applied, checkpoint.Applied{When: when, Snapshots: snaps})
		forget = append(forget, id)
	}
	sort.Strings(forget)
	if len(recs) == 0 && len(applied) == 0 {
		return "no file changed since turn " + fmt.Sprint(turn), nil
	}
	plan, err := checkpoint.ComposeWith(ctx, recs, applied, checkpoint.SQLStore{St: st})
	if err != nil {
		return "", err
	}
	msg, err := e.restorePlan(ctx, st, ws, sessionID, plan)
	if err != nil {
		return "", err
	}
	for _, id := range forget {
		if err := log.ForgetChange(ctx, id); err != nil {
			return "", fmt.Errorf("rewound the files to before turn %d, but the applied proposal %s stays in the change log: %w", turn, id, err)
		}
	}
	return fmt.Sprintf("rewound the files to before turn %d: restored %s", turn, msg), nil
}

// RewindFiles implements tui.Rewinder's file restore for this session.
func (u undoer) RewindFiles(ctx context.Context, turn int64) (string, error) {
	return u.e.RewindFiles(ctx, u.st, u.ws, u.sessionID, turn)
}

// RewindPoints implements tui.Rewinder.
func (u undoer) RewindPoints(ctx context.Context) ([]tui.RewindPoint, error) {
	pts, err := u.e.RewindPoints(ctx, u.st, u.ws, u.sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]tui.RewindPoint, len(pts))
	for i, p := range pts {
		out[i] = tui.RewindPoint{Turn: p.Turn, Prompt: p.Prompt, Started: p.Started, Files: p.Files}
	}
	return out, nil
}

// RewindConversation implements tui.Rewinder.
func (u undoer) RewindConversation(ctx context.Context, turn int64) error {
	if u.sess == nil {
		return errors.New("this session cannot rewind its conversation")
	}
	return u.sess.RewindConversation(ctx, turn)
}

// rewindSession is the conversation side of /rewind.
type rewindSession interface {
	RewindConversation(ctx context.Context, turn int64) error
}

var (
	_ rewindSession = (*engine.Session)(nil)
	_ tui.Rewinder  = undoer{}
)

package engine

import (
	"context"
	"fmt"
)

// Checkpointer records what every tool call of any runtime changes in the
// workspace, so that undo and /rewind can put the files back whichever
// runtime, tool or shell command changed them (tools/checkpoint
// implements it). The session calls it from the goroutine of the runtime
// whose event it handles, never under its lock; the implementation
// serialises its own state.
type Checkpointer interface {
	// Refresh brings the checkpointer's knowledge of the workspace up to
	// date without recording a change: what changed between turns (the
	// person's edits, an applied proposal) is nobody's tool call.
	Refresh(ctx context.Context, c CheckpointCall) error
	// BeforeCall keeps the current state of the paths a call that may
	// write is predicted to change (the path of a file tool, the targets
	// the shell analysis finds in a command). A second BeforeCall for the
	// same call keeps the first state.
	BeforeCall(ctx context.Context, c CheckpointCall) error
	// AfterCall finds every file that changed since the checkpointer last
	// looked and records the changes as the call's checkpoint (the turn's,
	// when ToolCallID is empty). It returns only once the checkpoint is
	// stored.
	AfterCall(ctx context.Context, c CheckpointCall) error
}

// CheckpointCall names the tool call (or turn) a checkpoint belongs to
// and what it is predicted to change.
type CheckpointCall struct {
	SessionID  string
	TurnID     int64
	ToolCallID string
	Tool       string
	Runtime    string
	// Command is the shell command of the call, if it runs one; Paths
	// are the files it names.
	Command string
	Paths   []string
}

// startRecording prepares the recording of the workspace's state at the
// turn's start (checkpointRefresh), which Turn.Record or the first
// Turn.Ready starts: an EarlyStarter's once its process is started, the
// session's before any other runtime runs, or the turn's end if nothing
// did. It returns nil when there is no checkpointer.
func (s *Session) startRecording(ts *turnState) *recording {
	if s.checkpoints == nil {
		return nil
	}
	// The call is taken now: the turn's runtime fields change under the
	// session's lock as its attempts start.
	s.mu.Lock()
	defer s.mu.Unlock()
	c := CheckpointCall{SessionID: s.id, TurnID: ts.turn.ID, Runtime: ts.turn.Runtime}
	r := newRecording(func() { s.refresh(ts.ctx, c) })
	ts.turn.recording = r
	return r
}

// checkpointRefresh runs at a turn's start and, in patch-proposal mode
// (where applied proposals keep their own snapshots), at its end.
func (s *Session) checkpointRefresh(ctx context.Context, ts *turnState) {
	if s.checkpoints == nil {
		return
	}
	s.mu.Lock()
	c := CheckpointCall{SessionID: s.id, TurnID: ts.turn.ID, Runtime: ts.turn.Runtime}
	s.mu.Unlock()
	s.refresh(ctx, c)
}

// refresh is checkpointRefresh of call c.
func (s *Session) refresh(ctx context.Context, c CheckpointCall) {
	// An interrupted turn's refresh ends with it: nothing of the turn
	// runs after it, so there is nothing to warn about.
	if err := s.checkpoints.Refresh(ctx, c); err != nil && ctx.Err() == nil {
		s.checkpointError(c.TurnID, "", err)
	}
}

// checkpointEnd records what the turn changed that no tool call's
// checkpoint holds (a CLI runtime's call kz was not asked about), before
// the turn's final result.
func (s *Session) checkpointEnd(ctx context.Context, ts *turnState) {
	if s.checkpoints == nil {
		return
	}
	if ts.turn.Mode == ModePatchProposal {
		s.checkpointRefresh(ctx, ts)
		return
	}
	c := CheckpointCall{SessionID: s.id, TurnID: ts.turn.ID, Runtime: ts.turn.Runtime}
	if err := s.checkpoints.AfterCall(ctx, c); err != nil {
		s.checkpointError(ts.turn.ID, "", err)
	}
}

// checkpointBefore snapshots what a call that may write is predicted to
// change, and marks the call so that its end is checkpointed. It is
// called when the gate allowed a write or a command and when a runtime
// announces a shell call (a CLI may run one without asking).
func (s *Session) checkpointBefore(ctx context.Context, t *Turn, req PermissionRequest) {
	if s.checkpoints == nil || req.ToolCallID == "" || req.Internal {
		return
	}
	s.mu.Lock()
	ts := s.cur
	if ts == nil || ts.turn != t {
		s.mu.Unlock()
		return
	}
	if ts.mayWrite == nil {
		ts.mayWrite = map[string]bool{}
	}
	ts.mayWrite[req.ToolCallID] = true
	s.mu.Unlock()
	c := CheckpointCall{SessionID: s.id, TurnID: t.ID, ToolCallID: req.ToolCallID, Tool: req.Tool, Runtime: t.Runtime,
		Command: req.Command, Paths: req.Paths}
	if err := s.checkpoints.BeforeCall(ctx, c); err != nil {
		s.checkpointError(t.ID, req.ToolCallID, err)
	}
}

// checkpointQueryLocked says whether ev starts or ends a call the
// checkpointer must see: a shell call's start, the end of a call that may
// have written. s.mu must be held.
func (s *Session) checkpointQueryLocked(ev Event) (CheckpointCall, bool, bool) {
	ts := s.cur
	if s.checkpoints == nil || ts == nil || ev.TurnID != ts.turn.ID || ev.ToolCallID == "" {
		return CheckpointCall{}, false, false
	}
	c := CheckpointCall{SessionID: s.id, TurnID: ev.TurnID, ToolCallID: ev.ToolCallID, Tool: ev.Tool, Runtime: ts.turn.Runtime,
		Command: ev.Command, Paths: ev.Paths}
	switch ev.Type {
	case EventToolCallStarted:
		if ev.Command == "" || ts.mayWrite[ev.ToolCallID] {
			return c, false, false
		}
		if ts.mayWrite == nil {
			ts.mayWrite = map[string]bool{}
		}
		ts.mayWrite[ev.ToolCallID] = true
		return c, true, false
	case EventToolCallFinished:
		if !ts.mayWrite[ev.ToolCallID] {
			return c, false, false
		}
		delete(ts.mayWrite, ev.ToolCallID)
		return c, false, true
	}
	return c, false, false
}

// checkpointError reports a checkpoint that could not be taken: the call
// goes on (it has run, or the person allowed it), but undo will not cover
// it, and the person is told so.
func (s *Session) checkpointError(turnID int64, toolCallID string, err error) {
	s.emit(Event{Type: EventError, TurnID: turnID, ToolCallID: toolCallID, ErrorKind: ErrInternal,
		Text: fmt.Sprintf("checkpoint: %v (undo and /rewind may not restore this change)", err)})
}

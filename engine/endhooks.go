package engine

import (
	"context"
	"fmt"
)

// StopHooks runs the Stop hooks when an agent would end its turn. The
// session's TurnHooks implements it when the person configured any
// (tools/hooks does); a TurnHooks without it runs none.
type StopHooks interface {
	Stop(ctx context.Context, q StopQuery) StopVerdict
}

// ToolResultHooks runs the PostToolUse hooks of a finished tool call and
// returns their feedback for the model ("" when none). tools/hooks
// implements it.
type ToolResultHooks interface {
	PostToolUse(ctx context.Context, q GateQuery, output string) (feedback string)
}

// OwnHooks is implemented by a runtime whose agent loop runs the
// PostToolUse and Stop hooks itself, so that it can feed their answers to
// the model (kz's own loop). For every other runtime the session runs them
// as the runtime's events pass: the agent cannot be told mid-turn, so their
// answers become notices.
type OwnHooks interface {
	RunsOwnHooks() bool
}

// StopQuery is what the Stop hooks read.
type StopQuery struct {
	SessionID      string
	Workspace      string
	Runtime        string
	PermissionMode PermissionMode
	// Active says the turn already continued because a Stop hook blocked
	// its end (Claude Code's stop_hook_active): a hook reading it can
	// avoid blocking forever.
	Active bool
}

// StopVerdict is what the Stop hooks said.
type StopVerdict struct {
	// Block asks the agent to go on, with Reason (every blocking hook's
	// reason, one paragraph each) as what it is told.
	Block  bool
	Hook   string
	Reason string
	// Problems are hooks that failed, one line each; they block nothing.
	Problems []string
}

// StageHook is the Stage of the notices that carry what a hook said and
// nobody could act on (a CLI runtime's Stop block, the feedback of its
// PostToolUse hooks, the end of the continuations a Stop hook asked) or
// a hook that failed.
const StageHook = "hook"

// MaxStopContinuations bounds how often Stop hooks may make one turn go
// on: a hook that always blocks must not keep a turn running for ever.
const MaxStopContinuations = 3

// StopHooks runs the session's Stop hooks for this turn. A runtime that
// runs them itself (OwnHooks) calls it when the model ends its reply
// without a tool call; active is true once a block already continued the
// turn. The hooks' problems are emitted as notices here. Without
// Stop hooks the verdict is empty.
func (t *Turn) StopHooks(ctx context.Context, active bool) StopVerdict {
	s, ok := t.host.(*Session)
	if !ok {
		return StopVerdict{}
	}
	return s.runStopHooks(ctx, t, active)
}

func (s *Session) runStopHooks(ctx context.Context, t *Turn, active bool) StopVerdict {
	sh, ok := s.hooks.(StopHooks)
	if !ok {
		return StopVerdict{}
	}
	s.mu.Lock()
	q := StopQuery{SessionID: s.id, Workspace: s.workspace, Runtime: t.Runtime, PermissionMode: s.pmode, Active: active}
	s.mu.Unlock()
	v := sh.Stop(ctx, q)
	for _, p := range v.Problems {
		s.emit(Event{Type: EventNotice, TurnID: t.ID, Text: p, Stage: StageHook})
	}
	return v
}

// runsOwnHooks reports whether the runtime named runs the PostToolUse and
// Stop hooks itself. s.mu must be held.
func (s *Session) runsOwnHooksLocked(runtime string) bool {
	e, ok := s.runtimes[runtime]
	if !ok || e.Runtime == nil {
		return false
	}
	o, ok := e.Runtime.(OwnHooks)
	return ok && o.RunsOwnHooks()
}

// stopHooksAfterTurn runs the Stop hooks after a CLI runtime's turn ended
// complete, for their side effects (a formatter, a test run, a note): the
// agent has ended its turn and cannot be made to continue it, so a block
// is shown as a notice rather than obeyed.
func (s *Session) stopHooksAfterTurn(ctx context.Context, ts *turnState, res Result, err error) {
	if err != nil || res.Status != StatusComplete || s.hooks == nil {
		return
	}
	s.mu.Lock()
	own := s.runsOwnHooksLocked(ts.turn.Runtime)
	s.mu.Unlock()
	if own {
		return
	}
	v := s.runStopHooks(ctx, ts.turn, false)
	if v.Block {
		s.emit(Event{Type: EventNotice, TurnID: ts.turn.ID, Stage: StageHook, Text: fmt.Sprintf(
			"the Stop hook `%s` asked the agent to continue (%s), but %s has ended its turn and cannot be made to continue it; send the request yourself if it should",
			v.Hook, v.Reason, ts.turn.Runtime)})
	}
}

// postToolHooks runs the PostToolUse hooks of a CLI runtime's call that
// finished without error: started is its tool_call_started event and req
// the permission request it passed the gate with, when it did (a call the
// agent ran without asking has none). Their feedback cannot reach the
// agent mid-turn, so it is stored and shown as a notice.
func (s *Session) postToolHooks(ctx context.Context, turnID int64, q GateQuery, output string) {
	th, ok := s.hooks.(ToolResultHooks)
	if !ok {
		return
	}
	fb := th.PostToolUse(ctx, q, output)
	if fb == "" {
		return
	}
	s.emit(Event{Type: EventNotice, TurnID: turnID, ToolCallID: q.Request.ToolCallID, Tool: q.Request.Tool, Stage: StageHook,
		Text: fmt.Sprintf("PostToolUse hooks on %s's %s call (shown, not sent: the agent cannot be told mid-turn):\n%s", q.Runtime, q.Request.Tool, fb)})
}

// postToolQueryLocked says whether ev is the end of a CLI runtime's tool
// call that the PostToolUse hooks must see, and builds their query from
// the call's permission request or, for a call the agent ran without
// asking, its tool_call_started event. s.mu must be held, before ev is
// emitted (which forgets the call).
func (s *Session) postToolQueryLocked(ev Event) (GateQuery, bool) {
	ts := s.cur
	if s.hooks == nil || ev.Type != EventToolCallFinished || ev.IsError || ev.Status == ToolStatusError ||
		ts == nil || ev.TurnID != ts.turn.ID || ev.ToolCallID == "" {
		return GateQuery{}, false
	}
	runtime := ev.Runtime
	if runtime == "" {
		runtime = s.runtime
	}
	if s.runsOwnHooksLocked(runtime) {
		return GateQuery{}, false
	}
	req, ok := ts.requests[ev.ToolCallID]
	if !ok {
		started, open := ts.open[ev.ToolCallID]
		if !open {
			return GateQuery{}, false
		}
		req = PermissionRequest{ToolCallID: ev.ToolCallID, Tool: started.Tool, Input: started.Input, Command: started.Command, Paths: started.Paths}
	}
	if req.Tool == "" {
		req.Tool = ev.Tool
	}
	return GateQuery{SessionID: s.id, Runtime: runtime, Mode: s.mode, PermissionMode: s.pmode, Workspace: s.workspace, Request: req}, true
}

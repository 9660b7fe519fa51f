package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
)

// pendingRequest is a permission request waiting for the person.
type pendingRequest struct {
	turnID int64
	query  GateQuery
	// answer has room for one answer, so the first answer never blocks and
	// later ones find the request gone.
	answer chan Answer
}

// requestPermission runs the gate and, when it asks, the person.
func (s *Session) requestPermission(ctx context.Context, t *Turn, req PermissionRequest) Answer {
	if err := t.Ready(ctx); err != nil {
		// No call is decided before the workspace's state at the
		// turn's start is recorded (EarlyStarter): its undo would miss
		// what the call changes.
		a := Answer{Decision: DecisionDeny, Stage: "turn", Reason: "the turn ended before the call could be decided: " + err.Error()}
		s.emitDecision(decisionEvent(t, req), "", a)
		return a
	}
	q, interactive := s.permissionQuery(t, req)
	v, ok := s.takeVerdict(t, req)
	if !ok {
		v = s.check(ctx, q)
	}
	base := decisionEvent(t, req)
	if v.Decision != DecisionAsk {
		a := Answer{Decision: v.Decision, Stage: v.Stage, Rule: v.Rule, Reason: v.Reason}
		if a.Allowed() {
			a.Confinement = v.Confinement
		}
		s.emitDecision(base, "", a)
		if a.Allowed() && (req.Write || req.Command != "") {
			s.checkpointBefore(ctx, t, req)
		}
		return a
	}
	if !interactive || q.PermissionMode == PermissionDeny {
		a := Answer{Decision: DecisionDeny, Stage: "headless", Rule: v.Rule,
			Reason: fmt.Sprintf("%s; no one can answer here, so the request is denied (allow it with a rule or --permission-mode)", v.Reason)}
		if interactive {
			a.Stage, a.Reason = "permission_mode", v.Reason+"; permission mode deny answers every question with deny"
		}
		s.emitDecision(base, "", a)
		return a
	}

	id := "perm-" + NewID()
	p := &pendingRequest{turnID: t.ID, query: q, answer: make(chan Answer, 1)}
	s.mu.Lock()
	s.pending[id] = p
	s.emitLocked(Event{Type: EventPermissionRequested, TurnID: t.ID, RequestID: id, ToolCallID: req.ToolCallID,
		Tool: req.Tool, Input: req.Input, Command: req.Command, Paths: req.Paths, Diff: req.Diff,
		Write: req.Write, Selection: req.Selection, PatchID: req.PatchID, Stage: v.Stage, Rule: v.Rule, Reason: v.Reason, Grants: v.Grants})
	s.mu.Unlock()
	s.notifyHooks(ctx, req.Tool)

	var a Answer
	select {
	case a = <-p.answer:
	case <-ctx.Done():
		s.mu.Lock()
		if _, still := s.pending[id]; still {
			delete(s.pending, id)
			a = Answer{Decision: DecisionDeny, Stage: "cancelled", Reason: "the request was cancelled before an answer"}
		} else {
			// An answer won the race with the cancellation.
			a = <-p.answer
		}
		s.mu.Unlock()
	}
	if a.Stage == "" {
		a.Stage = "user"
	}
	if a.Allowed() {
		// The person's yes lifts the question, never the confinement:
		// the command runs under the profile the gate chose for it.
		a.Confinement = v.Confinement
	}
	if a.Allowed() && (a.Scope == ScopeSession || a.Scope == ScopeAlways) {
		if err := s.gate.Remember(ctx, q, a.Scope); err != nil {
			s.emit(Event{Type: EventError, TurnID: t.ID, ErrorKind: ErrInternal, Text: "could not remember the grant: " + err.Error()})
		}
	}
	s.emitDecision(base, id, a)
	if a.Allowed() && (req.Write || req.Command != "") {
		s.checkpointBefore(ctx, t, req)
	}
	return a
}

// decideUnasked runs the gate on req and, when it allows the call by
// itself, logs and checkpoints it as requestPermission does. Any other
// verdict is kept for the requestPermission of the same call, which then
// does not run the gate (and its hooks) a second time.
func (s *Session) decideUnasked(ctx context.Context, t *Turn, req PermissionRequest) (Answer, bool) {
	if t.Ready(ctx) != nil {
		return Answer{}, false
	}
	q, _ := s.permissionQuery(t, req)
	v := s.check(ctx, q)
	if v.Decision != DecisionAllow {
		s.keepVerdict(t, req, v)
		return Answer{}, false
	}
	a := Answer{Decision: v.Decision, Stage: v.Stage, Rule: v.Rule, Reason: v.Reason, Confinement: v.Confinement}
	s.emitDecision(decisionEvent(t, req), "", a)
	if req.Write || req.Command != "" {
		s.checkpointBefore(ctx, t, req)
	}
	return a, true
}

// decisionEvent is the permission_decided event of req in turn t, before
// the decision is filled in (emitDecision).
func decisionEvent(t *Turn, req PermissionRequest) Event {
	return Event{Type: EventPermissionDecided, TurnID: t.ID, ToolCallID: req.ToolCallID, Tool: req.Tool,
		Command: req.Command, Paths: req.Paths}
}

// permissionQuery is the gate's query for req in turn t, and whether a
// person answers the gate's questions; the request is noted as the open
// call's (turnState.requests).
func (s *Session) permissionQuery(t *Turn, req PermissionRequest) (GateQuery, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.runtimes[t.Runtime]
	q := GateQuery{SessionID: s.gateSessionID(), Runtime: t.Runtime, Capabilities: e.Runtime.Capabilities(t.Model),
		Mode: s.mode, PermissionMode: s.pmode, Workspace: s.workspace, Request: req}
	if req.Internal {
		q.Capabilities = Capabilities{}
	}
	if ts := s.cur; ts != nil && ts.turn == t && req.ToolCallID != "" {
		if ts.requests == nil {
			ts.requests = map[string]PermissionRequest{}
		}
		ts.requests[req.ToolCallID] = req
	}
	return q, s.interactive
}

// check runs the gate. A gate that says nothing has not allowed anything.
func (s *Session) check(ctx context.Context, q GateQuery) Verdict {
	v := s.gate.Check(ctx, q)
	if v.Decision == "" {
		v = Verdict{Decision: DecisionDeny, Stage: "gate", Reason: "the gate returned no decision"}
	}
	return v
}

// keptVerdict is the gate's verdict on a call decideUnasked did not
// decide, with the request it judged.
type keptVerdict struct {
	req PermissionRequest
	v   Verdict
}

// keepVerdict keeps v for the requestPermission of the same call in turn
// t.
func (s *Session) keepVerdict(t *Turn, req PermissionRequest, v Verdict) {
	if req.ToolCallID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts := s.cur; ts != nil && ts.turn == t {
		if ts.verdicts == nil {
			ts.verdicts = map[string]keptVerdict{}
		}
		ts.verdicts[req.ToolCallID] = keptVerdict{req: req, v: v}
	}
}

// takeVerdict returns, and forgets, the verdict kept for req: only for the
// very request the gate judged (same tool, input, command, paths and
// flags); any other runs the gate again.
func (s *Session) takeVerdict(t *Turn, req PermissionRequest) (Verdict, bool) {
	if req.ToolCallID == "" {
		return Verdict{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.cur
	if ts == nil || ts.turn != t {
		return Verdict{}, false
	}
	k, ok := ts.verdicts[req.ToolCallID]
	delete(ts.verdicts, req.ToolCallID)
	if !ok || !sameRequest(k.req, req) {
		return Verdict{}, false
	}
	return k.v, true
}

// sameRequest reports whether a and b ask the gate the same thing.
func sameRequest(a, b PermissionRequest) bool {
	return a.Tool == b.Tool && bytes.Equal(a.Input, b.Input) && a.Command == b.Command && slices.Equal(a.Paths, b.Paths) &&
		a.Write == b.Write && a.Diff == b.Diff && a.Selection == b.Selection && a.PatchID == b.PatchID &&
		a.Internal == b.Internal && a.Sandboxed == b.Sandboxed
}

// CheckRead decides a read that kz makes for the person outside any turn
// (the file an `@` mention attaches to a prompt) with the session's gate,
// mode and permission mode, and journals the decision as a
// permission_decided event like the decision on any read of a runtime. It
// returns the gate's verdict.
//
// It never asks: no turn waits on an answer, and the person who mentioned
// the file is not the one to grant what a rule holds back, so a read the
// gate would ask about is recorded as denied. The runtime's capabilities
// do not limit the read (kz makes it, not the runtime). A request that
// writes or runs a command is no read: it is refused without the gate.
func (s *Session) CheckRead(ctx context.Context, req PermissionRequest) Verdict {
	s.mu.Lock()
	q := GateQuery{SessionID: s.gateSessionID(), Runtime: s.runtime, Mode: s.mode, PermissionMode: s.pmode, Workspace: s.workspace, Request: req}
	s.mu.Unlock()
	var v Verdict
	switch {
	case req.Write || req.Command != "":
		v = Verdict{Decision: DecisionDeny, Stage: "session", Reason: "only a read can be checked outside a turn"}
	default:
		v = s.gate.Check(ctx, q)
	}
	a := Answer{Decision: v.Decision, Stage: v.Stage, Rule: v.Rule, Reason: v.Reason}
	switch v.Decision {
	case DecisionAllow, DecisionDeny:
	case DecisionAsk:
		a.Decision, a.Reason = DecisionDeny, v.Reason+"; a read outside a turn is never asked about, so it is denied"
	default:
		// A gate that says nothing has not allowed anything.
		v = Verdict{Decision: DecisionDeny, Stage: "gate", Reason: "the gate returned no decision"}
		a = Answer{Decision: v.Decision, Stage: v.Stage, Reason: v.Reason}
	}
	s.emitDecision(Event{Type: EventPermissionDecided, ToolCallID: req.ToolCallID, Tool: req.Tool, Paths: req.Paths}, "", a)
	return v
}

func (s *Session) emitDecision(ev Event, requestID string, a Answer) {
	ev.RequestID, ev.Decision, ev.Scope = requestID, a.Decision, a.Scope
	ev.Stage, ev.Rule, ev.Reason, ev.Feedback = a.Stage, a.Rule, a.Reason, a.Feedback
	if a.Allowed() && !a.Confinement.IsZero() {
		c := a.Confinement
		ev.Confinement = &c
	}
	s.emit(ev)
}

// Answer answers a pending permission request. The first answer wins; an
// answer to an unknown or already answered request returns
// ErrUnknownRequest and changes nothing.
func (s *Session) Answer(requestID string, a Answer) error {
	if a.Decision != DecisionAllow && a.Decision != DecisionDeny {
		return fmt.Errorf("answer %s: decision must be allow or deny, not %q", requestID, a.Decision)
	}
	switch a.Scope {
	case "", ScopeOnce, ScopeSession, ScopeAlways:
	default:
		return fmt.Errorf("answer %s: unknown scope %q", requestID, a.Scope)
	}
	s.mu.Lock()
	p, ok := s.pending[requestID]
	if ok {
		delete(s.pending, requestID)
	}
	s.mu.Unlock()
	if !ok {
		// A request of a running child reaches the person through the
		// parent's subscribers, and the answer comes back through the
		// parent.
		for _, c := range s.kids.list() {
			if c.Answer(requestID, a) == nil {
				return nil
			}
		}
		return fmt.Errorf("answer %s: %w", requestID, ErrUnknownRequest)
	}
	p.answer <- a
	return nil
}

// Pending lists the ids of permission requests waiting for an answer.
func (s *Session) Pending() []string {
	s.mu.Lock()
	out := make([]string, 0, len(s.pending))
	for id := range s.pending {
		out = append(out, id)
	}
	s.mu.Unlock()
	// A running child's requests wait on the same person.
	for _, c := range s.kids.list() {
		out = append(out, c.Pending()...)
	}
	return out
}

// PermissionModeGate is the gate used when no rule-based gate is wired: it
// applies only the mode and the permission mode. Writes are never allowed in
// analysis-only mode, nor direct writes in patch-proposal mode.
//
// It reads no tool's input, so outside yolo it allows unasked only the
// calls it knows change nothing: kz's own read tools (fallbackReadTools).
// Every other call that is neither a write nor a command (an MCP tool, a
// web fetch, another runtime's tool, a name it has never seen) is asked:
// what it cannot classify is not proven harmless.
type PermissionModeGate struct{}

// fallbackReadTools are the tools of kz's own agent loop that only read
// files of the workspace (tools.ReadFile, ListDir, Glob, Grep): a request
// under one of these names that is neither a write nor a command is
// allowed by PermissionModeGate without asking.
var fallbackReadTools = map[string]bool{"read_file": true, "list_dir": true, "glob": true, "grep": true}

// Check implements Gate.
func (g PermissionModeGate) Check(_ context.Context, q GateQuery) Verdict {
	v := g.check(q)
	if q.Request.Command != "" {
		v.Confinement = Confinement{Profile: ProfileWorkspaceWrite, Network: true}
		if q.Mode != ModeFullAutonomous && !q.Request.Internal {
			v.Confinement = Confinement{Profile: ProfileReadOnly}
		}
	}
	return v
}

func (PermissionModeGate) check(q GateQuery) Verdict {
	r := q.Request
	writes := r.Write || r.Command != ""
	switch {
	case q.Mode == ModeAnalysisOnly && writes:
		return Verdict{Decision: DecisionDeny, Stage: "mode", Reason: "analysis-only mode allows no writes and no shell"}
	case q.Mode == ModePatchProposal && writes && !IsProposal(r):
		return Verdict{Decision: DecisionDeny, Stage: "mode", Reason: "patch-proposal mode changes files only through proposals"}
	}
	switch q.PermissionMode {
	case PermissionYolo:
		return Verdict{Decision: DecisionAllow, Stage: "permission_mode", Reason: "yolo"}
	case PermissionDeny:
		return Verdict{Decision: DecisionDeny, Stage: "permission_mode", Reason: "permission mode deny"}
	case PermissionAcceptEdits:
		if r.Write && r.Command == "" {
			return Verdict{Decision: DecisionAllow, Stage: "permission_mode", Reason: "accept-edits"}
		}
	}
	if !writes && fallbackReadTools[r.Tool] {
		return Verdict{Decision: DecisionAllow, Stage: "permission_mode", Reason: "read access"}
	}
	return Verdict{Decision: DecisionAsk, Stage: "permission_mode", Reason: "ask before " + r.Tool}
}

// Remember implements Gate; this gate keeps no grants.
func (PermissionModeGate) Remember(context.Context, GateQuery, AnswerScope) error { return nil }

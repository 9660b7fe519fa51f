package engine

import (
	"context"
	"fmt"
)

// TurnHooks runs the person's hooks at the points of a session that are
// not tool calls (tools/hooks implements it; PreToolUse is a stage of the
// gate instead). The engine owns only this contract.
type TurnHooks interface {
	// BeforePrompt runs the UserPromptSubmit hooks, and the SessionStart
	// hooks first when q.Start is set. It blocks until they end.
	BeforePrompt(ctx context.Context, q PromptQuery) PromptVerdict
	// Notify runs the Notification hooks with message. The session calls
	// it in a goroutine of its own bounded by the turn, so that a slow
	// hook never holds a permission request back.
	Notify(ctx context.Context, sessionID, workspace, message string)
}

// PromptQuery is what the prompt hooks read.
type PromptQuery struct {
	SessionID      string
	Workspace      string
	Prompt         string
	PermissionMode PermissionMode
	// Start names why the session starts ("startup", "resume") on its
	// first turn in this process, when the SessionStart hooks run; empty
	// otherwise.
	Start string
}

// PromptVerdict is what the prompt hooks said.
type PromptVerdict struct {
	// Block refuses the prompt: the turn ends without reaching the
	// runtime, with Reason as its error.
	Block  bool
	Hook   string
	Reason string
	// Context is text the hooks add for the model; the runtime receives
	// it after the prompt.
	Context string
	// Problems are hooks that failed (a timeout, malformed output), one
	// line each; each becomes an error event and blocks nothing.
	Problems []string
}

// errPromptBlocked is the error of a turn whose prompt a hook refused.
func errPromptBlocked(v PromptVerdict) error {
	return &RuntimeError{Kind: ErrDenied, Runtime: "hook", Message: fmt.Sprintf("the UserPromptSubmit hook `%s` blocked the prompt: %s", v.Hook, v.Reason)}
}

// runPromptHooks runs the prompt hooks of a turn before its first attempt:
// their problems are error events, their context joins the prompt the
// runtime receives (the user_message keeps what the person typed), and a
// block is returned as the error that ends the turn.
func (s *Session) runPromptHooks(ctx context.Context, ts *turnState) error {
	if s.hooks == nil {
		return nil
	}
	s.mu.Lock()
	q := PromptQuery{SessionID: s.id, Workspace: s.workspace, Prompt: ts.turn.Prompt, PermissionMode: s.pmode}
	if !s.hooksStarted {
		s.hooksStarted = true
		q.Start = "startup"
		if s.resumed {
			q.Start = "resume"
		}
	}
	s.mu.Unlock()
	v := s.hooks.BeforePrompt(ctx, q)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range v.Problems {
		s.emitLocked(Event{Type: EventError, TurnID: ts.turn.ID, Text: p, ErrorKind: ErrInvalidArgument})
	}
	if v.Block {
		return errPromptBlocked(v)
	}
	if v.Context != "" {
		ts.turn.Prompt += "\n\n" + v.Context
	}
	return nil
}

// notifyHooks tells the Notification hooks that a permission request
// waits for the person; it returns at once.
func (s *Session) notifyHooks(ctx context.Context, tool string) {
	if s.hooks == nil {
		return
	}
	s.mu.Lock()
	id, ws := s.id, s.workspace
	s.mu.Unlock()
	s.hookWG.Add(1)
	go func() {
		defer s.hookWG.Done()
		s.hooks.Notify(ctx, id, ws, "kz needs your permission to use "+tool)
	}()
}

package native

import (
	"context"
	"fmt"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// stopHost is a Host that runs the session's Stop hooks; *engine.Turn is
// one. A host without them (a test's) ends turns as the model says.
type stopHost interface {
	StopHooks(ctx context.Context, active bool) engine.StopVerdict
}

// stopBlocked runs the Stop hooks when the model ended its reply without
// a tool call, and reports whether the loop must go on: a hook blocked
// the end, and the turn has continued fewer than
// engine.MaxStopContinuations times for it. The block's reason then
// joins the conversation as a user-side message, which the next request
// carries to the model, and a notice tells the person why the turn goes
// on. Past the bound the turn ends complete with a notice, so that a
// hook that always blocks cannot keep a turn (and its spending) running.
// A turn being interrupted ends without asking the hooks.
func (l *loop) stopBlocked(ctx context.Context) bool {
	sh, ok := l.host.(stopHost)
	if !ok || ctx.Err() != nil || l.stopRequested() {
		return false
	}
	v := sh.StopHooks(ctx, l.stopBlocks > 0)
	if !v.Block || ctx.Err() != nil {
		return false
	}
	if l.stopBlocks >= engine.MaxStopContinuations {
		l.host.Emit(engine.Event{Type: engine.EventNotice, Stage: engine.StageHook, Text: fmt.Sprintf(
			"the Stop hook `%s` blocked the end of the turn again (%s); after %d continuations the turn ends",
			v.Hook, v.Reason, engine.MaxStopContinuations)})
		return false
	}
	l.stopBlocks++
	// The notice carries what the model is told as its Feedback, so the
	// conversation keeps it: a later turn, on this runtime or another,
	// sees why the reply went on.
	told := "Stop hook feedback (your turn is not over; address this, then finish):\n" + v.Reason
	l.host.Emit(engine.Event{Type: engine.EventNotice, Stage: engine.StageHook, Feedback: told, Text: fmt.Sprintf(
		"the Stop hook `%s` blocked the end of the turn (continuation %d of at most %d): %s",
		v.Hook, l.stopBlocks, engine.MaxStopContinuations, v.Reason)})
	l.msgs = append(l.msgs, llm.Message{Role: llm.RoleUser, Text: told})
	return true
}

package tools

import (
	"context"

	"github.com/kaizen-code/kz/engine"
)

// PostToolHooks runs the person's PostToolUse hooks after a call of kz's
// own tools succeeded (tools/hooks implements it). What it returns is
// feedback for the model, appended to the call's result: a hook's block
// reason, its stderr with exit status 2, or the context it adds. The call
// has run by then; nothing a hook says undoes it.
type PostToolHooks interface {
	PostToolUse(ctx context.Context, q engine.GateQuery, output string) (feedback string)
}

// postToolUse runs the hooks of a finished call and appends their
// feedback to its result. A failed or interrupted call gets none (Claude
// Code runs PostToolUse only after a tool succeeded).
func (e *Executor) postToolUse(ctx context.Context, req engine.PermissionRequest, res *ToolResult, status string) {
	h := e.env.PostHooks
	if h == nil || res.IsError || status != engine.ToolStatusOK || ctx.Err() != nil || req.Tool == "" {
		return
	}
	q := engine.GateQuery{SessionID: e.env.SessionID, Workspace: e.env.WS.Dir(), Request: req}
	if fb := h.PostToolUse(ctx, q, res.Output); fb != "" {
		res.Output += "\n\n" + fb
	}
}

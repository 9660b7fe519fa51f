package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
)

// mentionReader reads an @-mentioned file for the TUI exactly as the
// read_file tool would for the model: the tool prepares the call (path
// confined to the workspace), the session's gate decides it with the
// session's mode and permission mode, and only an allowed read runs. A
// read the gate would ask about or deny is refused with its reason.
type mentionReader struct {
	gate engine.Gate
	env  *tools.Env
	sess interface{ State() engine.State }
	dir  string
}

func (r mentionReader) ReadMention(ctx context.Context, path string) (string, error) {
	input, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	call, err := tools.ReadFile{}.Prepare(ctx, r.env, input)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	req := call.Request()
	req.Tool, req.ToolCallID, req.Input = "read_file", "mention", input
	st := r.sess.State()
	v := r.gate.Check(ctx, engine.GateQuery{SessionID: st.ID, Runtime: st.Runtime, Mode: st.Mode, PermissionMode: st.PermissionMode,
		Workspace: r.dir, Request: req})
	if v.Decision != engine.DecisionAllow {
		return "", fmt.Errorf("read_file %s: the gate says %s: %s", path, v.Decision, v.Reason)
	}
	return call.Run(ctx, &tools.RunContext{Env: r.env, ToolCallID: "mention", Emit: func(engine.Event) {}})
}

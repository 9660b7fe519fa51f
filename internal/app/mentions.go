package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
)

// mentionReader reads an @-mentioned file for the TUI exactly as the
// read_file tool would for the model: the tool prepares the call (path
// confined to the workspace), the session decides it with its gate, mode
// and permission mode and journals the decision like any other read, and
// only an allowed read runs. A read the gate would ask about or deny is
// refused with its reason.
type mentionReader struct {
	sess reader
	env  *tools.Env
}

// reader is what a mention needs of the session; *engine.Session
// implements it.
type reader interface {
	CheckRead(ctx context.Context, req engine.PermissionRequest) engine.Verdict
}

// ReadMention implements tui.MentionReader.
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
	if v := r.sess.CheckRead(ctx, req); v.Decision != engine.DecisionAllow {
		return "", fmt.Errorf("read_file %s: the gate says %s: %s", path, v.Decision, v.Reason)
	}
	return call.Run(ctx, &tools.RunContext{Env: r.env, ToolCallID: "mention", Emit: func(engine.Event) {}})
}

package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// PostToolUse runs the PostToolUse hooks that match a call of kz's own
// tools that succeeded, with Claude Code's input (tool_response carries
// the result the model will read), and returns the feedback for the
// model, one paragraph per hook that gave some:
//
//   - exit status 2: its stderr;
//   - "decision": "block": its reason (the call has run; block means
//     "tell the model", as in Claude Code);
//   - hookSpecificOutput.additionalContext.
//
// A hook that fails (cannot start, times out, malformed JSON, another
// exit status) gives no feedback and is logged: the call already ran.
func (r *Runner) PostToolUse(ctx context.Context, q engine.GateQuery, output string) string {
	if !r.Has(PostToolUse) {
		return ""
	}
	name := ClaudeToolName(q.Request.Tool, q.Request.Command != "")
	resp, err := json.Marshal(map[string]any{"output": output})
	if err != nil {
		return ""
	}
	in := Input{SessionID: q.SessionID, Cwd: q.Workspace, ToolName: name, ToolInput: ToolInput(q), ToolUseID: q.Request.ToolCallID,
		ToolResponse: resp, Runtime: q.Runtime, Tool: q.Request.Tool}
	var fb []string
	for _, res := range r.Run(ctx, PostToolUse, []string{name, q.Request.Tool}, in) {
		if res.Blocked() {
			fb = append(fb, fmt.Sprintf("PostToolUse hook `%s`: %s", res.Command, orDefault(res.Stderr, "blocked")))
			continue
		}
		if p := problem(PostToolUse, res); p != "" {
			slog.Warn("hook: "+p, "hook", res.Command, "tool", name)
			continue
		}
		o := res.Output
		if o == nil {
			continue
		}
		if o.Decision == "block" {
			fb = append(fb, fmt.Sprintf("PostToolUse hook `%s`: %s", res.Command, orDefault(o.Reason, "blocked")))
		}
		if s := o.HookSpecificOutput; s != nil && s.AdditionalContext != "" {
			fb = append(fb, s.AdditionalContext)
		}
	}
	return strings.Join(fb, "\n\n")
}

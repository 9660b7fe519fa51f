package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

var _ engine.TurnHooks = (*Runner)(nil)

// BeforePrompt runs the SessionStart hooks (on the session's first turn
// in this process; their matcher is q.Start, "startup" or "resume") and
// the UserPromptSubmit hooks, as Claude Code does:
//
//   - the context a hook adds (hookSpecificOutput.additionalContext, or
//     plain stdout with exit status 0) goes to the model with the prompt;
//   - a UserPromptSubmit hook blocks the prompt with exit status 2 (its
//     stderr is the reason), "decision": "block" (with "reason") or
//     "continue": false (with "stopReason");
//   - a hook that fails (cannot start, times out, writes malformed JSON,
//     exits with another status) is a problem the session shows as an
//     error event; it blocks nothing, as in Claude Code.
func (r *Runner) BeforePrompt(ctx context.Context, q engine.PromptQuery) engine.PromptVerdict {
	var v engine.PromptVerdict
	var ctxs []string
	base := Input{SessionID: q.SessionID, Cwd: q.Workspace, PermissionMode: claudePermissionMode(q.PermissionMode)}
	if q.Start != "" && r.Has(SessionStart) {
		in := base
		in.Source = q.Start
		for _, res := range r.Run(ctx, SessionStart, []string{q.Start}, in) {
			if p := problem(SessionStart, res); p != "" {
				v.Problems = append(v.Problems, p)
				continue
			}
			ctxs = appendContext(ctxs, res)
		}
	}
	if r.Has(UserPromptSubmit) {
		in := base
		in.Prompt = q.Prompt
		for _, res := range r.Run(ctx, UserPromptSubmit, nil, in) {
			if res.Blocked() {
				v.Block, v.Hook, v.Reason = true, res.Command, orDefault(res.Stderr, "no reason given")
				return v
			}
			if p := problem(UserPromptSubmit, res); p != "" {
				v.Problems = append(v.Problems, p)
				continue
			}
			if o := res.Output; o != nil {
				if o.Continue != nil && !*o.Continue {
					v.Block, v.Hook, v.Reason = true, res.Command, orDefault(o.StopReason, "the hook stopped the work")
					return v
				}
				if o.Decision == "block" {
					v.Block, v.Hook, v.Reason = true, res.Command, orDefault(o.Reason, "no reason given")
					return v
				}
			}
			ctxs = appendContext(ctxs, res)
		}
	}
	v.Context = strings.Join(ctxs, "\n\n")
	return v
}

// Notify runs the Notification hooks for a permission prompt; what they
// say is not read (Claude Code reads nothing either), and a failure is
// logged.
func (r *Runner) Notify(ctx context.Context, sessionID, workspace, message string) {
	if !r.Has(Notification) {
		return
	}
	in := Input{SessionID: sessionID, Cwd: workspace, Message: message, NotificationType: "permission_prompt"}
	for _, res := range r.Run(ctx, Notification, []string{"permission_prompt"}, in) {
		if p := problem(Notification, res); p != "" {
			slog.Warn("hook: "+p, "hook", res.Command)
		}
	}
}

// problem describes a hook that failed to answer, or "".
func problem(ev Event, res Result) string {
	switch {
	case res.Err != nil:
		return fmt.Sprintf("the %s hook `%s` failed: %v", ev, res.Command, res.Err)
	case res.ExitCode != 0:
		msg := fmt.Sprintf("the %s hook `%s` exited with status %d", ev, res.Command, res.ExitCode)
		if res.Stderr != "" {
			msg += ": " + firstLine(res.Stderr)
		}
		return msg
	}
	return ""
}

// appendContext adds what a successful hook gives the model.
func appendContext(ctxs []string, res Result) []string {
	if o := res.Output; o != nil {
		if s := o.HookSpecificOutput; s != nil && s.AdditionalContext != "" {
			ctxs = append(ctxs, s.AdditionalContext)
		}
		return ctxs
	}
	if res.Text != "" {
		ctxs = append(ctxs, res.Text)
	}
	return ctxs
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package permission

import (
	"context"

	"github.com/kaizen-code/kz/engine"
)

// StageHook is the stage of the person's PreToolUse hooks.
const StageHook Stage = "hook"

// HookVerdict is what the PreToolUse hooks say about one call. An empty
// Decision means no hook had an opinion (none matched, or each exited
// with a non-blocking error).
type HookVerdict struct {
	Decision engine.Decision
	// Hook names the hook that decided (its command line); Reason is its
	// message.
	Hook   string
	Reason string
}

// PreToolHooks runs the PreToolUse hooks of a call. hooks.Runner
// implements it; the gate only reads the verdict. Running them is the
// one thing the gate does that starts a process, which is why only Check
// and Judge do it, never Evaluate.
type PreToolHooks interface {
	PreToolUse(ctx context.Context, q engine.GateQuery) HookVerdict
}

// Judge is Evaluate with the PreToolUse hooks as a stage: what Check
// decides and `kz policy check` shows. The hooks run, whatever the other
// stages said, as in Claude Code (a hook that logs every call sees every
// call).
//
// A hook's deny or ask joins the other stages' opinions, so it is final
// (deny) or makes the call asked (ask) whatever a rule, a grant or the
// permission mode allowed. A hook's allow answers only the allow stage's
// question, as an allow rule does: it lifts "nothing allowed this" but no
// deny or ask rule, validation, safety check, mode or capability stage,
// and never the headless or permission-mode-deny answer to an ask that
// remains.
func (g *Gate) Judge(ctx context.Context, q engine.GateQuery) Report {
	return g.evaluate(ctx, q, true)
}

// hookStage runs the hooks and reports them as a stage.
func (e *eval) hookStage(ctx context.Context) StageResult {
	v := e.g.opts.Hooks.PreToolUse(ctx, e.q)
	res := StageResult{Stage: StageHook, Decision: v.Decision, Reason: v.Reason}
	if v.Hook != "" {
		res.Rule = "PreToolUse hook `" + v.Hook + "`"
	}
	return res
}

// withHook places the hook stage before the allow stage; a hook's allow
// takes the place of the allow stage's ask.
func withHook(stages []StageResult, hook StageResult) []StageResult {
	if hook.Decision == "" && hook.Reason == "" {
		return stages
	}
	out := make([]StageResult, 0, len(stages)+1)
	for _, s := range stages {
		if s.Stage == StageAllow {
			out = append(out, hook)
			if hook.Decision == engine.DecisionAllow && s.Decision == engine.DecisionAsk {
				s.Decision = ""
				s.Reason += " (answered by the hook)"
			}
		}
		out = append(out, s)
	}
	return out
}

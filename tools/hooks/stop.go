package hooks

import (
	"context"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// The session runs the Stop hooks and, for the CLI runtimes, the
// PostToolUse hooks through these engine interfaces.
var (
	_ engine.StopHooks       = (*Runner)(nil)
	_ engine.ToolResultHooks = (*Runner)(nil)
)

// Stop runs the Stop hooks when the agent would end its turn, as Claude
// Code does:
//
//   - exit status 2 blocks the end, its stderr being what the agent is
//     told; so does "decision": "block" with its "reason";
//   - "continue": false lets the turn end whatever another hook said (it
//     is the stronger answer in Claude Code too);
//   - a hook that fails (cannot start, times out, malformed JSON, another
//     exit status) is a problem shown as an error event; it blocks
//     nothing.
//
// stop_hook_active is q.Active, so that a hook can tell a turn it already
// sent back to work from a fresh one.
func (r *Runner) Stop(ctx context.Context, q engine.StopQuery) engine.StopVerdict {
	var v engine.StopVerdict
	if !r.Has(Stop) {
		return v
	}
	active := q.Active
	in := Input{SessionID: q.SessionID, Cwd: q.Workspace, PermissionMode: claudePermissionMode(q.PermissionMode),
		StopHookActive: &active, Runtime: q.Runtime}
	var reasons, hooks []string
	halt := false
	for _, res := range r.Run(ctx, Stop, nil, in) {
		if res.Blocked() {
			hooks = append(hooks, res.Command)
			reasons = append(reasons, orDefault(res.Stderr, "the Stop hook `"+res.Command+"` blocked the end of the turn"))
			continue
		}
		if p := problem(Stop, res); p != "" {
			v.Problems = append(v.Problems, p)
			continue
		}
		o := res.Output
		switch {
		case o == nil:
		case o.Continue != nil && !*o.Continue:
			halt = true
		case o.Decision == "block":
			hooks = append(hooks, res.Command)
			reasons = append(reasons, orDefault(o.Reason, "the Stop hook `"+res.Command+"` blocked the end of the turn"))
		}
	}
	if halt || len(reasons) == 0 {
		return v
	}
	v.Block = true
	v.Hook = strings.Join(hooks, "`, `")
	v.Reason = strings.Join(reasons, "\n\n")
	return v
}

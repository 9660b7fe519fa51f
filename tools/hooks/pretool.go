package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

var _ permission.PreToolHooks = (*Runner)(nil)

// PreToolUse runs the PreToolUse hooks that match the call and combines
// their answers, the most restrictive winning (deny, then ask, then
// allow), as Claude Code does:
//
//   - exit status 2 denies, with the hook's stderr as the reason the
//     model reads;
//   - JSON on stdout answers with hookSpecificOutput.permissionDecision
//     (allow, deny, ask; "defer" is ask), or the older decision
//     ("approve" allows, "block" denies); "continue": false denies with
//     its stopReason;
//   - a hook that fails to answer (cannot start, its program is not
//     found or not executable — shell status 127 or 126 —, times out,
//     writes malformed JSON) makes the call asked, never allowed: a broken
//     policy hook must not let through what it exists to stop;
//   - any other exit status is a non-blocking error, as in Claude Code:
//     the hook has no opinion, and its stderr is logged.
func (r *Runner) PreToolUse(ctx context.Context, q engine.GateQuery) permission.HookVerdict {
	if !r.Has(PreToolUse) {
		return permission.HookVerdict{}
	}
	name := ClaudeToolName(q.Request.Tool, q.Request.Command != "")
	in := Input{SessionID: q.SessionID, Cwd: q.Workspace, PermissionMode: claudePermissionMode(q.PermissionMode),
		ToolName: name, ToolInput: ToolInput(q), ToolUseID: q.Request.ToolCallID, Runtime: q.Runtime, Tool: q.Request.Tool}
	results := r.Run(ctx, PreToolUse, []string{name, q.Request.Tool}, in)
	var best permission.HookVerdict
	var notes []string
	for _, res := range results {
		v, note := preToolVerdict(res)
		if note != "" {
			slog.Warn("hook: "+note, "hook", res.Command, "tool", name)
			notes = append(notes, note)
		}
		if v.Decision != "" && (best.Decision == "" || v.Decision.Stricter(best.Decision) != best.Decision) {
			best = v
		}
	}
	if best.Decision == "" && len(notes) > 0 {
		best.Reason = strings.Join(notes, "; ")
	}
	return best
}

// preToolVerdict reads one hook's result; note describes a non-blocking
// error.
func preToolVerdict(res Result) (v permission.HookVerdict, note string) {
	v.Hook = res.Command
	switch {
	case res.Err != nil:
		v.Decision = engine.DecisionAsk
		v.Reason = fmt.Sprintf("the PreToolUse hook `%s` gave no answer (%v), so the call is asked", res.Command, res.Err)
		return v, ""
	case res.ExitCode == 126 || res.ExitCode == 127:
		// The shell could not find or run the hook's program: the hook
		// never looked at the call, which is a failure to answer, not
		// an opinion.
		v.Decision = engine.DecisionAsk
		v.Reason = fmt.Sprintf("the PreToolUse hook `%s` could not run (status %d: %s), so the call is asked", res.Command, res.ExitCode, firstLine(res.Stderr))
		return v, ""
	case res.ExitCode == 2:
		v.Decision, v.Reason = engine.DecisionDeny, res.Stderr
		if v.Reason == "" {
			v.Reason = "blocked by the PreToolUse hook `" + res.Command + "`"
		}
		return v, ""
	case res.ExitCode != 0:
		msg := fmt.Sprintf("the PreToolUse hook `%s` exited with status %d", res.Command, res.ExitCode)
		if res.Stderr != "" {
			msg += ": " + firstLine(res.Stderr)
		}
		return permission.HookVerdict{}, msg
	case res.Output == nil:
		return permission.HookVerdict{}, ""
	}
	o := res.Output
	if o.Continue != nil && !*o.Continue {
		v.Decision, v.Reason = engine.DecisionDeny, o.StopReason
		if v.Reason == "" {
			v.Reason = "the PreToolUse hook `" + res.Command + "` stopped the work"
		}
		return v, ""
	}
	if s := o.HookSpecificOutput; s != nil && s.PermissionDecision != "" {
		switch s.PermissionDecision {
		case "allow":
			v.Decision = engine.DecisionAllow
		case "deny":
			v.Decision = engine.DecisionDeny
		default:
			v.Decision = engine.DecisionAsk
		}
		v.Reason = s.PermissionDecisionReason
	} else {
		switch o.Decision {
		case "approve":
			v.Decision = engine.DecisionAllow
		case "block":
			v.Decision = engine.DecisionDeny
		default:
			return permission.HookVerdict{}, ""
		}
		v.Reason = o.Reason
	}
	if v.Reason == "" {
		v.Reason = "the PreToolUse hook `" + res.Command + "` says " + string(v.Decision)
	}
	return v, ""
}

// ClaudeToolName maps a tool name, kz's or any runtime's, to Claude
// Code's, so that one matcher ("Bash", "Edit|Write") selects the same
// calls on every runtime. shell says the call runs a command (a runtime
// whose tool name kz does not know but that sent a command line).
//
//	Bash      bash (kz), shell, local_shell, exec_command (Codex),
//	          run_shell_command (Gemini CLI), shell_command
//	Read      read_file (kz, Gemini CLI), read_many_files, view_image
//	LS        list_dir (kz), list_directory (Gemini CLI)
//	Glob      glob (kz, Gemini CLI)
//	Grep      grep (kz), search_file_content (Gemini CLI)
//	Edit      edit_file (kz), apply_patch (Codex, kz's patch proposals),
//	          replace (Gemini CLI)
//	Write     write_file (kz, Gemini CLI)
//	WebFetch  web_fetch
//
// Claude Code's own names, MultiEdit, NotebookEdit and every other name
// (MCP tools, mcp__SERVER__TOOL) stay as they are.
func ClaudeToolName(tool string, shell bool) string {
	switch tool {
	case "list_dir", "list_directory":
		return "LS"
	case "glob":
		return "Glob"
	case "grep", "search_file_content":
		return "Grep"
	case "MultiEdit", "NotebookEdit", "NotebookRead", "LS", "Glob", "Grep":
		return tool
	}
	switch permission.KindOf(tool) {
	case permission.KindBash:
		return "Bash"
	case permission.KindRead:
		return "Read"
	case permission.KindEdit:
		return "Edit"
	case permission.KindWrite:
		return "Write"
	case permission.KindWebFetch:
		return "WebFetch"
	}
	if tool == "" && shell {
		return "Bash"
	}
	return tool
}

// ToolInput is the tool_input a hook reads: the call's own input, with
// Claude Code's fields set from what the gate read of it, so a hook that
// reads tool_input.command or tool_input.file_path works whatever the
// runtime spelt: "command" is the command line (Codex sends an argv),
// "file_path" the first path made absolute.
func ToolInput(q engine.GateQuery) json.RawMessage {
	m := map[string]any{}
	if raw := bytes.TrimSpace(q.Request.Input); len(raw) > 0 && raw[0] == '{' {
		// An input that is not an object is kept only through the
		// fields below.
		_ = json.Unmarshal(raw, &m)
	}
	if q.Request.Command != "" {
		m["command"] = q.Request.Command
	}
	if len(q.Request.Paths) > 0 {
		p := q.Request.Paths[0]
		if !filepath.IsAbs(p) && q.Workspace != "" {
			p = filepath.Join(q.Workspace, p)
		}
		if _, ok := m["file_path"].(string); !ok {
			m["file_path"] = p
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// claudePermissionMode names kz's permission mode as Claude Code does.
func claudePermissionMode(pm engine.PermissionMode) string {
	switch pm {
	case engine.PermissionAcceptEdits:
		return "acceptEdits"
	case engine.PermissionYolo:
		return "bypassPermissions"
	case engine.PermissionDeny:
		return "dontAsk"
	case "":
		return ""
	}
	return "default"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

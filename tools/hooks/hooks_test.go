package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script writes an executable hook script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// pre builds a runner whose one PreToolUse hook, for matcher, is command.
func pre(t *testing.T, matcher, command string, timeout float64) *Runner {
	t.Helper()
	r, err := New(Options{Workspace: t.TempDir(), User: Config{"PreToolUse": {{Matcher: matcher,
		Hooks: []Command{{Type: "command", Command: command, Timeout: timeout}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bashQuery(cmd string) engine.GateQuery {
	return engine.GateQuery{SessionID: "s1", Runtime: "native", Workspace: "/w", PermissionMode: engine.PermissionAsk,
		Request: engine.PermissionRequest{ToolCallID: "c1", Tool: "bash", Command: cmd, Input: json.RawMessage(`{"command":` + quote(cmd) + `}`)}}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// blockPush is the README's worked example: it blocks git push with exit
// status 2 and a message on stderr.
const blockPush = `input=$(cat)
case "$input" in
*'"command":"git push'*) echo "git push is not allowed here: open a pull request instead" >&2; exit 2;;
esac
exit 0
`

func TestPreToolUseBlocksGitPushWithExit2(t *testing.T) {
	r := pre(t, "Bash", "sh "+script(t, t.TempDir(), "no-push.sh", blockPush), 0)
	ctx := context.Background()
	for _, tc := range []struct {
		cmd  string
		want engine.Decision
	}{{"git push origin main", engine.DecisionDeny}, {"git push", engine.DecisionDeny}, {"git status", ""}, {"ls", ""}} {
		v := r.PreToolUse(ctx, bashQuery(tc.cmd))
		if v.Decision != tc.want {
			t.Errorf("%q: decision %q (%s), want %q", tc.cmd, v.Decision, v.Reason, tc.want)
		}
		if tc.want == engine.DecisionDeny && (v.Reason != "git push is not allowed here: open a pull request instead" || !strings.Contains(v.Hook, "no-push.sh")) {
			t.Errorf("%q: reason %q hook %q", tc.cmd, v.Reason, v.Hook)
		}
	}
	// Another runtime's shell tool is Bash to the matcher too.
	q := bashQuery("git push")
	q.Request.Tool, q.Runtime = "shell", "codex"
	if v := r.PreToolUse(ctx, q); v.Decision != engine.DecisionDeny {
		t.Errorf("codex's shell: %+v", v)
	}
	q.Request.Tool = "run_shell_command"
	if v := r.PreToolUse(ctx, q); v.Decision != engine.DecisionDeny {
		t.Errorf("gemini's run_shell_command: %+v", v)
	}
}

func TestPreToolUseJSONDecisions(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, out  string
		want       engine.Decision
		wantReason string
	}{
		{"allow", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine by policy"}}`, engine.DecisionAllow, "fine by policy"},
		{"deny", `{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no network tools"}}`, engine.DecisionDeny, "no network tools"},
		{"ask", `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check with a human"}}`, engine.DecisionAsk, "check with a human"},
		{"defer is ask", `{"hookSpecificOutput":{"permissionDecision":"defer"}}`, engine.DecisionAsk, "says ask"},
		{"legacy approve", `{"decision":"approve","reason":"old style"}`, engine.DecisionAllow, "old style"},
		{"legacy block", `{"decision":"block","reason":"old block"}`, engine.DecisionDeny, "old block"},
		{"continue false", `{"continue":false,"stopReason":"stop everything"}`, engine.DecisionDeny, "stop everything"},
		{"no decision", `{"suppressOutput":true}`, "", ""},
		{"plain text", `just a note`, "", ""},
		{"empty", ``, "", ""},
		{"malformed", `{"hookSpecificOutput":`, engine.DecisionAsk, "not valid hook JSON"},
		{"wrong type", `{"continue":"yes"}`, engine.DecisionAsk, "not valid hook JSON"},
		{"unknown decision", `{"hookSpecificOutput":{"permissionDecision":"maybe"}}`, engine.DecisionAsk, `unknown permissionDecision "maybe"`},
		{"other event", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"allow"}}`, engine.DecisionAsk, "answers another event"},
		{"two values", `{"decision":"approve"} {"decision":"block"}`, engine.DecisionAsk, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "out"), []byte(tc.out), 0o644); err != nil {
				t.Fatal(err)
			}
			r := pre(t, "", "cat >/dev/null; cat "+filepath.Join(dir, "out"), 0)
			v := r.PreToolUse(ctx, bashQuery("make"))
			if v.Decision != tc.want || !strings.Contains(v.Reason, tc.wantReason) {
				t.Errorf("decision %q reason %q, want %q with %q", v.Decision, v.Reason, tc.want, tc.wantReason)
			}
		})
	}
}

func TestPreToolUseExitStatuses(t *testing.T) {
	ctx := context.Background()
	r := pre(t, "*", "echo blocked by exit two >&2; exit 2", 0)
	if v := r.PreToolUse(ctx, bashQuery("x")); v.Decision != engine.DecisionDeny || v.Reason != "blocked by exit two" {
		t.Errorf("exit 2: %+v", v)
	}
	r = pre(t, "*", "exit 2", 0)
	if v := r.PreToolUse(ctx, bashQuery("x")); v.Decision != engine.DecisionDeny || !strings.Contains(v.Reason, "blocked by the PreToolUse hook") {
		t.Errorf("exit 2 without a message: %+v", v)
	}
	// Any other status is a non-blocking error, as in Claude Code: no
	// opinion, and the reason names it.
	r = pre(t, "*", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo oops >&2; exit 1`, 0)
	if v := r.PreToolUse(ctx, bashQuery("x")); v.Decision != "" || !strings.Contains(v.Reason, "exited with status 1: oops") {
		t.Errorf("exit 1: %+v", v)
	}
}

func TestPreToolUseTimeoutAsksAndKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The hook's child outlives the shell unless the group is killed.
	r := pre(t, "*", "sleep 300 & echo $! > "+pidFile+"; wait", 0.5)
	v := r.PreToolUse(context.Background(), bashQuery("x"))
	if v.Decision != engine.DecisionAsk || !strings.Contains(v.Reason, "timed out after 500ms") {
		t.Fatalf("timeout: %+v", v)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The group was sent SIGKILL; wait (bounded) for the orphan to be
	// reaped rather than racing its exit.
	for i := 0; ; i++ {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		if i == 100 {
			t.Fatalf("the hook's child %d outlived the timeout", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The cancelled turn kills the hook the same way.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := r.PreToolUse(ctx, bashQuery("x")); v.Decision != engine.DecisionAsk || !strings.Contains(v.Reason, "cancelled") {
		t.Errorf("cancelled: %+v", v)
	}
}

func TestPreToolUseMostRestrictiveWins(t *testing.T) {
	r, err := New(Options{Workspace: t.TempDir(), User: Config{"PreToolUse": {
		{Matcher: "Bash", Hooks: []Command{{Command: `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`}}},
		{Matcher: "Bash|Write", Hooks: []Command{{Command: `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"second opinion"}}'`}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.PreToolUse(context.Background(), bashQuery("x")); v.Decision != engine.DecisionAsk || v.Reason != "second opinion" {
		t.Errorf("allow and ask: %+v", v)
	}
}

func TestMatchers(t *testing.T) {
	for _, tc := range []struct {
		matcher string
		yes, no []string
	}{
		{"", []string{"Bash", "mcp__x__y"}, nil},
		{"*", []string{"Bash", "Write"}, nil},
		{"Bash", []string{"Bash"}, []string{"bash", "Bashful", "XBash"}},
		{"Edit|Write", []string{"Edit", "Write"}, []string{"MultiEdit", "Read"}},
		{"Notebook.*", []string{"NotebookEdit", "NotebookRead"}, []string{"Edit"}},
		{"mcp__github__.*", []string{"mcp__github__create_issue"}, []string{"mcp__gitlab__x"}},
		{"^(Read|Grep)$", []string{"Read", "Grep"}, []string{"Reader"}},
	} {
		m, err := compileMatcher(tc.matcher)
		if err != nil {
			t.Fatalf("%q: %v", tc.matcher, err)
		}
		for _, n := range tc.yes {
			if !m(n) {
				t.Errorf("%q does not match %q", tc.matcher, n)
			}
		}
		for _, n := range tc.no {
			if m(n) {
				t.Errorf("%q matches %q", tc.matcher, n)
			}
		}
	}
}

func TestConfigErrorsNameTheHook(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{"PreToolUze": {{Hooks: []Command{{Command: "x"}}}}}, "hooks.PreToolUze: unknown event"},
		{Config{"PreToolUse": {{Matcher: "Bash(", Hooks: []Command{{Command: "x"}}}}}, `hooks.PreToolUse[0].matcher "Bash(": not a regular expression`},
		{Config{"Stop": {{Hooks: []Command{{Type: "prompt", Command: "x"}}}}}, `hooks.Stop[0].hooks[0]: type "prompt" is not supported`},
		{Config{"Stop": {{Hooks: []Command{{Command: "  "}}}}}, "hooks.Stop[0].hooks[0]: empty command"},
		{Config{"Stop": {{Hooks: []Command{{Command: "x", Timeout: -1}}}}}, "timeout -1 is not between"},
		{Config{"Stop": {{}}}, "hooks.Stop[0]: no hooks"},
	} {
		err := Validate(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.c, err, tc.want)
		}
	}
	if err := Validate(Config{"PreToolUse": {{Matcher: "Bash", Hooks: []Command{{Type: "command", Command: "x", Timeout: 5}}}}}); err != nil {
		t.Errorf("a good config: %v", err)
	}
}

func TestUntrustedProjectHooksNeverRun(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	proj := Config{"PreToolUse": {{Hooks: []Command{{Command: "touch " + marker + "; exit 2"}}}}}
	r, err := New(Options{Workspace: dir, Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.PreToolUse(context.Background(), bashQuery("x")); v.Decision != "" || r.Has(PreToolUse) {
		t.Errorf("untrusted project hook decided %+v", v)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an untrusted project's hook ran")
	}
	r, err = New(Options{Workspace: dir, Project: proj, ProjectTrusted: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.PreToolUse(context.Background(), bashQuery("x")); v.Decision != engine.DecisionDeny {
		t.Errorf("trusted project hook: %+v", v)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the trusted project's hook did not run")
	}
}

func TestHookInputIsClaudeCodes(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "stdin.json")
	r, err := New(Options{Workspace: dir, Environ: []string{"PATH=" + os.Getenv("PATH"), "SECRET_TOKEN=s3cret", "HOME=/h"},
		User: Config{"PreToolUse": {{Matcher: "Bash", Hooks: []Command{{Command: "cat > " + got + "; env > " + got + ".env; pwd > " + got + ".pwd"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	// Codex sends its command as an argv; the hook reads the command line.
	q := engine.GateQuery{SessionID: "s9", Runtime: "codex", Workspace: dir, PermissionMode: engine.PermissionYolo,
		Request: engine.PermissionRequest{ToolCallID: "item-1", Tool: "shell", Command: "git push", Input: json.RawMessage(`{"command":["bash","-lc","git push"],"cwd":"/w"}`)}}
	r.PreToolUse(context.Background(), q)
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	ti, _ := in["tool_input"].(map[string]any)
	if in["session_id"] != "s9" || in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Bash" || in["cwd"] != dir ||
		in["tool_use_id"] != "item-1" || in["permission_mode"] != "bypassPermissions" || in["kz_runtime"] != "codex" || in["kz_tool"] != "shell" ||
		ti["command"] != "git push" || ti["cwd"] != "/w" {
		t.Errorf("stdin %s", b)
	}
	env, _ := os.ReadFile(got + ".env")
	if strings.Contains(string(env), "s3cret") || !strings.Contains(string(env), "CLAUDE_PROJECT_DIR="+dir) {
		t.Errorf("hook environment: %s", env)
	}
	if pwd, _ := os.ReadFile(got + ".pwd"); strings.TrimSpace(string(pwd)) != dir {
		t.Errorf("hook cwd %q, want the workspace", pwd)
	}
}

func TestClaudeToolNames(t *testing.T) {
	for in, want := range map[string]string{
		"bash": "Bash", "shell": "Bash", "run_shell_command": "Bash", "Bash": "Bash",
		"read_file": "Read", "list_dir": "LS", "list_directory": "LS", "glob": "Glob", "grep": "Grep", "search_file_content": "Grep",
		"edit_file": "Edit", "replace": "Edit", "apply_patch": "Edit", "MultiEdit": "MultiEdit",
		"write_file": "Write", "web_fetch": "WebFetch", "mcp__gh__issue": "mcp__gh__issue", "Task": "Task",
	} {
		if got := ClaudeToolName(in, false); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if got := ClaudeToolName("", true); got != "Bash" {
		t.Errorf("a command without a tool name: %s", got)
	}
	// A file tool's path reaches the hook as Claude Code's absolute
	// file_path.
	q := engine.GateQuery{Workspace: "/w", Request: engine.PermissionRequest{Tool: "write_file", Paths: []string{"a/b.go"}, Input: json.RawMessage(`{"path":"a/b.go"}`)}}
	var ti map[string]any
	if err := json.Unmarshal(ToolInput(q), &ti); err != nil || ti["file_path"] != "/w/a/b.go" || ti["path"] != "a/b.go" {
		t.Errorf("tool_input %v %v", ti, err)
	}
}

// A hook whose program is missing never looked at the call: that is a
// failure to answer (asked), not the non-blocking error of a hook that
// ran and failed.
func TestMissingHookProgramAsks(t *testing.T) {
	r := pre(t, "*", "/nonexistent/hook.sh", 0)
	if v := r.PreToolUse(context.Background(), bashQuery("x")); v.Decision != engine.DecisionAsk || !strings.Contains(v.Reason, "could not run (status 127") {
		t.Errorf("missing program: %+v", v)
	}
}

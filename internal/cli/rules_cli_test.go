package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// decided returns the permission_decided events of a stream-json run.
func decided(t *testing.T, out string) []engine.Event {
	t.Helper()
	var evs []engine.Event
	for _, ev := range streamEvents(t, out) {
		if ev.Type == engine.EventPermissionDecided {
			evs = append(evs, ev)
		}
	}
	return evs
}

// TestRulesFromCLIDenyInYolo: --deny 'Bash(rm:*)' denies the scripted
// `rm -rf build` even in yolo, and the decision names the CLI rule.
func TestRulesFromCLIDenyInYolo(t *testing.T) {
	sb := newSandbox(t)
	base := []string{"-p", "clean", "--runtime", "scripted", "--script", script("deny.jsonl"), "--permission-mode", "yolo", "--output-format", "stream-json"}
	// Without the rule yolo lets it run: the rule is what denies below.
	out, errOut, code := sb.kz(base...)
	if code != 0 || !strings.Contains(out, "build is gone.") {
		t.Fatalf("yolo without rules: exit %d %s %s", code, out, errOut)
	}
	out, errOut, code = sb.kz(append(base, "--deny", "Bash(rm:*)")...)
	if code != 0 || !strings.Contains(out, "I did not delete build.") || strings.Contains(out, "build is gone.") {
		t.Fatalf("--deny Bash(rm:*) did not deny: exit %d %s %s", code, out, errOut)
	}
	ds := decided(t, out)
	if len(ds) != 1 || ds[0].Decision != engine.DecisionDeny || ds[0].Stage != "deny_rule" || !strings.Contains(ds[0].Rule, "Bash(rm:*) (cli)") {
		t.Fatalf("permission_decided %+v, want deny by the cli rule Bash(rm:*)", ds)
	}
}

// TestRulesFromCLIAllowUnderDenyMode: --allow 'Bash(npm run test:*)' lets
// `npm run test` run under --permission-mode deny. (`git status` is proven
// read-only and allowed without a rule, so it cannot show the rule working.)
func TestRulesFromCLIAllowUnderDenyMode(t *testing.T) {
	sb := newSandbox(t)
	s := `{"kz_script": 1, "model": "careful", "capabilities": ["text_completion", "native_tool_loop", "filesystem_read", "filesystem_edit", "shell"]}
{"type": "session_started"}
{"type": "tool_call_started", "tool_call_id": "t1", "tool": "bash", "input": {"command": "npm run test"}}
{"type": "permission_requested", "tool_call_id": "t1", "tool": "bash", "command": "npm run test"}
{"type": "tool_call_finished", "tool_call_id": "t1", "tool": "bash", "output": "clean", "when": "allow"}
{"type": "tool_call_finished", "tool_call_id": "t1", "tool": "bash", "output": "denied by kz", "is_error": true, "when": "deny"}
{"type": "assistant_message", "text": "status refused.", "when": "deny"}
{"type": "assistant_message", "text": "status ran.", "when": "allow"}
`
	path := filepath.Join(t.TempDir(), "status.jsonl")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"-p", "status", "--runtime", "scripted", "--script", path, "--permission-mode", "deny", "--output-format", "stream-json"}
	out, errOut, code := sb.kz(base...)
	if code != 0 || !strings.Contains(out, "status refused.") {
		t.Fatalf("deny mode without rules: exit %d %s %s", code, out, errOut)
	}
	out, errOut, code = sb.kz(append(base, "--allow", "Bash(npm run test:*)")...)
	if code != 0 || !strings.Contains(out, "status ran.") {
		t.Fatalf("--allow Bash(npm run test:*) did not allow: exit %d %s %s", code, out, errOut)
	}
	ds := decided(t, out)
	if len(ds) != 1 || ds[0].Decision != engine.DecisionAllow || !strings.Contains(ds[0].Rule, "Bash(npm run test:*) (cli)") {
		t.Fatalf("permission_decided %+v, want allow by a cli rule", ds)
	}
}

// TestRulesFromCLIMalformed: a malformed rule is a usage error (exit 2)
// naming the flag and the rule, for kz -p and kz policy check alike.
func TestRulesFromCLIMalformed(t *testing.T) {
	sb := newSandbox(t)
	for _, args := range [][]string{
		{"-p", "x", "--runtime", "scripted", "--script", script("hello.jsonl"), "--deny", "Bash(rm:*"},
		{"policy", "check", "--tool", "bash", "--input", `{"command":"ls"}`, "--deny", "Bash(rm:*"},
	} {
		_, errOut, code := sb.kz(args...)
		if code != 2 || !strings.Contains(errOut, "-deny") || !strings.Contains(errOut, "Bash(rm:*") || !strings.Contains(errOut, "parenthesis") {
			t.Errorf("kz %v: exit %d %q, want exit 2 naming --deny and the rule", args, code, errOut)
		}
	}
	_, errOut, code := sb.kz("-p", "x", "--allow", "Bad Tool(x)")
	if code != 2 || !strings.Contains(errOut, "-allow") || !strings.Contains(errOut, "Bad Tool(x)") {
		t.Errorf("--allow 'Bad Tool(x)': exit %d %q", code, errOut)
	}
}

// TestPolicyCheckRulesFromCLI: kz policy check takes the same flags and
// reports the deny-rule stage with a rule whose source is cli.
func TestPolicyCheckRulesFromCLI(t *testing.T) {
	sb := newSandbox(t)
	out, errOut, code := sb.kz("policy", "check", "--tool", "bash", "--input", `{"command":"git status && rm -rf build"}`,
		"--permission-mode", "yolo", "--allow", "Bash(git status:*)", "--deny", "Bash(rm:*)", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct{ Decision, Stage, Rule, Reason string }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Decision != "deny" || rep.Stage != "deny_rule" || !strings.Contains(rep.Rule, "Bash(rm:*)") || !strings.Contains(rep.Rule, "(cli)") {
		t.Fatalf("policy check: %+v", rep)
	}
	out, _, code = sb.kz("policy", "check", "--tool", "bash", "--input", `{"command":"git status"}`, "--allow", "Bash(git status:*)")
	if code != 0 || !strings.Contains(out, "decision: allow") || !strings.Contains(out, "(cli)") {
		t.Fatalf("policy check text: %d %s", code, out)
	}
}

// TestHeadlessFinalResultDenials: kz -p's stream-json and json outputs
// carry the turn's denials on final_result.
func TestHeadlessFinalResultDenials(t *testing.T) {
	sb := newSandbox(t)
	args := []string{"-p", "clean", "--runtime", "scripted", "--script", script("deny.jsonl"), "--deny", "Bash(rm:*)"}
	out, errOut, code := sb.kz(append(args, "--output-format", "stream-json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := streamEvents(t, out)
	last := evs[len(evs)-1]
	d := last.PermissionDenials
	if last.Type != engine.EventFinalResult || len(d) != 1 || d[0].Tool != "bash" || d[0].ToolCallID != "t1" || d[0].Input != "rm -rf build" {
		t.Fatalf("final_result %+v", last)
	}
	out, errOut, code = sb.kz(append(args, "--output-format", "json")...)
	if code != 0 || !strings.Contains(out, `"permission_denials":[{"tool":"bash","tool_call_id":"t1","input":"rm -rf build"`) {
		t.Fatalf("json output: exit %d %s %s", code, out, errOut)
	}
}

// patchRetryRun runs the patch-proposal CLI script whose first proposal
// does not match and whose second would apply, and returns how many
// proposals the model was asked for and greeting.txt afterwards.
func patchRetryRun(t *testing.T, sb *sandbox, extra ...string) (int, string, string, int) {
	t.Helper()
	p := filepath.Join(sb.workspace, "greeting.txt")
	if err := os.WriteFile(p, []byte("hello moon\r\nbye\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.workspace, "notes.txt"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A previous run may have applied the proposal: start from its input
	// tree again.
	if err := os.RemoveAll(filepath.Join(sb.workspace, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(sb.workspace, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(filepath.Dir(scriptDir), "patch", "cli", "propose-retry-verify.jsonl")
	args := append([]string{"-p", "greet the world", "--mode", "patch-proposal", "--runtime", "scripted", "--script", s,
		"--permission-mode", "accept-edits", "--output-format", "stream-json"}, extra...)
	out, errOut, code := sb.kz(args...)
	if code == 2 {
		return 0, "", errOut, code
	}
	proposals := 0
	for _, ev := range streamEvents(t, out) {
		if ev.Type == engine.EventAssistantMessage && strings.HasPrefix(ev.Text, "SUMMARY:") {
			proposals++
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return proposals, string(b), errOut, code
}

// TestPatchRetriesFlagAndConfig: --patch-retries 0 (or patch_retries = 0
// in the config) stops after the first failed proposal, nothing applied;
// the flag overrides the config; out of range is a usage error.
func TestPatchRetriesFlagAndConfig(t *testing.T) {
	sb := newSandbox(t)
	n, greeting, errOut, _ := patchRetryRun(t, sb)
	if n != 2 || greeting != "hello world\r\nbye\r\n" {
		t.Fatalf("default retries: %d proposals, greeting %q: %s", n, greeting, errOut)
	}
	n, greeting, errOut, _ = patchRetryRun(t, sb, "--patch-retries", "0")
	if n != 1 || greeting != "hello moon\r\nbye\r\n" {
		t.Fatalf("--patch-retries 0: %d proposals, greeting %q: %s", n, greeting, errOut)
	}
	sb.userConfig("patch_retries = 0\n")
	n, greeting, errOut, _ = patchRetryRun(t, sb)
	if n != 1 || greeting != "hello moon\r\nbye\r\n" {
		t.Fatalf("patch_retries = 0: %d proposals, greeting %q: %s", n, greeting, errOut)
	}
	n, greeting, errOut, _ = patchRetryRun(t, sb, "--patch-retries", "1")
	if n != 2 || greeting != "hello world\r\nbye\r\n" {
		t.Fatalf("--patch-retries 1 over patch_retries = 0: %d proposals, greeting %q: %s", n, greeting, errOut)
	}
	for _, bad := range []string{"-1", "11", "two"} {
		if _, _, errOut, code := patchRetryRun(t, sb, "--patch-retries", bad); code != 2 || !strings.Contains(errOut, "patch-retries") {
			t.Errorf("--patch-retries %s: exit %d %q", bad, code, errOut)
		}
	}
}

// TestPolicyCheckUsesTheConfiguredModes: without --mode and
// --permission-mode, kz policy check judges with the configuration's
// default_mode and permission_mode, as kz -p does; the flags override.
func TestPolicyCheckUsesTheConfiguredModes(t *testing.T) {
	sb := newSandbox(t)
	check := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := sb.kz(append([]string{"policy", "check"}, args...)...)
		if code != 0 {
			t.Fatalf("kz policy check %v: exit %d %s", args, code, errOut)
		}
		return out, code
	}
	npm := []string{"--tool", "bash", "--input", `{"command":"npm run test"}`}
	if out, _ := check(npm...); !strings.Contains(out, "decision: ask") {
		t.Fatalf("no config: %s", out)
	}
	sb.userConfig("permission_mode = \"deny\"\n")
	if out, _ := check(npm...); !strings.Contains(out, "decision: deny") || !strings.Contains(out, "permission mode deny") {
		t.Fatalf("permission_mode = deny: %s", out)
	}
	if out, _ := check(append(npm, "--permission-mode", "yolo")...); !strings.Contains(out, "decision: allow") {
		t.Fatalf("--permission-mode yolo over the config: %s", out)
	}
	sb.userConfig("default_mode = \"analysis-only\"\npermission_mode = \"yolo\"\n")
	write := []string{"--tool", "write_file", "--input", `{"path":"notes.txt","content":"x"}`}
	if out, _ := check(write...); !strings.Contains(out, "decision: deny") || !strings.Contains(out, "stage:    mode") {
		t.Fatalf("default_mode = analysis-only: %s", out)
	}
	if out, _ := check(append(write, "--mode", "full-autonomous")...); !strings.Contains(out, "decision: allow") {
		t.Fatalf("--mode full-autonomous over the config: %s", out)
	}
}

// TestPolicyCheckRejectsUnknownTools: a tool name the gate cannot read is a
// usage error listing the known ones, not an answer about nothing; other
// agents' names and MCP tools are judged.
func TestPolicyCheckRejectsUnknownTools(t *testing.T) {
	sb := newSandbox(t)
	_, errOut, code := sb.kz("policy", "check", "--tool", "write", "--input", `{"path":".git/config"}`, "--permission-mode", "yolo")
	if code != 2 || !strings.Contains(errOut, `--tool "write": unknown tool`) || !strings.Contains(errOut, "write_file") ||
		!strings.Contains(errOut, "Write") || !strings.Contains(errOut, "mcp__") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("exit %d %q, want a one-line usage error listing the tools", code, errOut)
	}
	for _, tool := range []string{"write_file", "Write"} {
		out, errOut, code := sb.kz("policy", "check", "--tool", tool, "--input", `{"path":".git/config","file_path":".git/config","content":"x"}`, "--permission-mode", "yolo")
		if code != 0 || !strings.Contains(out, "decision: deny") {
			t.Fatalf("%s: exit %d %s %s", tool, code, out, errOut)
		}
	}
	if _, errOut, code := sb.kz("policy", "check", "--tool", "mcp__github__create_issue", "--input", `{}`); code != 0 {
		t.Fatalf("mcp tool: exit %d %s", code, errOut)
	}
}

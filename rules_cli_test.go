package main

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

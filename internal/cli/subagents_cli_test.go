package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsShowSubagents runs kz -p on a script whose turn delegates
// to a subagent (on the same scripted runtime), then checks that kz
// sessions list counts the child under its parent instead of listing it,
// that kz sessions show lists the parent's children, and that a child's
// show names its parent.
func TestSessionsShowSubagents(t *testing.T) {
	sb := newSandbox(t)
	path := filepath.Join(t.TempDir(), "task.jsonl")
	body := `{"task":{"prompt":"look around","description":"look around","read_only":true},"tool_call_id":"call-7"}
{"type":"assistant_message","text":"parent done"}
{"end_turn":true}
{"type":"assistant_message","text":"child answer"}
`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sb.kz("-p", "delegate", "--script", path, "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"output":"child answer"`) {
		t.Fatalf("the task call's result is not the child's answer:\n%s", out)
	}
	list, _, code := sb.kz("sessions", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[1], "(+1 subagent)") {
		t.Fatalf("sessions list (exit %d):\n%s", code, list)
	}
	parent := strings.Fields(lines[1])[0]
	show, _, code := sb.kz("sessions", "show", parent)
	if code != 0 || !strings.Contains(show, "SUBAGENT") || !strings.Contains(show, "call-7") || !strings.Contains(show, "analysis-only") {
		t.Fatalf("sessions show of the parent (exit %d):\n%s", code, show)
	}
	var child string
	for _, l := range strings.Split(show, "\n") {
		if strings.Contains(l, "call-7") {
			child = strings.Fields(l)[0]
		}
	}
	cshow, _, code := sb.kz("sessions", "show", child)
	if code != 0 || !strings.Contains(cshow, "parent    "+parent+" (tool call call-7)") {
		t.Fatalf("sessions show of the child (exit %d):\n%s", code, cshow)
	}
	js, _, code := sb.kz("sessions", "list", "--json")
	if code != 0 || !strings.Contains(js, `"children":1`) || strings.Contains(js, child) {
		t.Fatalf("sessions list --json (exit %d):\n%s", code, js)
	}
	// Resuming the parent works, with the task call in its history.
	out, errOut, code = sb.kz("-p", "again", "--resume", parent, "--script", path, "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s\n%s", code, errOut, out)
	}
	// Deleting the parent deletes its children.
	if _, errOut, code := sb.kz("sessions", "delete", parent); code != 0 {
		t.Fatalf("delete: exit %d %s", code, errOut)
	}
	if _, _, code := sb.kz("sessions", "show", child); code == 0 {
		t.Error("the child outlived its deleted parent")
	}
}

package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// TestFinalResultDenialsFromGate: a denial decided in the session (here
// headless turns the gate's ask into deny) reaches final_result with the
// tool, the call id, the command and the reason, for any runtime.
func TestFinalResultDenialsFromGate(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript))}, Interactive: false})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	d := final.PermissionDenials
	if len(d) != 1 || d[0].Tool != "bash" || d[0].ToolCallID != "t1" || d[0].Input != "rm -rf build" || d[0].Reason == "" {
		t.Fatalf("final_result permission_denials = %+v", d)
	}
	raw, err := json.Marshal(final)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"permission_denials":[{"tool":"bash","tool_call_id":"t1","input":"rm -rf build"`) {
		t.Errorf("final_result JSON %s", raw)
	}
	// The journal keeps the same event.
	var journalled engine.Event
	for _, ev := range j.all() {
		if ev.Type == engine.EventFinalResult {
			journalled = ev
		}
	}
	if len(journalled.PermissionDenials) != 1 {
		t.Errorf("journalled final_result %+v", journalled)
	}

	// Allowed, the same turn reports no denial and the JSON has no key.
	s2, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript))}, PermissionMode: engine.PermissionYolo})
	final, err = s2.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(final)
	if final.PermissionDenials != nil || strings.Contains(string(raw), "permission_denials") {
		t.Errorf("allowed turn: %s", raw)
	}
}

// denyingRuntime reports a denial as an event and again in its Result,
// plus one only its Result knows of (as Claude Code's result line does).
type denyingRuntime struct{ long string }

func (denyingRuntime) Name() string { return "d" }
func (denyingRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r denyingRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	t.Emit(engine.Event{Type: engine.EventPermissionDecided, Tool: "Bash", ToolCallID: "c1", Command: "rm -rf build",
		Decision: engine.DecisionDeny, Stage: "deny_rule", Reason: "rule"})
	t.Emit(engine.Event{Type: engine.EventPermissionDecided, Tool: "Read", ToolCallID: "c0", Path: "a.go", Decision: engine.DecisionAllow})
	return engine.Result{Output: "ok", PermissionDenials: []engine.PermissionDenial{
		{Tool: "Bash", ToolCallID: "c1", Input: "rm -rf build"},
		{Tool: "WebFetch", ToolCallID: "c2", Input: r.long},
	}}, nil
}

// TestFinalResultDenialsMergeRuntimeResult: the runtime's own list and the
// session's observed denials merge by tool call id, in order, without
// duplicates; allowed calls are not listed; a long input is cut.
func TestFinalResultDenialsMergeRuntimeResult(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 500)
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(denyingRuntime{long: long})}})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	d := final.PermissionDenials
	if len(d) != 2 || d[0].ToolCallID != "c1" || d[0].Reason != "rule" || d[1].ToolCallID != "c2" || d[1].Tool != "WebFetch" {
		t.Fatalf("permission_denials = %+v", d)
	}
	if len(d[1].Input) > engine.DenialInputMax || !utf8.ValidString(d[1].Input) || !strings.HasSuffix(d[1].Input, "…") {
		t.Errorf("long input not cut cleanly: %d bytes %q", len(d[1].Input), d[1].Input)
	}
}

func TestDenialInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cmd, path string
		input     string
		want      string
	}{
		{"ls -la", "x", `{"a":1}`, "ls -la"},
		{"", "src/a.go", `{"a":1}`, "src/a.go"},
		{"", "", "{ \"url\" : \"https://example.com\" }", `{"url":"https://example.com"}`},
		{"", "", "", ""},
		{"", "", "not json", "not json"},
	} {
		if got := engine.DenialInput(c.cmd, c.path, json.RawMessage(c.input)); got != c.want {
			t.Errorf("DenialInput(%q, %q, %q) = %q, want %q", c.cmd, c.path, c.input, got, c.want)
		}
	}
}

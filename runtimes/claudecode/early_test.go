package claudecode

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/permission"
)

// The hook decides only what decide would pass to the gate as it is: in
// every mode, a question (AskUserQuestion), plan mode's exit, a write in
// analysis-only or patch-proposal mode and a command in analysis-only mode
// are answered "ask" at the hook, however permissive the gate, and nothing
// is logged there; the same call in full-autonomous mode under yolo is
// allowed at the hook and logged once, and the can_use_tool Claude may
// still send for it is answered without a second log unless its input
// differs, which goes through the gate again.
func TestHookDecidesOnlyWhatTheGateMay(t *testing.T) {
	hook := func(id, tool, input, want string) []clitest.Line {
		return []clitest.Line{
			clitest.CLI(`{"type":"control_request","request_id":"` + id + `","request":{"subtype":"hook_callback","callback_id":"kz_pre_tool_use","input":{"hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"t-` + id + `"}}}`),
			clitest.Host(`{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + want + `"}}}}`),
		}
	}
	ws := t.TempDir()
	write, _ := json.Marshal(map[string]string{"file_path": ws + "/a.txt", "content": "x"})
	bash := `{"command":"ls"}`
	for _, tc := range []struct {
		name  string
		mode  engine.Mode
		lines []clitest.Line
	}{
		{"a question", engine.ModeFullAutonomous, hook("q", "AskUserQuestion", `{"questions":[]}`, "ask")},
		{"leaving plan mode", engine.ModeAnalysisOnly, hook("p", "ExitPlanMode", `{"plan":"x"}`, "ask")},
		{"a write in analysis-only", engine.ModeAnalysisOnly, hook("w", "Write", string(write), "ask")},
		{"a command in analysis-only", engine.ModeAnalysisOnly, hook("c", "Bash", bash, "ask")},
		{"a write in patch-proposal", engine.ModePatchProposal, hook("e", "Write", string(write), "ask")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := append([]clitest.Line{clitest.Host(`{"type":"user"}`),
				clitest.CLI(`{"type":"system","subtype":"init","session_id":"a"}`)}, tc.lines...)
			script = append(script, clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"a"}`))
			f := newFake(t, script)
			h := newHarness(t, single(f), clitest.Options{Gate: clitest.Gate(t, permission.Rules{Allow: []string{"Bash", "Write", "AskUserQuestion", "ExitPlanMode"}}),
				Mode: tc.mode, PermissionMode: engine.PermissionYolo, Answer: clitest.AllowOnce})
			h.Run(t, context.Background(), "go")
			_ = f.rt.Close()
			if n := f.CheckReport(); n != 2 {
				t.Errorf("fake checked %d host lines, want 2", n)
			}
			if d := h.Journal.OfType(engine.EventPermissionDecided); len(d) != 0 {
				t.Errorf("the hook logged decisions: %+v", d)
			}
		})
	}

	t.Run("allowed, then asked again", func(t *testing.T) {
		script := []clitest.Line{clitest.Host(`{"type":"user"}`), clitest.CLI(`{"type":"system","subtype":"init","session_id":"a"}`)}
		script = append(script, hook("b", "Bash", bash, "allow")...)
		script = append(script,
			clitest.CLI(`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":`+bash+`,"tool_use_id":"t-b"}}`),
			clitest.Host(`{"type":"control_response","response":{"request_id":"r1","response":{"behavior":"allow"}}}`))
		script = append(script, hook("d", "Bash", bash, "allow")...)
		script = append(script,
			clitest.CLI(`{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls -la"},"tool_use_id":"t-d"}}`),
			clitest.Host(`{"type":"control_response","response":{"request_id":"r2","response":{"behavior":"allow"}}}`),
			clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"a"}`))
		f := newFake(t, script)
		h := newHarness(t, single(f), clitest.Options{Gate: clitest.Gate(t, permission.Rules{}), PermissionMode: engine.PermissionYolo,
			Answer: clitest.AllowOnce})
		h.Run(t, context.Background(), "go")
		_ = f.rt.Close()
		if n := f.CheckReport(); n != 5 {
			t.Errorf("fake checked %d host lines, want 5", n)
		}
		byCall := map[string]int{}
		for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
			byCall[ev.ToolCallID]++
		}
		// t-b: once, at the hook. t-d: at the hook, and again for the
		// changed input.
		if byCall["t-b"] != 1 || byCall["t-d"] != 2 {
			t.Errorf("decisions by call %v, want t-b once and t-d twice", byCall)
		}
	})
}

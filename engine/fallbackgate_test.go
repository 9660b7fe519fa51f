package engine_test

import (
	"context"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestPermissionModeGateAsksWhatItCannotClassify holds the fallback gate
// (the one a session uses when no rule gate is wired) to "not proven
// harmless: ask": outside yolo and deny, only kz's own read tools are
// allowed unasked, and every other call that is neither a write nor a
// command (MCP tools, web fetches, other runtimes' tools, unknown names)
// waits for the person.
func TestPermissionModeGateAsksWhatItCannotClassify(t *testing.T) {
	t.Parallel()
	read := func(tool string) engine.PermissionRequest {
		return engine.PermissionRequest{Tool: tool, Paths: []string{"main.go"}}
	}
	cases := []struct {
		name  string
		pmode engine.PermissionMode
		mode  engine.Mode
		req   engine.PermissionRequest
		want  engine.Decision
	}{
		{"kz read_file", engine.PermissionAsk, engine.ModeFullAutonomous, read("read_file"), engine.DecisionAllow},
		{"kz list_dir", engine.PermissionAsk, engine.ModeFullAutonomous, read("list_dir"), engine.DecisionAllow},
		{"kz glob", engine.PermissionAsk, engine.ModeAnalysisOnly, read("glob"), engine.DecisionAllow},
		{"kz grep", engine.PermissionAcceptEdits, engine.ModeFullAutonomous, read("grep"), engine.DecisionAllow},
		{"mcp tool", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "mcp__db__drop_table"}, engine.DecisionAsk},
		{"mcp tool accept-edits", engine.PermissionAcceptEdits, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "mcp__gh__merge"}, engine.DecisionAsk},
		{"web fetch", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "web_fetch", Input: []byte(`{"url":"http://127.0.0.1/x"}`)}, engine.DecisionAsk},
		{"unknown tool", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "frobnicate"}, engine.DecisionAsk},
		{"empty tool name", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{}, engine.DecisionAsk},
		{"another runtime's read", engine.PermissionAsk, engine.ModeFullAutonomous, read("Read"), engine.DecisionAsk},
		{"read name with a write", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "read_file", Write: true}, engine.DecisionAsk},
		{"read name with a command", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "grep", Command: "rm -rf ."}, engine.DecisionAsk},
		{"yolo allows mcp", engine.PermissionYolo, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "mcp__db__drop_table"}, engine.DecisionAllow},
		{"deny denies reads", engine.PermissionDeny, engine.ModeFullAutonomous, read("read_file"), engine.DecisionDeny},
		{"analysis-only denies commands", engine.PermissionYolo, engine.ModeAnalysisOnly, engine.PermissionRequest{Tool: "bash", Command: "ls"}, engine.DecisionDeny},
		{"accept-edits allows a write", engine.PermissionAcceptEdits, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "write_file", Write: true}, engine.DecisionAllow},
		{"default asks a write", engine.PermissionAsk, engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "write_file", Write: true}, engine.DecisionAsk},
	}
	for _, c := range cases {
		v := engine.PermissionModeGate{}.Check(context.Background(), engine.GateQuery{Mode: c.mode, PermissionMode: c.pmode, Request: c.req})
		if v.Decision != c.want {
			t.Errorf("%s: decision %s (%s: %s), want %s", c.name, v.Decision, v.Stage, v.Reason, c.want)
		}
	}
}

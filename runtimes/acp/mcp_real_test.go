package acp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
	"github.com/kaizen-code/kz/tools/permission"
)

// Gemini CLI gets kz's MCP server in session/new and calls its tools
// under its own name (mcp_notes_note): the call reaches kz's gate as
// mcp__notes__note, an allowed call's result reaches the model, and a call
// a kz rule written for mcp__notes__big denies never reaches the server.
func TestRealGeminiMCPToolCallsPassKzGate(t *testing.T) {
	api := newGeminiAPI(t, func(calls int, last string) gstep {
		switch {
		case calls == 0 && strings.Contains(last, "KZ:note"):
			return gstep{Call: "mcp_notes_note", Args: map[string]any{"text": "from gemini"}}
		case calls == 0 && strings.Contains(last, "KZ:big"):
			return gstep{Call: "mcp_notes_big", Args: map[string]any{"n": 10}}
		}
		return gstep{Text: "done"}
	})
	rt, ws := realSetup(t, api)
	log := filepath.Join(t.TempDir(), "calls")
	rt.cfg.MCPServers = []mcp.Spec{mcptest.StdioSpec(t, "notes", log)}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{
		Gate: clitest.Gate(t, permission.Rules{Deny: []string{"mcp__notes__big"}}),
		Answer: func(ev engine.Event) engine.Answer {
			if ev.Tool == "mcp__notes__note" {
				return engine.Answer{Decision: engine.DecisionAllow}
			}
			return engine.Answer{Decision: engine.DecisionDeny}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	if final := h.Run(t, ctx, "KZ:note"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	asked := h.Journal.OfType(engine.EventPermissionRequested)
	if len(asked) != 1 || asked[0].Tool != "mcp__notes__note" {
		t.Fatalf("asked %+v", asked)
	}
	started := h.Journal.OfType(engine.EventToolCallStarted)
	if len(started) != 1 || started[0].Tool != "mcp__notes__note" {
		t.Errorf("tool cards %+v", started)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 || calls[0] != `note {"text":"from gemini"}` {
		t.Errorf("server log %q", calls)
	}
	reqs := api.Requests()
	if out := lastFunctionResponse(reqs[len(reqs)-1]); !strings.Contains(out, "noted") {
		t.Errorf("the model was told %s", out)
	}

	if final := h.Run(t, ctx, "KZ:big"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	var decided []engine.Event
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		if ev.Tool == "mcp__notes__big" {
			decided = append(decided, ev)
		}
	}
	if len(decided) != 1 || decided[0].Decision != engine.DecisionDeny || decided[0].Stage != string(permission.StageDenyRule) {
		t.Errorf("kz's decisions about the denied call: %+v", decided)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 {
		t.Errorf("a denied call reached the server: %q", calls)
	}
	reqs = api.Requests()
	if out := lastFunctionResponse(reqs[len(reqs)-1]); !strings.Contains(out, "canceled") {
		t.Errorf("the model was told %s", out)
	}
}

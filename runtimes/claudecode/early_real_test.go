package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/permission"
)

// A call kz's gate allows by itself is allowed at Claude's PreToolUse hook:
// Claude runs it without a can_use_tool request, the decision is logged
// once and the command runs; a call the gate denies still goes the long
// way and is refused, and one it asks about still reaches the person.
func TestRealGateAllowsAtTheHook(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		n := strings.Count(string(mustJSON(r.Messages)), `"tool_result"`)
		cmds := []string{"touch allowed.txt", "touch denied.txt", "touch asked.txt"}
		if n < len(cmds) {
			return fakeReply{Tools: []fakeTool{{ID: "toolu_e" + string(rune('1'+n)), Name: "Bash",
				Input: map[string]string{"command": cmds[n], "description": "step"}}}}
		}
		return fakeReply{Text: "done"}
	})
	rt, ws := realSetup(t, api)
	logs := captureLog(rt)
	gate := clitest.Gate(t, permission.Rules{Ask: []string{"Bash(touch asked.txt)"}, Deny: []string{"Bash(touch denied.txt)"}})
	asked := 0
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: gate, PermissionMode: engine.PermissionYolo,
		Answer: func(ev engine.Event) engine.Answer { asked++; return clitest.AllowOnce(ev) }})
	if final := h.Run(t, context.Background(), "three steps"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	for name, want := range map[string]bool{"allowed.txt": true, "denied.txt": false, "asked.txt": true} {
		if _, err := os.Stat(filepath.Join(ws, name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	byCall := map[string][]engine.Event{}
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		byCall[ev.ToolCallID] = append(byCall[ev.ToolCallID], ev)
	}
	for id, want := range map[string]engine.Decision{"toolu_e1": engine.DecisionAllow, "toolu_e2": engine.DecisionDeny, "toolu_e3": engine.DecisionAllow} {
		if d := byCall[id]; len(d) != 1 || d[0].Decision != want {
			t.Errorf("%s: decisions %+v, want one %s", id, d, want)
		}
	}
	if asked != 1 {
		t.Errorf("the person was asked %d times, want once (the third call)", asked)
	}
	// The allowed call never came as can_use_tool; the other two did.
	var canUse []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `can_use_tool`) && strings.Contains(l, "claude: line") {
			for _, id := range []string{"toolu_e1", "toolu_e2", "toolu_e3"} {
				if strings.Contains(l, id) {
					canUse = append(canUse, id)
				}
			}
		}
	}
	if strings.Join(canUse, ",") != "toolu_e2,toolu_e3" {
		t.Errorf("can_use_tool requests for %v, want toolu_e2 and toolu_e3 only", canUse)
	}
}

package claudecode

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// agentScript is the fake model of the subagent tests: a prompt marked
// KZ:delegate gets Claude Code's own subagent call (the API tool Agent,
// Task in init.tools); the subagent's prompt, marked KZSUB, gets its
// answer; the call's result gets a text quoting it.
func agentScript(r *apiRequest) fakeReply {
	if res, ok := r.toolResult(); ok {
		return fakeReply{Text: "parent saw: " + contentText(res.Content)}
	}
	txt := r.lastUserText()
	switch {
	case strings.Contains(txt, "KZSUB"):
		return fakeReply{Text: "subagent counted 3 files"}
	case strings.Contains(txt, "KZ:delegate"):
		return fakeReply{Tools: []fakeTool{{ID: "toolu_agent1", Name: "Agent", Input: map[string]string{
			"description": "count files", "prompt": "KZSUB: count the files", "subagent_type": "general-purpose"}}}}
	}
	return fakeReply{Text: "hello"}
}

// TestRealClaudeOwnTaskCall: Claude Code's own subagent call keeps working
// through its runtime: the call is a card of the turn, the subagent's
// request reaches the model, and its answer comes back as the call's
// result.
func TestRealClaudeOwnTaskCall(t *testing.T) {
	api := newFakeAPI(t, agentScript)
	rt, _ := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	final := h.Run(t, context.Background(), "KZ:delegate count the files")
	if final.Status != string(engine.StatusComplete) || !strings.Contains(final.Output, "parent saw: subagent counted 3 files") {
		t.Fatalf("final %+v", final)
	}
	var started, finished bool
	for _, ev := range h.Journal.Events() {
		switch {
		case ev.Type == engine.EventToolCallStarted && ev.ToolCallID == "toolu_agent1":
			started = true
		case ev.Type == engine.EventToolCallFinished && ev.ToolCallID == "toolu_agent1":
			finished = !ev.IsError && strings.Contains(ev.Output, "subagent counted 3 files")
		}
	}
	if !started || !finished {
		t.Errorf("the Agent call's events (started %v, finished with the answer %v):\n%v", started, finished, h.Journal.Events())
	}
	var sawSub bool
	for _, r := range api.Requests() {
		if strings.Contains(r.lastUserText(), "KZSUB") {
			sawSub = true
		}
	}
	if !sawSub {
		t.Error("the subagent's request never reached the model")
	}
}

// TestRealClaudeAsKzSubagent: a kz parent (scripted) delegates with its
// task call to the real Claude Code CLI as the child runtime; the child's
// answer is the task's result and its session is the child's.
func TestRealClaudeAsKzSubagent(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZCHILD") {
			return fakeReply{Text: "claude child reporting"}
		}
		return fakeReply{Text: "unexpected"}
	})
	rt, ws := realSetup(t, api)
	parent, err := scripted.Parse("parent", "parent.jsonl", strings.NewReader(
		`{"task":{"prompt":"KZCHILD say something","runtime":"claude","description":"ask claude","read_only":true},"tool_call_id":"task-1"}
{"type":"assistant_message","text":"parent done"}
`))
	if err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: parent}, {Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	final := h.Run(t, context.Background(), "delegate to claude")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	var result engine.Event
	var child []engine.Event
	for _, ev := range h.Journal.Events() {
		if ev.Type == engine.EventToolCallFinished && ev.ToolCallID == "task-1" {
			result = ev
		}
		if ev.SessionID != h.Session.ID() {
			child = append(child, ev)
		}
	}
	if result.IsError || !strings.Contains(result.Output, "claude child reporting") {
		t.Fatalf("task result %+v", result)
	}
	if len(child) == 0 || child[0].Runtime != "claude" || child[len(child)-1].Type != engine.EventFinalResult {
		t.Errorf("child session events: %+v", child)
	}
	for _, ev := range child {
		if ev.Type == engine.EventSessionStarted && ev.NativeID == "" {
			t.Errorf("the child's Claude Code session has no native id: %+v", ev)
		}
	}
}

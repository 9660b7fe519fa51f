package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// taskFake is the fake session that also delegates (/task).
type taskFake struct {
	*fakeSession
	taskErr error
}

func (f *taskFake) SubmitTask(req engine.ChildRequest) error {
	f.record("SubmitTask", req)
	return f.taskErr
}

// childEvents is a subagent's life as the parent's subscribers receive it:
// wrapped events of session c1 on the parent's call t1.
func childEvents(evs ...engine.Event) []engine.Event {
	out := make([]engine.Event, len(evs))
	for i, ev := range evs {
		ev.Runtime = "codex"
		out[i] = engine.Event{Type: engine.EventChild, TurnID: 1, ToolCallID: "t1", Time: goldenT0,
			Child: &engine.ChildEvent{SessionID: "c1", Description: "find the flaky test", ReadOnly: true, Event: ev}}
	}
	return out
}

func taskStart() []engine.Event {
	return []engine.Event{
		{Type: engine.EventUserMessage, TurnID: 1, Text: "/task codex find the flaky test"},
		{Type: engine.EventToolCallStarted, TurnID: 1, ToolCallID: "t1", Tool: engine.TaskToolName, Time: goldenT0,
			Input: []byte(`{"prompt":"find the flaky test","runtime":"codex","description":"find the flaky test","read_only":true}`)},
	}
}

func childRunningEvents() []engine.Event {
	return childEvents(
		engine.Event{Type: engine.EventSessionStarted, TurnID: 1},
		engine.Event{Type: engine.EventToolCallStarted, TurnID: 1, ToolCallID: "c-1", Tool: "grep", Input: []byte(`{"pattern":"t.Skip"}`)},
		engine.Event{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: "c-1", Tool: "grep", Output: "a_test.go:12"},
		engine.Event{Type: engine.EventUsageUpdated, TurnID: 1, Usage: &engine.Usage{InputTokens: 1200, OutputTokens: 300}, CostUSD: 0.0042},
		engine.Event{Type: engine.EventToolCallStarted, TurnID: 1, ToolCallID: "c-2", Tool: "read_file", Input: []byte(`{"path":"a_test.go"}`)},
	)
}

func childDoneEvents() []engine.Event {
	evs := childEvents(
		engine.Event{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: "c-2", Tool: "read_file", Output: "package a"},
		engine.Event{Type: engine.EventPermissionDecided, TurnID: 1, ToolCallID: "c-3", Tool: "bash", Command: "go test -count=50 ./a",
			Decision: engine.DecisionDeny, Stage: "mode", Reason: "analysis-only mode allows no writes and no shell"},
		engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: "complete", Output: "TestRetry sleeps on a wall clock.\nUse a fake clock.",
			Usage: &engine.Usage{InputTokens: 2400, OutputTokens: 600}, CostUSD: 0.0084},
	)
	return append(evs, engine.Event{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: "t1", Tool: engine.TaskToolName,
		Output: "TestRetry sleeps on a wall clock.\nUse a fake clock.", DurationMS: 4200})
}

// TestGoldenTaskCard renders a subagent's card running (collapsed, its
// last step live), done (collapsed) and expanded (ctrl+o), at 80x24 and
// 120x40.
func TestGoldenTaskCard(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		m := testModel(t, &taskFake{fakeSession: newFake()}, w, h)
		m.feed(taskStart()...)
		m.feed(childRunningEvents()...)
		running := m.screen()
		for _, want := range []string{"Task", "read-only subagent · codex · running · 2 tools · 1.5k tokens · $0.0042", "▸ Read a_test.go"} {
			if !strings.Contains(running, want) {
				t.Errorf("%dx%d running card lacks %q:\n%s", w, h, want, running)
			}
		}
		m.feed(childDoneEvents()...)
		done := m.screen()
		if strings.Contains(done, "▸ Read") || !strings.Contains(done, "done · 2 tools · 3.0k tokens · $0.0084") {
			t.Errorf("%dx%d done card is not collapsed to its status:\n%s", w, h, done)
		}
		m.press("ctrl+o")
		expanded := m.screen()
		for _, want := range []string{"▸ Search t.Skip", "▸ Read a_test.go", "✗ bash denied: analysis-only mode", "= TestRetry sleeps on a wall clock."} {
			if !strings.Contains(expanded, want) {
				t.Errorf("%dx%d expanded card lacks %q:\n%s", w, h, want, expanded)
			}
		}
		golden(t, "taskcard_running", w, running)
		golden(t, "taskcard_done", w, done)
		golden(t, "taskcard_expanded", w, expanded)
	}
}

// TestChildPermissionDialogNamesTheChild: a subagent's question opens the
// dialog naming the subagent, and the answer goes to the parent session
// with the child's request id.
func TestChildPermissionDialogNamesTheChild(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		f := &taskFake{fakeSession: newFake()}
		m := testModel(t, f, w, h)
		m.feed(taskStart()...)
		m.feed(childEvents(engine.Event{Type: engine.EventPermissionRequested, TurnID: 7, RequestID: "perm-child", ToolCallID: "c-9",
			Tool: "write_file", Paths: []string{"a.txt"}, Write: true, Diff: "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n",
			Stage: "permission_mode", Reason: "ask before write_file"})...)
		scr := m.screen()
		if !strings.Contains(scr, "Permission needed: write_file · subagent on codex: find the flaky test") {
			t.Fatalf("%dx%d dialog does not name the subagent:\n%s", w, h, scr)
		}
		golden(t, "taskcard_permission", w, scr)
		// The parent's turn 7 ending must not drop the child's request.
		m.feed(engine.Event{Type: engine.EventFinalResult, TurnID: 7, Status: "complete"})
		if !m.dialog.active() {
			t.Fatal("the parent's final_result of another turn dropped the child's request")
		}
		m.press("y")
		var answered bool
		for _, c := range f.Calls() {
			if c.method == "Answer" && c.args[0] == "perm-child" && c.args[1].(engine.Answer).Decision == engine.DecisionAllow {
				answered = true
			}
		}
		if !answered {
			t.Fatalf("the answer did not go to the child's request: %+v", f.Calls())
		}
		m.feed(childEvents(engine.Event{Type: engine.EventPermissionDecided, RequestID: "perm-child", Decision: engine.DecisionAllow})...)
		if m.dialog.active() {
			t.Error("the dialog stayed open after the child's decision")
		}
	}
}

func TestTaskCommandKeys(t *testing.T) {
	for _, tc := range []struct {
		name, typed, notice string
		want                *engine.ChildRequest
	}{
		{"runtime and prompt", "/task codex find the flaky test", "", &engine.ChildRequest{Runtime: "codex", Prompt: "find the flaky test", Description: "find the flaky test"}},
		{"no prompt", "/task codex", "usage: /task RUNTIME PROMPT", nil},
		{"nothing", "/task", "usage: /task RUNTIME PROMPT", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &taskFake{fakeSession: newFake()}
			m := testModel(t, f, 100, 30)
			m.typeText(tc.typed)
			m.press("enter")
			var got *engine.ChildRequest
			for _, c := range f.Calls() {
				if c.method == "SubmitTask" {
					r := c.args[0].(engine.ChildRequest)
					got = &r
				}
			}
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("submitted %+v", got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Errorf("submitted %+v, want %+v", got, tc.want)
			}
			if tc.notice != "" && !strings.Contains(m.screen(), tc.notice) {
				t.Errorf("no %q notice:\n%s", tc.notice, m.screen())
			}
		})
	}
	// A session that cannot delegate says so.
	m := testModel(t, newFake(), 100, 30)
	m.typeText("/task codex x")
	m.press("enter")
	if !strings.Contains(m.screen(), "this session cannot run subagents") {
		t.Errorf("no refusal:\n%s", m.screen())
	}
}

// TestTaskCommandRunsAChildEndToEnd types /task against a real session
// over the scripted runtime and the real store: the card ends done with
// the child's answer.
func TestTaskCommandRunsAChildEndToEnd(t *testing.T) {
	child, err := scripted.Parse("child", "child.jsonl", strings.NewReader(`{"type":"session_started"}
{"type":"tool_call_started","tool_call_id":"k1","tool":"glob","input":{"pattern":"*.go"}}
{"type":"tool_call_finished","tool_call_id":"k1","tool":"glob","output":"main.go"}
{"type":"usage_updated","usage":{"input_tokens":100,"output_tokens":20},"cost_usd":0.001}
{"type":"assistant_message","text":"one Go file: main.go"}
`))
	if err != nil {
		t.Fatal(err)
	}
	sess, sub := realSession(t, `{"type":"assistant_message","text":"hi"}`, engine.RuntimeEntry{Runtime: child})
	m := testModel(t, sess, 100, 30)
	m.typeText("/task child list the Go files")
	m.press("enter")
	pumpUntil(t, m, sub, "the child's card done", func(s string) bool {
		return strings.Contains(s, "subagent · child · done · 1 tool") && strings.Contains(s, "one Go file: main.go")
	})
	deadline := time.Now().Add(5 * time.Second)
	for sess.State().Running && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

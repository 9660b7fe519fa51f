package native

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tools"
)

// taskTools is kz's real tool set with the task tool, as the app builds
// it for a native runtime.
func taskTools(t *testing.T) *ExecutorTools {
	t.Helper()
	reg := tools.NewBuiltinRegistry()
	if err := reg.Register(tools.Task{}); err != nil {
		t.Fatal(err)
	}
	return PerSessionTools(reg, &memSnapshots{}, nil, nil)
}

// TestNativeTaskToolSpawnsChildren drives a native parent against a fake
// Anthropic API: its task call spawns a child on the scripted runtime and
// on a second native runtime (its own fake API), and the child's answer
// goes back to the parent's model as the tool result.
func TestNativeTaskToolSpawnsChildren(t *testing.T) {
	t.Parallel()
	for _, child := range []string{"scripted", "native-child"} {
		t.Run(child, func(t *testing.T) {
			pc := cases[0]
			u := engine.Usage{InputTokens: 100, OutputTokens: 10}
			parentFake := newFake(t, pc,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "t1", Name: "task",
					Args: `{"prompt":"what does greet.go say?","runtime":"` + child + `","description":"read greet","read_only":true}`}}, Usage: u},
				llmtest.Reply{Text: "The child says it.", Usage: u},
			)
			childFake := newFake(t, pc,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "read_file", Args: `{"path":"greet.go"}`}}, Usage: u},
				llmtest.Reply{Text: "greet.go says Hello.", Usage: u},
			)
			sc, err := scripted.Parse("scripted", "child.jsonl", strings.NewReader(`{"type":"assistant_message","text":"greet.go says Hello."}`))
			if err != nil {
				t.Fatal(err)
			}
			parent := mustNative(t, Config{LLM: parentFake.Config(), Models: []string{pc.model}, Tools: taskTools(t)})
			nativeChild := mustNative(t, Config{Name: "native-child", LLM: childFake.Config(), Models: []string{pc.model}, Tools: taskTools(t)})
			h := newHarness(t, harnessOpts{runtime: "native", runtimes: []engine.RuntimeEntry{
				{Runtime: parent, Models: []string{pc.model}}, {Runtime: sc}, {Runtime: nativeChild, Models: []string{pc.model}}}})
			h.write("greet.go", "package main\n\nconst msg = \"Hello\"\n")
			final := h.run("ask a subagent")
			if final.Status != "complete" || final.Output != "The child says it." {
				t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(h.journal.Events()))
			}
			second := parentFake.Requests()[1]
			if !second.Contains("greet.go says Hello.") {
				t.Errorf("the child's answer did not reach the parent's model: %s", second.Raw)
			}
			if !parentFake.Requests()[0].Contains(`"task"`) {
				t.Error("the task tool was not offered")
			}
			// The child's calls went through the same gate, in
			// analysis-only mode, under the parent's session id.
			var childQueries int
			for _, q := range h.gate.Queries() {
				if q.Runtime == child {
					childQueries++
					if q.Mode != engine.ModeAnalysisOnly || q.SessionID != h.s.ID() {
						t.Errorf("child query %+v", q)
					}
				}
			}
			if child == "native-child" {
				if childQueries != 1 {
					t.Errorf("child gate queries = %d, want its read", childQueries)
				}
				// A read-only child is offered no tool that writes.
				first := childFake.Requests()[0]
				if first.Contains(`"write_file"`) || first.Contains(`"bash"`) {
					t.Errorf("a read-only child was offered writing tools: %s", first.Raw)
				}
			}
			var rows []engine.Event
			for _, ev := range h.journal.Events() {
				if ev.SessionID != h.s.ID() {
					rows = append(rows, ev)
				}
			}
			if len(rows) == 0 || rows[len(rows)-1].Type != engine.EventFinalResult || rows[len(rows)-1].Output != "greet.go says Hello." {
				t.Errorf("child session's events:\n%s", dump(rows))
			}
		})
	}
}

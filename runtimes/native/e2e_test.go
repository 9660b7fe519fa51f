package native

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools"
)

// These tests drive the loop with kz's real tools.Executor and built-in
// tools inside a real engine.Session, against each provider's fake API.

func realTools() (*ExecutorTools, *memSnapshots) {
	snaps := &memSnapshots{}
	return PerSessionTools(tools.NewBuiltinRegistry(), snaps, nil, nil), snaps
}

// memSnapshots keeps the snapshots the tools save before writing.
type memSnapshots struct {
	mu    sync.Mutex
	snaps []tools.Snapshot
}

func (m *memSnapshots) SaveSnapshot(_ context.Context, s tools.Snapshot) error {
	m.mu.Lock()
	m.snaps = append(m.snaps, s)
	m.mu.Unlock()
	return nil
}

func (m *memSnapshots) All() []tools.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]tools.Snapshot(nil), m.snaps...)
}

func TestEndToEndReadThenEditWithRealTools(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			u := engine.Usage{InputTokens: 500, OutputTokens: 40}
			fake := newFake(t, pc,
				llmtest.Reply{Text: "Reading it.", Calls: []llmtest.Call{{ID: "c1", Name: "read_file", Args: `{"path":"greet.go"}`}}, Usage: u},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c2", Name: "edit_file", Args: `{"path":"greet.go","old_string":"Hello","new_string":"Goodbye"}`}}, Usage: u},
				llmtest.Reply{Text: "greet.go now says Goodbye.", Usage: u},
			)
			rt, snaps := realTools()
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: mustNative(t, Config{LLM: fake.Config(), Models: []string{pc.model}, Tools: rt})}}, runtime: "native"})
			h.write("greet.go", "package main\n\nconst msg = \"Hello\"\n")
			final := h.run("say goodbye instead")
			if final.Status != "complete" || final.Output != "greet.go now says Goodbye." {
				t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(h.journal.Events()))
			}
			if got := h.read("greet.go"); got != "package main\n\nconst msg = \"Goodbye\"\n" {
				t.Errorf("file: %q", got)
			}
			qs := h.gate.Queries()
			if len(qs) != 2 || qs[1].Request.Tool != "edit_file" || !qs[1].Request.Write {
				t.Errorf("gate queries: %+v", qs)
			}
			if len(h.journal.OfType(engine.EventPermissionRequested)) != 1 || len(h.journal.OfType(engine.EventFileEdited)) != 1 {
				t.Errorf("permission requests / file_edited:\n%s", dump(h.journal.Events()))
			}
			if sn := snaps.All(); len(sn) != 1 || sn[0].Path != "greet.go" || !strings.Contains(string(sn[0].Content), "Hello") {
				t.Errorf("snapshot before the edit: %+v", sn)
			}
			if !fake.Requests()[1].Contains(`const msg = \"Hello\"`) {
				t.Errorf("read result not sent back: %s", fake.Requests()[1].Raw)
			}
			want := 3 * cost(pc.prices, u)
			if d := final.CostUSD - want; d > 1e-12 || d < -1e-12 {
				t.Errorf("cost %v want %v", final.CostUSD, want)
			}
			first := fake.Requests()[0]
			for _, name := range []string{"read_file", "edit_file", "bash", "grep"} {
				if !first.Contains(`"` + name + `"`) {
					t.Errorf("tool %s not offered in full-autonomous mode", name)
				}
			}
		})
	}
}

func TestEndToEndDenialAndParallelReadsWithRealTools(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	fake := newFake(t, pc,
		llmtest.Reply{Calls: []llmtest.Call{
			{ID: "r1", Name: "read_file", Args: `{"path":"a.txt"}`},
			{ID: "r2", Name: "read_file", Args: `{"path":"b.txt"}`},
			{ID: "bad", Name: "read_file", Args: `{"path":"a.t`},
		}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "edit_file", Args: `{"path":"a.txt","old_string":"alpha","new_string":"omega"}`}}},
		llmtest.Reply{Text: "Left a.txt unchanged as asked."},
	)
	tr, _ := realTools()
	rt := mustNative(t, Config{LLM: fake.Config(), Models: []string{pc.model}, Tools: tr})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native",
		answer: func(engine.Event) engine.Answer {
			return engine.Answer{Decision: engine.DecisionDeny, Feedback: "keep a.txt as it is"}
		}})
	h.write("a.txt", "alpha\n")
	h.write("b.txt", "beta\n")
	final := h.run("read both, then change a")
	if final.Status != "complete" {
		t.Fatalf("final %s\n%s", final.Status, dump(h.journal.Events()))
	}
	if h.read("a.txt") != "alpha\n" {
		t.Error("denied edit changed the file")
	}
	second, third := fake.Requests()[1], fake.Requests()[2]
	if !second.Contains("alpha") || !second.Contains("beta") || !second.Contains("not a valid JSON object") {
		t.Errorf("parallel results / invalid-args error missing: %s", second.Raw)
	}
	if !third.Contains("keep a.txt as it is") {
		t.Errorf("denial feedback not sent to the model: %s", third.Raw)
	}
	for _, q := range h.gate.Queries() {
		if strings.Contains(string(q.Request.Input), `"a.t"`) || q.Request.ToolCallID == "bad" {
			t.Error("the call with invalid arguments reached the gate")
		}
	}
}

func TestEndToEndAnalysisOnlyOffersReadOnlyRealTools(t *testing.T) {
	t.Parallel()
	pc := cases[1]
	fake := newFake(t, pc, llmtest.Reply{Text: "ok"})
	tr, _ := realTools()
	rt := mustNative(t, Config{LLM: fake.Config(), Models: []string{pc.model}, Tools: tr})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", mode: engine.ModeAnalysisOnly})
	h.run("look around")
	first := fake.Requests()[0]
	if !first.Contains(`"read_file"`) || first.Contains(`"edit_file"`) || first.Contains(`"bash"`) || first.Contains(`"write_file"`) {
		t.Errorf("analysis-only tool set: %s", first.Raw)
	}
}

func TestEndToEndPatchProposalExploresThenProposes(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	answer := "SUMMARY: say goodbye\n\ngreet.go\n<<<<<<< SEARCH\nconst msg = \"Hello\"\n=======\nconst msg = \"Goodbye\"\n>>>>>>> REPLACE\n"
	fake := newFake(t, pc,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r", Name: "read_file", Args: `{"path":"greet.go"}`}}},
		llmtest.Reply{Text: answer})
	tr, _ := realTools()
	rt := mustNative(t, Config{LLM: fake.Config(), Models: []string{pc.model}, Tools: tr, ProposalPrompt: patch.PromptText()})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", mode: engine.ModePatchProposal})
	h.write("greet.go", "package main\n\nconst msg = \"Hello\"\n")
	final := h.run("propose saying goodbye")
	if final.Status != "complete" {
		t.Fatalf("final %s\n%s", final.Status, dump(h.journal.Events()))
	}
	p, err := patch.Parse(final.Output)
	if err != nil || len(p.Files) != 1 || p.Files[0].Path != "greet.go" {
		t.Fatalf("proposal %+v err %v", p, err)
	}
	if h.read("greet.go") != "package main\n\nconst msg = \"Hello\"\n" {
		t.Error("patch-proposal mode changed a file")
	}
	first := fake.Requests()[0]
	if first.Contains(`"edit_file"`) || !first.Contains(`"read_file"`) || !first.Contains("SEARCH") {
		t.Errorf("patch-proposal request: %s", first.Raw)
	}
}

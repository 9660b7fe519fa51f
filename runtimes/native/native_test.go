package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// providerCase is a provider with a catalog model and its list prices
// (input, output, cache read, cache write per million tokens), written out
// here so that a wrong catalog entry or cost formula fails the test.
type providerCase struct {
	p      llm.Provider
	model  string
	prices [4]float64
	api    llm.OpenAIAPI
}

func (pc providerCase) name() string {
	if pc.api != "" {
		return string(pc.p) + "-" + string(pc.api)
	}
	return string(pc.p)
}

var cases = []providerCase{
	{llm.ProviderAnthropic, "claude-sonnet-4-5", [4]float64{3, 15, 0.3, 3.75}, ""},
	{llm.ProviderOpenAI, "gpt-4o", [4]float64{2.5, 10, 1.25, 0}, ""},
	{llm.ProviderGemini, "gemini-2.5-flash", [4]float64{0.3, 2.5, 0.075, 0}, ""},
	{llm.ProviderOpenAI, "gpt-5-mini", [4]float64{0.25, 2, 0.025, 0}, llm.OpenAIResponses},
}

func cost(p [4]float64, u engine.Usage) float64 {
	return (float64(u.InputTokens)*p[0] + float64(u.OutputTokens)*p[1] + float64(u.CacheReadTokens)*p[2] + float64(u.CacheWriteTokens)*p[3]) / 1e6
}

func nativeFor(t *testing.T, s *llmtest.Server, model string, tools *fsTools, mods ...func(*Config)) *Runtime {
	cfg := Config{Name: "native", LLM: s.Config(), Models: []string{model}}
	if tools != nil {
		cfg.Tools = tools
	}
	for _, m := range mods {
		m(&cfg)
	}
	return mustNative(t, cfg)
}

func TestTwoCycleReadThenEdit(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			u1 := engine.Usage{InputTokens: 1000, OutputTokens: 50, CacheReadTokens: 200}
			if pc.p == llm.ProviderAnthropic {
				u1.CacheWriteTokens = 100
			}
			u2 := engine.Usage{InputTokens: 1200, OutputTokens: 60}
			u3 := engine.Usage{InputTokens: 1300, OutputTokens: 20, CacheReadTokens: 1000}
			fake := newFake(t, pc,
				llmtest.Reply{Text: "I'll read the file first.", Calls: []llmtest.Call{{ID: "t1", Name: "read_file", Args: `{"path":"main.go"}`}}, Usage: u1},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "t2", Name: "edit_file", Args: `{"path":"main.go","old":"Hello","new":"Goodbye"}`}}, Usage: u2},
				llmtest.Reply{Text: "Done: main.go now says Goodbye.", Usage: u3},
			)
			tools := &fsTools{}
			rt := nativeFor(t, fake, pc.model, tools)
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{pc.model}}}, runtime: "native", tools: tools})
			h.write("main.go", `package main // prints Hello`)

			final := h.run("Change Hello to Goodbye in main.go")
			if final.Status != string(engine.StatusComplete) || final.Output != "Done: main.go now says Goodbye." {
				t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(h.journal.Events()))
			}
			if got := h.read("main.go"); got != `package main // prints Goodbye` {
				t.Errorf("file not edited: %q", got)
			}
			qs := h.gate.Queries()
			if len(qs) != 2 || qs[0].Request.Tool != "read_file" || qs[1].Request.Tool != "edit_file" || !qs[1].Request.Write {
				t.Errorf("gate queries %+v", qs)
			}
			if n := len(h.journal.OfType(engine.EventPermissionRequested)); n != 1 {
				t.Errorf("%d permission requests reached the person, want 1 (the edit)", n)
			}
			total := u1
			total.Add(u2)
			total.Add(u3)
			if *final.Usage != total {
				t.Errorf("usage %+v, want %+v", *final.Usage, total)
			}
			want := cost(pc.prices, u1) + cost(pc.prices, u2) + cost(pc.prices, u3)
			if math.Abs(final.CostUSD-want) > 1e-12 || want == 0 {
				t.Errorf("cost %v, want %v", final.CostUSD, want)
			}
			ups := h.journal.OfType(engine.EventUsageUpdated)
			if len(ups) != 3 || *ups[0].Usage != u1 || math.Abs(ups[0].CostUSD-cost(pc.prices, u1)) > 1e-12 {
				t.Errorf("usage_updated events %+v", ups)
			}
			reqs := fake.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			if !reqs[1].Contains("prints Hello") || !reqs[2].Contains("edited main.go") {
				t.Errorf("tool results not fed back:\n%s\n%s", reqs[1].Raw, reqs[2].Raw)
			}
			started := h.journal.OfType(engine.EventSessionStarted)
			if len(started) == 0 || started[0].Model != pc.model || started[0].Text != "" {
				t.Errorf("session_started %+v", started)
			}
			if msgs := h.journal.OfType(engine.EventAssistantMessage); len(msgs) != 2 || msgs[0].Text != "I'll read the file first." {
				t.Errorf("assistant messages %+v", msgs)
			}
		})
	}
}

func TestParallelCallsAndInvalidArgs(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			calls := []llmtest.Call{
				{ID: "a", Name: "read_file", Args: `{"path":"a.txt"}`},
				{ID: "b", Name: "read_file", Args: `{"path":"b.txt"}`},
				{ID: "c", Name: "edit_file", Args: `{"path":"a.txt","old":"alpha","new":"om`},
			}
			wantFinished, wantErr := 3, "not a valid JSON object"
			if pc.p == llm.ProviderGemini {
				// Gemini's wire format carries arguments as an object: they
				// cannot be truncated. Its parallel calls still run.
				calls, wantFinished, wantErr = calls[:2], 2, ""
			}
			fake := newFake(t, pc,
				llmtest.Reply{Calls: calls},
				llmtest.Reply{Text: "a has alpha, b has beta."},
			)
			tools := &fsTools{}
			rt := nativeFor(t, fake, pc.model, tools)
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools})
			h.write("a.txt", "alpha")
			h.write("b.txt", "beta")
			final := h.run("read both")
			if final.Status != "complete" {
				t.Fatalf("status %s\n%s", final.Status, dump(h.journal.Events()))
			}
			if got := tools.Executed(); strings.Join(got, ",") != "read_file:a.txt,read_file:b.txt" {
				t.Errorf("executed %v: the call with truncated arguments must not run", got)
			}
			if h.read("a.txt") != "alpha" {
				t.Error("a.txt changed")
			}
			second := fake.Requests()[1]
			// The invalid call goes back in the history as an empty object,
			// so the next request is one the API accepts.
			if second.Body == nil || second.Contains(`"new":"om`) && !second.Contains(`"new\":\"om`) {
				t.Errorf("second request is not valid JSON or carries the raw invalid arguments: %s", second.Raw)
			}
			for _, want := range []string{"alpha", "beta", wantErr} {
				if !second.Contains(want) {
					t.Errorf("second request lacks %q: %s", want, second.Raw)
				}
			}
			var finished int
			for _, ev := range h.journal.OfType(engine.EventToolCallFinished) {
				finished++
				if ev.ToolCallID == "c" && !ev.IsError {
					t.Error("invalid call not reported as an error")
				}
			}
			if finished != wantFinished {
				t.Errorf("%d tool_call_finished, want %d", finished, wantFinished)
			}
		})
	}
}

func TestDeniedCallReturnsFeedbackAndLoopContinues(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: "edit_file", Args: `{"path":"a.txt","old":"alpha","new":"omega"}`}}},
				llmtest.Reply{Text: "Understood, I left a.txt alone."},
			)
			tools := &fsTools{}
			rt := nativeFor(t, fake, pc.model, tools)
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools,
				answer: func(engine.Event) engine.Answer {
					return engine.Answer{Decision: engine.DecisionDeny, Feedback: "do not touch a.txt, it is generated"}
				}})
			h.write("a.txt", "alpha")
			final := h.run("rename alpha")
			if final.Status != "complete" || final.Output != "Understood, I left a.txt alone." {
				t.Fatalf("final %s %q", final.Status, final.Output)
			}
			if h.read("a.txt") != "alpha" || len(tools.Executed()) != 0 {
				t.Error("denied edit ran")
			}
			if !fake.Requests()[1].Contains("do not touch a.txt, it is generated") {
				t.Errorf("feedback not sent to the model: %s", fake.Requests()[1].Raw)
			}
		})
	}
}

func TestRetryableErrorsFailOverToNextRuntime(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		for _, bad := range []llmtest.Reply{{Status: 429, RetryAfter: "0"}, {Status: 500}, {Status: 529},
			{Text: "partial answer", DropAfterFirst: true}, {DropBeforeEvents: true}} {
			name := fmt.Sprintf("%s/http-%d", pc.name(), bad.Status)
			switch {
			case bad.DropAfterFirst:
				name = pc.name() + "/dropped-mid-stream"
			case bad.DropBeforeEvents:
				name = pc.name() + "/dropped-before-events"
			}
			t.Run(name, func(t *testing.T) {
				failing := newFake(t, pc, bad, bad, bad)
				backup := newFake(t, pc, llmtest.Reply{Text: "from the backup"})
				a := nativeFor(t, failing, pc.model, nil, func(c *Config) { c.Name = "primary" })
				b := nativeFor(t, backup, pc.model, nil, func(c *Config) { c.Name = "backup" })
				h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: a}, {Runtime: b}}, runtime: "primary",
					mode: engine.ModeAnalysisOnly, failover: []engine.ChainLink{{Runtime: "backup"}}})
				final := h.run("hello")
				if final.Status != "complete" || final.Output != "from the backup" {
					t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(h.journal.Events()))
				}
				wantAttempts := 3
				if bad.DropAfterFirst {
					wantAttempts = 1 // text already reached the person: not replayed on the same runtime
				}
				if n := len(failing.Requests()); n != wantAttempts {
					t.Errorf("%d attempts on the failing runtime, want %d", n, wantAttempts)
				}
				sw := h.journal.OfType(engine.EventRuntimeSwitched)
				if len(sw) != 1 || sw[0].Reason != "failover" {
					t.Errorf("runtime_switched %+v", sw)
				}
			})
		}
	}
}

func TestUnauthorizedFailsFastNamingTheVariable(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc, llmtest.Reply{Status: 401})
			rt := nativeFor(t, fake, pc.model, nil)
			_, err := rt.run(context.Background(), &engine.Turn{Prompt: "hi", Mode: engine.ModeAnalysisOnly}, &nopHost{})
			var re *engine.RuntimeError
			if !errors.As(err, &re) || re.Kind != engine.ErrAuth || re.Runtime != "native" || !strings.Contains(err.Error(), "$KZ_TEST_KEY") {
				t.Fatalf("got %v", err)
			}
			if len(fake.Requests()) != 1 {
				t.Errorf("%d requests: auth failures are not retried", len(fake.Requests()))
			}
		})
	}
}

func TestModelWithoutToolsIsTextOnly(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderOpenAI, llmtest.Reply{Text: "It is a Go file."})
	tools := &fsTools{}
	rt := nativeFor(t, fake, "gemma2:9b", tools)
	caps := rt.Capabilities("")
	if caps.Has(engine.CapNativeToolLoop) || !caps.Has(engine.CapTextCompletion) || caps.ContextWindow != 8192 {
		t.Fatalf("capabilities %s (window %d)", caps.Set, caps.ContextWindow)
	}
	err := engine.CheckMode(engine.ModeFullAutonomous, "native", "gemma2:9b", caps)
	var ce *engine.CapabilityError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "native_tool_loop") || !strings.Contains(err.Error(), "analysis-only") {
		t.Fatalf("CheckMode: %v", err)
	}
	// A session on this model in full-autonomous mode refuses the turn
	// before anything is sent.
	full := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native"})
	if _, err := full.s.RunTurn(context.Background(), "edit it"); !errors.As(err, &ce) {
		t.Errorf("full-autonomous turn on a text-only model: %v", err)
	}
	if len(fake.Requests()) != 0 {
		t.Fatal("a request was sent for a turn that cannot run")
	}
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", mode: engine.ModeAnalysisOnly})
	final := h.run("what is main.go?")
	if final.Status != "complete" || final.Output != "It is a Go file." {
		t.Fatalf("analysis-only: %s %q", final.Status, final.Output)
	}
	if body := fake.Requests()[0].Body; body["tools"] != nil {
		t.Errorf("tools were offered to a model without tool calling: %v", body["tools"])
	}
}

func TestAnalysisOnlyOffersReadOnlyTools(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "x", Name: "edit_file", Args: `{"path":"a.txt","old":"alpha","new":"omega"}`}}},
		llmtest.Reply{Text: "I cannot edit in this mode."})
	tools := &fsTools{}
	rt := nativeFor(t, fake, "claude-haiku-4-5", tools)
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", mode: engine.ModeAnalysisOnly, tools: tools})
	h.write("a.txt", "alpha")
	final := h.run("look")
	if final.Status != "complete" {
		t.Fatal(final.Status)
	}
	first := fake.Requests()[0]
	if !first.Contains(`"read_file"`) || first.Contains(`"edit_file"`) {
		t.Errorf("analysis-only tool set: %s", first.Raw)
	}
	if h.read("a.txt") != "alpha" || len(tools.Executed()) != 0 {
		t.Error("a tool not offered in this mode ran")
	}
	if !fake.Requests()[1].Contains("not available in analysis-only mode") {
		t.Error("the model was not told why its call did not run")
	}
}

func TestCompactionNearTheContextWindow(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			window := 2000
			cat, err := llm.DefaultCatalog().WithOverrides([]llm.ModelOverride{{ID: pc.model, ContextWindow: &window}})
			if err != nil {
				t.Fatal(err)
			}
			fake := newFake(t, pc,
				llmtest.Reply{Text: "Reading a.", Calls: []llmtest.Call{{ID: "r1", Name: "read_file", Args: `{"path":"a.txt"}`}}, Usage: engine.Usage{InputTokens: 600, OutputTokens: 20}},
				llmtest.Reply{Text: "Reading b.", Calls: []llmtest.Call{{ID: "r2", Name: "read_file", Args: `{"path":"b.txt"}`}}, Usage: engine.Usage{InputTokens: 1700, OutputTokens: 20}},
				llmtest.Reply{Text: "SUMMARY: the person asked to compare a.txt and b.txt; a.txt holds alpha.", Usage: engine.Usage{InputTokens: 300, OutputTokens: 30}},
				llmtest.Reply{Text: "a is alpha, b is beta.", Usage: engine.Usage{InputTokens: 200, OutputTokens: 10}},
			)
			tools := &fsTools{}
			rt := nativeFor(t, fake, pc.model, tools, func(c *Config) { c.Catalog = cat; c.Compaction.KeepRecent = 2 })
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools})
			h.write("a.txt", "alpha")
			h.write("b.txt", "beta")
			final := h.run("compare a.txt and b.txt")
			if final.Status != "complete" || final.Output != "a is alpha, b is beta." {
				t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(h.journal.Events()))
			}
			reqs := fake.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			sum, after := reqs[2], reqs[3]
			if !sum.Contains("compact the conversation") || sum.Contains(`"read_file"`) && sum.Body["tools"] != nil {
				t.Errorf("third request is not a summary request: %s", sum.Raw)
			}
			for _, want := range []string{"SUMMARY: the person asked", "compare a.txt and b.txt", "Reading b.", "beta", `"read_file"`} {
				if !after.Contains(want) {
					t.Errorf("request after compaction lacks %q: %s", want, after.Raw)
				}
			}
			if after.Contains("Reading a.") {
				t.Errorf("the compacted turn is still sent verbatim: %s", after.Raw)
			}
			cb := h.journal.OfType(engine.EventCompactBoundary)
			if len(cb) != 1 || cb[0].TokensBefore < 1600 || cb[0].TokensAfter <= 0 || cb[0].TokensAfter >= cb[0].TokensBefore {
				t.Errorf("compact_boundary %+v", cb)
			}
			if n := len(h.journal.OfType(engine.EventUsageUpdated)); n != 4 {
				t.Errorf("%d usage_updated, want 4 (the summary costs too)", n)
			}
			if len(h.journal.OfType(engine.EventTextDelta)) == 0 {
				t.Error("no text deltas")
			}
			for _, ev := range h.journal.OfType(engine.EventTextDelta) {
				if strings.Contains(ev.Text, "SUMMARY") {
					t.Error("the summary was streamed to the person as the answer")
				}
			}
		})
	}
}

func TestPrimingFromAnEarlierScriptedTurn(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			sc, err := scripted.Load("scripted", filepath.Join("testdata", "earlier.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			fake := newFake(t, pc, llmtest.Reply{Text: "The word was ZEBRA."})
			rt := nativeFor(t, fake, pc.model, &fsTools{})
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: sc}, {Runtime: rt}}, runtime: "scripted"})
			if f := h.run("what do the notes say?"); f.Status != "complete" {
				t.Fatalf("scripted turn: %s", f.Status)
			}
			if err := h.s.SwitchRuntime("native", pc.model); err != nil {
				t.Fatal(err)
			}
			if f := h.run("which word was it again?"); f.Status != "complete" {
				t.Fatalf("native turn: %s", f.Status)
			}
			first := fake.Requests()[0]
			for _, want := range []string{"what do the notes say?", "Let me look at notes.txt.", "the secret word is ZEBRA",
				"The notes say the secret word is ZEBRA.", "which word was it again?", engine.InterruptedNotRerun, `"s1"`} {
				if !first.Contains(want) {
					t.Errorf("first request lacks %q:\n%s", want, first.Raw)
				}
			}
		})
	}
}

func TestGracefulStopAfterToolCalls(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderOpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r", Name: "read_file", Args: `{"path":"a.txt"}`}}},
		llmtest.Reply{Text: "never requested"})
	tools := &fsTools{}
	rt := nativeFor(t, fake, "gpt-4o", tools)
	g := make(chan struct{})
	host := &nopHost{onEmit: func(ev engine.Event) {
		if ev.Type == engine.EventToolCallFinished {
			close(g)
		}
	}}
	res, err := rt.run(context.Background(), &engine.Turn{Prompt: "go", Mode: engine.ModeFullAutonomous, Workspace: t.TempDir(), Graceful: g}, host)
	if err != nil || res.Status != engine.StatusInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("%d requests after a graceful stop", len(fake.Requests()))
	}
}

func TestMaxCyclesErrorIsReturned(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r", Name: "read_file", Args: `{"path":"a.txt"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r2", Name: "read_file", Args: `{"path":"a.txt"}`}}})
	tools := &fsTools{}
	rt := nativeFor(t, fake, "claude-sonnet-4-5", tools)
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools, limits: engine.Limits{MaxCycles: 1}})
	h.write("a.txt", "alpha")
	if f := h.run("loop"); f.Status != string(engine.StatusMaxCycles) {
		t.Fatalf("status %s", f.Status)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("%d requests with max cycles 1", len(fake.Requests()))
	}
}

// nopHost is a Host without a session: it allows every request and counts
// cycles.
type nopHost struct {
	onEmit func(engine.Event)
}

func (h *nopHost) Emit(ev engine.Event) {
	if h.onEmit != nil {
		h.onEmit(ev)
	}
}

func (h *nopHost) RequestPermission(context.Context, engine.PermissionRequest) engine.Answer {
	return engine.Answer{Decision: engine.DecisionAllow}
}

func (h *nopHost) StartCycle() error { return nil }

func TestThinkingIsStreamedAndSentBackWithItsSignature(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Reasoning: "The file is small; read it.", Calls: []llmtest.Call{{ID: "r", Name: "read_file", Args: `{"path":"a.txt"}`}}},
		llmtest.Reply{Text: "alpha"})
	tools := &fsTools{}
	rt := nativeFor(t, fake, "claude-sonnet-4-5", tools, func(c *Config) { c.Reasoning = llm.ReasoningSetting{Budget: 2048} })
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools})
	h.write("a.txt", "alpha")
	if f := h.run("what is in a.txt?"); f.Status != "complete" {
		t.Fatal(f.Status)
	}
	if rd := h.journal.OfType(engine.EventReasoningDelta); len(rd) != 1 || rd[0].Text != "The file is small; read it." {
		t.Errorf("reasoning deltas %+v", rd)
	}
	first, second := fake.Requests()[0], fake.Requests()[1]
	if !first.Contains(`"thinking":{"budget_tokens":2048,"type":"enabled"}`) {
		t.Errorf("thinking not enabled: %s", first.Raw)
	}
	if !second.Contains(`"signature":"sig-27"`) || !second.Contains(`"type":"thinking"`) {
		t.Errorf("thinking block not sent back with its signature: %s", second.Raw)
	}
}

func TestCancelStopsTheStreamAtOnce(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc, llmtest.Reply{Text: strings.Repeat("word ", 50), HoldAfterFirst: true})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fake.Hook = cancel
			rt := nativeFor(t, fake, pc.model, nil)
			res, err := rt.run(ctx, &engine.Turn{Prompt: "talk", Mode: engine.ModeAnalysisOnly}, &nopHost{})
			if engine.KindOf(err) != engine.ErrInterrupted || !errors.Is(err, context.Canceled) {
				t.Fatalf("res %+v err %v", res, err)
			}
			if len(fake.Requests()) != 1 {
				t.Errorf("%d requests after cancel", len(fake.Requests()))
			}
		})
	}
}

func newFake(t *testing.T, pc providerCase, replies ...llmtest.Reply) *llmtest.Server {
	s := llmtest.New(t, pc.p, replies...)
	s.API = pc.api
	return s
}

func TestContextTooLongCompactsAndRetriesOnce(t *testing.T) {
	t.Parallel()
	tooLong := llmtest.Reply{Status: 400, ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`}
	fake := llmtest.New(t, llm.ProviderAnthropic, tooLong, llmtest.Reply{Text: "SUMMARY of q1"}, llmtest.Reply{Text: "answer to q2"})
	rt := nativeFor(t, fake, "claude-sonnet-4-5", nil, func(c *Config) { c.Compaction.KeepRecent = 2 })
	host := &nopHost{}
	var boundaries int
	host.onEmit = func(ev engine.Event) {
		if ev.Type == engine.EventCompactBoundary {
			boundaries++
		}
	}
	hist := []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "q1 " + strings.Repeat("x", 400)}, {Kind: engine.EntryAssistant, Text: "a1"}}
	res, err := rt.run(context.Background(), &engine.Turn{Prompt: "q2", Mode: engine.ModeAnalysisOnly, History: hist}, host)
	if err != nil || res.Output != "answer to q2" || boundaries != 1 {
		t.Fatalf("res %+v err %v boundaries %d", res, err, boundaries)
	}
	last := fake.Requests()[2]
	if !last.Contains("SUMMARY of q1") || last.Contains("xxxxxxxx") || !last.Contains(`"q2"`) {
		t.Errorf("retried request: %s", last.Raw)
	}
	// A second context_too_long is returned, not retried forever.
	fake.Push(tooLong, llmtest.Reply{Text: "S"}, tooLong)
	if _, err := rt.run(context.Background(), &engine.Turn{Prompt: "q3", Mode: engine.ModeAnalysisOnly, History: hist}, host); engine.KindOf(err) != engine.ErrContextTooLong {
		t.Errorf("got %v", err)
	}
}

// TestBashIsSandboxed runs bash through the real tools with the
// session's sandbox, in each mode: the gate's answer gives the
// workspace-write profile, so a write inside the workspace works and one
// outside fails even though the gate allowed the command.
func TestBashIsSandboxed(t *testing.T) {
	t.Parallel()
	st := sandbox.Probe()
	if st.Kind == sandbox.KindNone {
		if os.Getenv("KZ_REQUIRE_SANDBOX") != "" {
			t.Fatalf("KZ_REQUIRE_SANDBOX is set but there is no sandbox: %s", st.Reason)
		}
		t.Skip(st.Reason)
	}
	// The outside target lives under /var/tmp: bubblewrap gives commands a
	// private /tmp, so a target there would prove nothing.
	outside, err := os.MkdirTemp("/var/tmp", "kz-native-sandbox-test-")
	if err != nil {
		t.Skip("no writable directory outside /tmp to test the sandbox against")
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	target := filepath.Join(outside, "escaped")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Policy{Workspace: dir, Home: outside})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	run := PerSessionTools(tools.NewBuiltinRegistry(), sandboxSnapshots{}, nil, sb)
	for i, mode := range []engine.Mode{engine.ModeFullAutonomous, engine.ModeAnalysisOnly, engine.ModePatchProposal} {
		turn := &engine.Turn{SessionID: "s" + strconv.Itoa(i), Workspace: dir, Mode: mode}
		exec, err := run.Executor(turn)
		if err != nil {
			t.Fatal(err)
		}
		if exec.Env().Sandbox != sb {
			t.Fatalf("%s: bash is not sandboxed", mode)
		}
		res := exec.Execute(context.Background(), allowAll{}, discard{}, []tools.ToolCall{
			{ID: "c1", Name: "bash", Input: json.RawMessage(fmt.Sprintf(`{"command":"echo x > %s; echo inside > in.txt"}`, target))},
		})
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("%s: a sandboxed command wrote outside the workspace: %+v", mode, res)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "in.txt")); err != nil || string(b) != "inside\n" {
			t.Fatalf("%s: the command could not write inside the workspace: %v %q %+v", mode, err, b, res)
		}
		_ = os.Remove(filepath.Join(dir, "in.txt"))
	}
	// A sandbox made for another workspace is refused.
	other := t.TempDir()
	if _, err := run.Executor(&engine.Turn{SessionID: "x", Workspace: other}); err == nil {
		t.Error("a sandbox for another workspace was accepted")
	}
}

type sandboxSnapshots struct{}

func (sandboxSnapshots) SaveSnapshot(context.Context, tools.Snapshot) error { return nil }

type allowAll struct{}

func (allowAll) RequestPermission(context.Context, engine.PermissionRequest) engine.Answer {
	return engine.Answer{Decision: engine.DecisionAllow, Confinement: engine.Confinement{Profile: engine.ProfileWorkspaceWrite}}
}

type discard struct{}

func (discard) Emit(engine.Event) {}

package native

import (
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// Each provider is asked for thinking in its own terms, and the thinking
// it streams comes out as reasoning_delta events.
func TestReasoningIsRequestedAndStreamedByEveryProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pc      providerCase
		setting string
		field   string
	}{
		{providerCase{p: llm.ProviderAnthropic, model: "claude-sonnet-4-5"}, "high", `"thinking":{"budget_tokens":24576,"type":"enabled"}`},
		{providerCase{p: llm.ProviderAnthropic, model: "claude-sonnet-4-5"}, "4000", `"thinking":{"budget_tokens":4000,"type":"enabled"}`},
		{providerCase{p: llm.ProviderOpenAI, model: "o4-mini"}, "medium", `"reasoning_effort":"medium"`},
		{providerCase{p: llm.ProviderOpenAI, model: "o4-mini"}, "30000", `"reasoning_effort":"high"`},
		{providerCase{p: llm.ProviderOpenAI, model: "gpt-5-mini", api: llm.OpenAIResponses}, "low", `"reasoning":{"effort":"low","summary":"auto"}`},
		{providerCase{p: llm.ProviderGemini, model: "gemini-2.5-flash"}, "medium", `"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}`},
	} {
		t.Run(tc.pc.name()+"/"+tc.setting, func(t *testing.T) {
			fake := newFake(t, tc.pc, llmtest.Reply{Reasoning: "Think it through.", Text: "Done."})
			setting, err := llm.ParseReasoning(tc.setting)
			if err != nil {
				t.Fatal(err)
			}
			rt := nativeFor(t, fake, tc.pc.model, nil, func(c *Config) { c.Reasoning = setting })
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", mode: engine.ModeAnalysisOnly})
			if f := h.run("why?"); f.Status != "complete" || f.Output != "Done." {
				t.Fatalf("final %s %q", f.Status, f.Output)
			}
			if req := fake.Requests()[0]; !req.Contains(tc.field) {
				t.Fatalf("request lacks %s:\n%s", tc.field, req.Raw)
			}
			if rd := h.journal.OfType(engine.EventReasoningDelta); len(rd) != 1 || rd[0].Text != "Think it through." {
				t.Fatalf("reasoning deltas: %+v", rd)
			}
		})
	}
}

// The session's override (--reasoning, /reasoning) replaces the configured
// setting from the next request on; "off" asks for none, and a model that
// does not reason is never asked.
func TestReasoningOverrideAndModelsWithoutReasoning(t *testing.T) {
	t.Parallel()
	pc := providerCase{p: llm.ProviderGemini, model: "gemini-2.5-flash"}
	fake := newFake(t, pc, llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	rt := nativeFor(t, fake, pc.model, nil, func(c *Config) {
		c.Reasoning = llm.ReasoningSetting{Effort: llm.ReasoningHigh}
		c.ModelReasoning = map[string]llm.ReasoningSetting{"gemini-2.5-flash": {Budget: 2000}}
	})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", mode: engine.ModeAnalysisOnly})
	h.run("one")
	rt.SetReasoning(llm.ReasoningSetting{Effort: llm.ReasoningOff})
	h.run("two")
	reqs := fake.Requests()
	if !reqs[0].Contains(`"thinkingBudget":2000`) {
		t.Fatalf("the model's own setting did not win over the runtime's: %s", reqs[0].Raw)
	}
	if !reqs[1].Contains(`"thinkingConfig":{"thinkingBudget":0}`) {
		t.Fatalf("off did not turn thinking off: %s", reqs[1].Raw)
	}

	plain := providerCase{p: llm.ProviderOpenAI, model: "gpt-4o"}
	fake2 := newFake(t, plain, llmtest.Reply{Text: "c"})
	rt2 := nativeFor(t, fake2, plain.model, nil, func(c *Config) { c.Reasoning = llm.ReasoningSetting{Effort: llm.ReasoningHigh} })
	h2 := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt2}}, runtime: "native", mode: engine.ModeAnalysisOnly})
	h2.run("three")
	if req := fake2.Requests()[0]; req.Contains("reasoning") {
		t.Fatalf("a model without reasoning was asked for it: %s", req.Raw)
	}
}

func TestParseReasoning(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]llm.ReasoningSetting{
		"": {}, "off": {Effort: llm.ReasoningOff}, "None": {Effort: llm.ReasoningOff}, " HIGH ": {Effort: llm.ReasoningHigh},
		"low": {Effort: llm.ReasoningLow}, "medium": {Effort: llm.ReasoningMedium}, "1024": {Budget: 1024}, "32000": {Budget: 32000},
	} {
		if got, err := llm.ParseReasoning(in); err != nil || got != want {
			t.Errorf("ParseReasoning(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"max", "1023", "-5", "1e4", "lots"} {
		if got, err := llm.ParseReasoning(bad); err == nil {
			t.Errorf("ParseReasoning(%q) = %+v", bad, got)
		}
	}
}

package native

import (
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// TestBudgetEndsTheLoopBeforeTheToolsRun: the first response alone costs
// more than the turn's budget, so its tool call never runs and no second
// request is sent; the turn ends budget_exceeded.
func TestBudgetEndsTheLoopBeforeTheToolsRun(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderAnthropic,
		// 1M input tokens of claude-sonnet-4-5 cost $3.
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r", Name: "read_file", Args: `{"path":"a.txt"}`}}, Usage: engine.Usage{InputTokens: 1_000_000}},
		llmtest.Reply{Text: "never requested"})
	tools := &fsTools{}
	rt := nativeFor(t, fake, "claude-sonnet-4-5", tools)
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools, limits: engine.Limits{BudgetUSD: 1}})
	h.write("a.txt", "alpha")
	f := h.run("read a.txt")
	if f.Status != string(engine.StatusBudgetExceeded) {
		t.Fatalf("status %s\n%s", f.Status, dump(h.journal.Events()))
	}
	if len(fake.Requests()) != 1 || len(tools.Executed()) != 0 {
		t.Errorf("%d requests, executed %v after the budget was spent", len(fake.Requests()), tools.Executed())
	}
	if f.CostUSD < 3 || f.CostUSD > 3.001 {
		t.Errorf("cost %v", f.CostUSD)
	}
}

// TestTimeoutEndsAStreamingResponse: a response that stalls mid-stream is
// cut at the turn's timeout and the turn ends with status timeout.
func TestTimeoutEndsAStreamingResponse(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			t.Parallel()
			fake := newFake(t, pc, llmtest.Reply{Text: "I am thinking very slowly", HoldAfterFirst: true})
			rt := nativeFor(t, fake, pc.model, &fsTools{})
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native",
				limits: engine.Limits{Timeout: 300 * time.Millisecond}})
			start := time.Now()
			f := h.run("think")
			if f.Status != string(engine.StatusTimeout) {
				t.Fatalf("status %s\n%s", f.Status, dump(h.journal.Events()))
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the timeout took %v to end the turn", d)
			}
			if len(fake.Requests()) != 1 {
				t.Errorf("%d requests: a timed-out turn is not retried", len(fake.Requests()))
			}
		})
	}
}

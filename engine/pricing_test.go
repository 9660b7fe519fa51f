package engine_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// agentCaps is the capability list of a scripted full agent.
const agentCaps = `"capabilities":["text_completion","streaming_text","native_tool_loop","filesystem_read","filesystem_edit","shell"]`

// usageOnly is a runtime that reports tokens and never a cost, as Codex
// and ACP agents do: 1000 input, 200 output and 4000 cache-read tokens.
const usageOnly = `{"kz_script":1,"model":"m",` + agentCaps + `}
{"type":"session_started"}
{"type":"usage_updated","usage":{"input_tokens":1000,"output_tokens":200,"cache_read_tokens":4000}}
{"type":"text_delta","text":"done"}
`

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestTokensWithoutCostArePricedFromTheCatalog: the usage of a runtime
// that reports no cost is priced by its model's catalog prices, input,
// output and cache reads each at their own price, on the event (so the
// store and the display have it) and in final_result.
func TestTokensWithoutCostArePricedFromTheCatalog(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	info, _ := cat.Lookup("gpt-5-mini")
	want := (1000*info.InputPerMTok + 200*info.OutputPerMTok + 4000*info.CacheReadPerMTok) / 1e6
	if want == 0 || info.CacheReadPerMTok == info.InputPerMTok {
		t.Fatalf("catalog entry %+v cannot tell the prices apart", info)
	}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "codexlike", usageOnly), "gpt-5-mini")}, Pricer: cat})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusComplete) || !near(final.CostUSD, want) {
		t.Fatalf("final %s cost %v, want complete at %v", final.Status, final.CostUSD, want)
	}
	for _, ev := range j.all() {
		if ev.Type == engine.EventUsageUpdated && (!near(ev.CostUSD, want) || ev.Model != "gpt-5-mini") {
			t.Fatalf("usage_updated = %+v, want priced by gpt-5-mini", ev)
		}
	}
	if st := s.State(); !near(st.TotalCostUSD, want) {
		t.Fatalf("session total %v, want %v", st.TotalCostUSD, want)
	}
}

// TestBudgetHoldsOnARuntimeThatReportsNoCost is the case: a tiny
// budget on a runtime that reports only tokens ends the turn as over
// budget, with the priced cost, before the rest of the answer.
func TestBudgetHoldsOnARuntimeThatReportsNoCost(t *testing.T) {
	t.Parallel()
	body := usageOnly + `{"type":"text_delta","text":" never","delay_ms":5000}` + "\n"
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "codexlike", body), "gpt-5-mini")},
		Pricer: llm.DefaultCatalog(), Limits: engine.Limits{BudgetUSD: 0.000001}})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusBudgetExceeded) || final.CostUSD <= 0.000001 {
		t.Fatalf("final %s cost %v, want budget_exceeded with the priced cost", final.Status, final.CostUSD)
	}
	for _, ev := range j.all() {
		if ev.Type == engine.EventTextDelta && strings.Contains(ev.Text, "never") {
			t.Fatal("the turn went on after the budget was spent")
		}
	}
}

// TestReportedModelPricesTheTokens: a runtime configured without a model
// names the one it uses in session_started; that model prices its tokens.
func TestReportedModelPricesTheTokens(t *testing.T) {
	t.Parallel()
	body := strings.Replace(usageOnly, `{"type":"session_started"}`, `{"type":"session_started","model":"claude-haiku-4-5"}`, 1)
	cat := llm.DefaultCatalog()
	want, ok := cat.Price("claude-haiku-4-5", engine.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 4000})
	if !ok {
		t.Fatal("claude-haiku-4-5 is not priced")
	}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "acplike", body))}, Pricer: cat,
		Limits: engine.Limits{BudgetUSD: 5}})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusComplete) || !near(final.CostUSD, want) {
		t.Fatalf("final %s cost %v, want complete at %v", final.Status, final.CostUSD, want)
	}
}

// TestBudgetOnAnUnpricedModel covers the ways a budget can meet a model
// kz cannot price: known before the turn (refused before it starts),
// named by the runtime once started (ended before it spends), a runtime
// that reports its own cost (runs), no budget (runs, costing nothing
// known), and a failover runtime that cannot be priced (not run).
func TestBudgetOnAnUnpricedModel(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	budget := engine.Limits{BudgetUSD: 1}
	late := `{"kz_script":1,` + agentCaps + `}
{"type":"session_started","model":"mystery-1"}
{"type":"text_delta","text":"never","delay_ms":5000}
`
	selfPriced := `{"kz_script":1,"reports_cost":true,` + agentCaps + `}
{"type":"usage_updated","usage":{"output_tokens":10},"cost_usd":0.01}
{"type":"text_delta","text":"ok"}
`
	t.Run("known before the turn", func(t *testing.T) {
		s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "codexlike", usageOnly), "mystery-1")}, Pricer: cat, Limits: budget})
		_, err := s.RunTurn(context.Background(), "go")
		if !errors.Is(err, engine.ErrUnpriced) || !strings.Contains(err.Error(), `"mystery-1"`) || !strings.Contains(err.Error(), "[[models]]") {
			t.Fatalf("err = %v, want ErrUnpriced naming the model and the fix", err)
		}
		if len(j.all()) != 0 {
			t.Fatalf("a refused turn left events: %v", j.types())
		}
	})
	t.Run("named once started", func(t *testing.T) {
		s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "acplike", late))}, Pricer: cat, Limits: budget})
		final, err := s.RunTurn(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if final.Status != string(engine.StatusError) || final.ErrorKind != engine.ErrInvalidArgument || !strings.Contains(final.Text, "mystery-1") {
			t.Fatalf("final = %+v, want an error naming the model", final)
		}
		for _, ev := range j.all() {
			if ev.Type == engine.EventTextDelta {
				t.Fatal("the turn went on with an unenforceable budget")
			}
		}
	})
	t.Run("runtime reports its cost", func(t *testing.T) {
		s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "claudelike", selfPriced), "mystery-1")}, Pricer: cat, Limits: budget})
		final, err := s.RunTurn(context.Background(), "go")
		if err != nil || final.Status != string(engine.StatusComplete) || !near(final.CostUSD, 0.01) {
			t.Fatalf("final %+v, %v", final, err)
		}
	})
	t.Run("no budget", func(t *testing.T) {
		s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "codexlike", usageOnly), "mystery-1")}, Pricer: cat})
		final, err := s.RunTurn(context.Background(), "go")
		if err != nil || final.Status != string(engine.StatusComplete) || final.CostUSD != 0 {
			t.Fatalf("final %+v, %v", final, err)
		}
	})
	t.Run("failover runtime unpriced", func(t *testing.T) {
		failing := `{"kz_script":1,` + agentCaps + `}
{"fail":{"kind":"overloaded","message":"529"}}
`
		a := entry(script(t, "a", failing), "gpt-5-mini")
		b := entry(script(t, "b", usageOnly), "mystery-1")
		s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{a, b}, Failover: []engine.ChainLink{{Runtime: "b"}}, Pricer: cat, Limits: budget})
		final, err := s.RunTurn(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if final.Status != string(engine.StatusError) || !strings.Contains(final.Text, "mystery-1") {
			t.Fatalf("final = %+v, want the unpriced failover refused", final)
		}
		for _, ev := range j.all() {
			if ev.Type == engine.EventTextDelta {
				t.Fatal("the unpriced failover runtime ran")
			}
		}
	})
}

// TestCatalogPriceFallsBackToInputForCache: a [[models]] entry with input
// and output prices only prices cache tokens as input; one with limits
// only is not priced; a local model is priced at zero.
func TestCatalogPriceFallsBackToInputForCache(t *testing.T) {
	t.Parallel()
	in, out := 2.0, 8.0
	cw := 100000
	cat, err := llm.DefaultCatalog().WithOverrides([]llm.ModelOverride{
		{ID: "house-model", InputPerMTok: &in, OutputPerMTok: &out},
		{ID: "limits-only", ContextWindow: &cw},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := cat.Price("house-model", engine.Usage{InputTokens: 1e6, OutputTokens: 1e6, CacheReadTokens: 1e6, CacheWriteTokens: 1e6})
	if !ok || !near(got, 2+8+2+2) {
		t.Fatalf("house-model = %v, %v; want 14", got, ok)
	}
	if _, ok := cat.Price("limits-only", engine.Usage{InputTokens: 1}); ok {
		t.Fatal("a model without prices was priced")
	}
	if got, ok := cat.Price("llama3.1:8b", engine.Usage{InputTokens: 1e6}); !ok || got != 0 {
		t.Fatalf("local model = %v, %v; want priced at 0", got, ok)
	}
	if _, ok := cat.Price("", engine.Usage{}); ok {
		t.Fatal("an empty model was priced")
	}
}

package codex

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// fakeModelCatalog is kz's catalog with a price for the fake server's
// model, as a [[models]] entry of the config gives it.
func fakeModelCatalog(t *testing.T) *llm.Catalog {
	t.Helper()
	in, out := 1.25, 10.0
	cat, err := llm.DefaultCatalog().WithOverrides([]llm.ModelOverride{{ID: "fake-model", InputPerMTok: &in, OutputPerMTok: &out}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestRealBudgetPricesCodexTokens is the command on the real CLI:
// Codex reports tokens and no cost; kz prices them by the model Codex
// names (100 input and 20 output tokens per response of the fake server),
// so a budget of $0.000001 ends the turn as over budget with that cost.
func TestRealBudgetPricesCodexTokens(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "Hello from the fake model."} })
	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{
		Pricer: fakeModelCatalog(t), Limits: engine.Limits{BudgetUSD: 0.000001}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final := h.Run(t, ctx, "Say hello")
	want := (100*1.25 + 20*10.0) / 1e6
	if final.Status != string(engine.StatusBudgetExceeded) || !near(final.CostUSD, want) {
		t.Fatalf("final %s cost %v, want budget_exceeded at %v: %+v", final.Status, final.CostUSD, want, final)
	}
	priced := false
	for _, ev := range h.Journal.OfType(engine.EventUsageUpdated) {
		priced = priced || (ev.Model == "fake-model" && near(ev.CostUSD, want))
	}
	if !priced {
		t.Fatalf("no usage_updated priced by fake-model: %+v", h.Journal.OfType(engine.EventUsageUpdated))
	}
}

// TestRealBudgetRefusesUnpricedCodexModel: without a price for the model
// Codex names, a budget cannot hold; the turn ends with a clear error
// before Codex sends the prompt to the model.
func TestRealBudgetRefusesUnpricedCodexModel(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "never"} })
	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{
		Pricer: llm.DefaultCatalog(), Limits: engine.Limits{BudgetUSD: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final := h.Run(t, ctx, "Say hello")
	if final.Status != string(engine.StatusError) || !strings.Contains(final.Text, `"fake-model"`) || final.ErrorKind != engine.ErrInvalidArgument {
		t.Fatalf("final %+v, want an error naming the unpriced model", final)
	}
	if n := len(api.Requests()); n != 0 {
		t.Fatalf("the model got %d requests after the budget could not be enforced", n)
	}
	// With the model configured, the same refusal comes before the turn.
	h2 := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt, Models: []string{"fake-model"}}}, clitest.Options{
		Pricer: llm.DefaultCatalog(), Limits: engine.Limits{BudgetUSD: 1}})
	if _, err := h2.Session.RunTurn(ctx, "Say hello"); !errors.Is(err, engine.ErrUnpriced) {
		t.Fatalf("err = %v, want ErrUnpriced before the turn", err)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

package engine

import (
	"cmp"
	"errors"
	"fmt"
)

// Pricer prices token usage from kz's model catalog. The session uses it
// for every runtime that reports tokens without a cost (Codex, ACP agents,
// a scripted replay), so that the budget, the cost display and
// final_result.cost_usd mean the same on every runtime.
type Pricer interface {
	// Price returns what u costs on model in USD. ok is false when the
	// catalog has no price for the model: kz then cannot know what the
	// tokens cost (a local model is priced, at zero).
	Price(model string, u Usage) (usd float64, ok bool)
}

// ErrUnpriced is matched (errors.Is) by the error of a turn that has a
// budget but runs on a model kz cannot price and a runtime that reports no
// cost: the budget could not be enforced, so the turn does not run.
var ErrUnpriced = errors.New("the budget cannot be enforced")

// errUnpriced is the cause a turn is cancelled with when its runtime names
// an unpriced model only once it has started (Codex and ACP agents report
// their default model in their session's first event).
type errUnpriced struct{ err *RuntimeError }

func (e errUnpriced) Error() string { return e.err.Error() }
func (e errUnpriced) Unwrap() error { return e.err }

// unpricedError explains why a budget cannot be enforced on runtime and
// model, and what to do.
func unpricedError(runtime, model string, budget float64) *RuntimeError {
	what := fmt.Sprintf("model %q is not in kz's model catalog", model)
	if model == "" {
		what = "its model is unknown"
	}
	return &RuntimeError{Kind: ErrInvalidArgument, Runtime: runtime, Model: model, Err: ErrUnpriced,
		Message: fmt.Sprintf("a budget of $%g is set, but runtime %s reports no cost and %s, so kz cannot price its tokens; "+
			"add the model's prices under [[models]] in the config (input_per_mtok, output_per_mtok), pick a priced model with --model, "+
			"or run without --budget-usd / [limits] budget_usd", budget, runtime, what)}
}

// checkPriced returns an error when a turn with a budget would run on
// runtime and model with no way to know what it spends: the runtime
// reports no cost and the catalog has no price for the model. An empty
// model is the runtime's own default, known only once the runtime reports
// it; the turn checks it then (see turnState.priceEvent).
func (s *Session) checkPriced(runtime, model string) error {
	if s.limits.BudgetUSD <= 0 || s.pricer == nil || model == "" {
		return nil
	}
	e, ok := s.runtimes[runtime]
	if !ok || e.Runtime.Capabilities(model).ReportsCost {
		return nil
	}
	if _, ok := s.pricer.Price(model, Usage{}); ok {
		return nil
	}
	return unpricedError(runtime, model, s.limits.BudgetUSD)
}

// pricing is what a turn knows to price the usage of its current attempt.
type pricing struct {
	pricer Pricer
	budget float64
	// runtime and configured are the attempt's runtime and the model it
	// was asked to use; reported is the model the runtime said it uses.
	runtime, configured, reported string
	// reportsCost says the runtime prices its own usage, so a budget
	// holds without the catalog.
	reportsCost bool
}

// model is the model the attempt's tokens are priced by: the one the
// runtime reported, else the configured one.
func (p *pricing) model(ev *Event) string {
	return cmp.Or(ev.Model, p.reported, p.configured)
}

// priceEvent fills in the cost of a usage_updated event that has tokens
// and no cost, and records the model a session_started names. It returns
// a non-nil error when the turn has a budget it cannot enforce: the
// runtime reports no cost and its model has no price.
func (p *pricing) priceEvent(ev *Event) error {
	switch ev.Type {
	case EventSessionStarted:
		if ev.Model != "" {
			p.reported = ev.Model
		}
		if m := p.model(ev); m != "" {
			return p.enforceable(m)
		}
	case EventUsageUpdated:
		if ev.CostUSD != 0 || ev.Usage == nil || ev.Usage.IsZero() {
			return nil
		}
		m := p.model(ev)
		if p.pricer != nil {
			if usd, ok := p.pricer.Price(m, *ev.Usage); ok {
				ev.CostUSD = usd
				if ev.Model == "" {
					ev.Model = m
				}
				return nil
			}
		}
		return p.enforceable(m)
	}
	return nil
}

// enforceable returns the unpriced error when the turn has a budget and
// model can be neither priced nor trusted to be priced by the runtime.
func (p *pricing) enforceable(model string) error {
	if p.budget <= 0 || p.pricer == nil || p.reportsCost {
		return nil
	}
	if _, ok := p.pricer.Price(model, Usage{}); ok {
		return nil
	}
	return errUnpriced{unpricedError(p.runtime, model, p.budget)}
}

package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Strategy is how the selector picks a runtime for a mode.
type Strategy string

// Selection strategies.
const (
	// StrategyPreferred takes the named runtime, if it can serve the mode;
	// with no runtime named (no default_runtime, no --runtime) it takes the
	// first configured runtime that can, as capability_match does.
	StrategyPreferred Strategy = "preferred"
	// StrategyCapabilityMatch takes the first configured runtime that can
	// serve the mode, preferring one that also has the mode's preferred
	// capabilities.
	StrategyCapabilityMatch Strategy = "capability_match"
	// StrategyCostOptimized takes the capable runtime with the lowest
	// price hint; unknown prices sort last.
	StrategyCostOptimized Strategy = "cost_optimized"
	// StrategyLatencyOptimized takes the capable runtime with the lowest
	// latency hint; unknown latencies sort last.
	StrategyLatencyOptimized Strategy = "latency_optimized"
	// StrategyAuto takes the named runtime when it is capable and
	// available, and otherwise falls back to capability_match.
	StrategyAuto Strategy = "auto"
)

// Strategies lists every strategy, in the order of ARCHITECTURE.md.
var Strategies = []Strategy{StrategyPreferred, StrategyCapabilityMatch, StrategyCostOptimized, StrategyLatencyOptimized, StrategyAuto}

// ParseStrategy validates a strategy name.
func ParseStrategy(s string) (Strategy, error) {
	switch st := Strategy(s); st {
	case StrategyPreferred, StrategyCapabilityMatch, StrategyCostOptimized, StrategyLatencyOptimized, StrategyAuto:
		return st, nil
	}
	return "", fmt.Errorf("unknown selection strategy %q (use preferred, capability_match, cost_optimized, latency_optimized or auto)", s)
}

// Candidate is a runtime with one model, as the selector sees it.
type Candidate struct {
	Runtime      string
	Model        string
	Capabilities Capabilities
	// Unavailable says why the runtime cannot run here; empty when it can.
	Unavailable string
}

// ErrNoCandidate is returned when no runtime can serve the mode.
var ErrNoCandidate = errors.New("no configured runtime can serve this mode")

// Select picks a candidate for mode by strategy. preferred names a runtime
// for the preferred and auto strategies. Candidates keep configuration order,
// which breaks every tie: sorting is stable.
func Select(strategy Strategy, mode Mode, preferred string, cands []Candidate) (Candidate, error) {
	return SelectFor(strategy, mode, 0, preferred, cands)
}

// SelectFor is Select for a turn that needs more than its mode: need is
// added to the mode's required capabilities (CapVision for a message with
// images), so every strategy routes the turn to a runtime that has them,
// and a named runtime without them is refused with what it lacks.
func SelectFor(strategy Strategy, mode Mode, need CapSet, preferred string, cands []Candidate) (Candidate, error) {
	req := RequirementsFor(mode)
	req.Required |= need
	capable := func(c Candidate) bool { return c.Unavailable == "" && c.Capabilities.Set.Has(req.Required) }
	named := func() (Candidate, error) {
		for _, c := range cands {
			if c.Runtime != preferred {
				continue
			}
			if c.Unavailable != "" {
				return c, &RuntimeError{Kind: ErrRuntimeMissing, Runtime: c.Runtime, Message: c.Unavailable}
			}
			if err := CheckMode(mode, c.Runtime, c.Model, c.Capabilities); err != nil {
				return c, err
			}
			if missing := c.Capabilities.Set.Missing(need); missing != 0 {
				return c, needError(c, missing, cands)
			}
			return c, nil
		}
		return Candidate{}, fmt.Errorf("%w %q (configured: %s)", ErrNoRuntime, preferred, names(cands))
	}
	switch strategy {
	case StrategyPreferred:
		if preferred == "" {
			return SelectFor(StrategyCapabilityMatch, mode, need, "", cands)
		}
		return named()
	case StrategyAuto:
		if preferred != "" {
			if c, err := named(); err == nil {
				return c, nil
			}
		}
		return SelectFor(StrategyCapabilityMatch, mode, need, "", cands)
	case StrategyCapabilityMatch, StrategyCostOptimized, StrategyLatencyOptimized:
	default:
		return Candidate{}, fmt.Errorf("unknown selection strategy %q", strategy)
	}
	var ok []Candidate
	for _, c := range cands {
		if capable(c) {
			ok = append(ok, c)
		}
	}
	if len(ok) == 0 {
		return Candidate{}, fmt.Errorf("%w: mode %s needs %s (see kz runtimes)", ErrNoCandidate, mode, req.Required)
	}
	switch strategy {
	case StrategyCapabilityMatch:
		for _, c := range ok {
			if c.Capabilities.Set.Has(req.Preferred) {
				return c, nil
			}
		}
		return ok[0], nil
	case StrategyCostOptimized:
		slices.SortStableFunc(ok, func(a, b Candidate) int { return cmpUnknownLast(price(a), price(b)) })
	case StrategyLatencyOptimized:
		slices.SortStableFunc(ok, func(a, b Candidate) int {
			return cmpUnknownLast(float64(a.Capabilities.LatencyMS), float64(b.Capabilities.LatencyMS))
		})
	}
	return ok[0], nil
}

// needError says what a named runtime lacks of a turn's extra needs: a
// *VisionError naming the runtimes that have vision when that is what is
// missing, a *CapabilityError otherwise.
func needError(c Candidate, missing CapSet, cands []Candidate) error {
	if missing == NewCapSet(CapVision) {
		var capable []string
		for _, o := range cands {
			if o.Runtime != c.Runtime && o.Unavailable == "" && o.Capabilities.Has(CapVision) && !slices.Contains(capable, o.Runtime) {
				capable = append(capable, o.Runtime)
			}
		}
		return &VisionError{Runtime: c.Runtime, Model: c.Model, Images: 1, Capable: capable}
	}
	return fmt.Errorf("runtime %s lacks %s (see kz runtimes): %w", c.Runtime, missing, ErrNoCandidate)
}

// price is a blended hint: output tokens weigh more in agent work, so a
// three-to-one mix of input to output is used.
func price(c Candidate) float64 {
	return 0.75*c.Capabilities.InputPerMTok + 0.25*c.Capabilities.OutputPerMTok
}

// cmpUnknownLast orders ascending with zero (unknown) after everything.
// A local model with truly zero price should declare a tiny positive price.
func cmpUnknownLast(a, b float64) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	case a < b:
		return -1
	default:
		return 1
	}
}

func names(cands []Candidate) string {
	var out []string
	for _, c := range cands {
		if !slices.Contains(out, c.Runtime) {
			out = append(out, c.Runtime)
		}
	}
	return strings.Join(out, ", ")
}

package engine_test

import (
	"errors"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func TestSelectStrategies(t *testing.T) {
	t.Parallel()
	full := engine.NewCapSet(engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell)
	cands := []engine.Candidate{
		{Runtime: "text", Capabilities: engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion), InputPerMTok: 0.1, OutputPerMTok: 0.1, LatencyMS: 10}},
		{Runtime: "pricey", Capabilities: engine.Capabilities{Set: full, InputPerMTok: 15, OutputPerMTok: 75, LatencyMS: 300}},
		{Runtime: "cheap", Capabilities: engine.Capabilities{Set: full, InputPerMTok: 1, OutputPerMTok: 5, LatencyMS: 900}},
		{Runtime: "unknown", Capabilities: engine.Capabilities{Set: full}},
		{Runtime: "missing", Capabilities: engine.Capabilities{Set: full, InputPerMTok: 0.01, OutputPerMTok: 0.01, LatencyMS: 1}, Unavailable: "claude is not on PATH"},
	}
	cases := []struct {
		strategy  engine.Strategy
		mode      engine.Mode
		preferred string
		want      string
	}{
		{engine.StrategyPreferred, engine.ModeAnalysisOnly, "text", "text"},
		{engine.StrategyCapabilityMatch, engine.ModeFullAutonomous, "", "pricey"},
		{engine.StrategyCapabilityMatch, engine.ModeAnalysisOnly, "", "text"},
		{engine.StrategyCostOptimized, engine.ModeFullAutonomous, "", "cheap"},
		{engine.StrategyCostOptimized, engine.ModeAnalysisOnly, "", "text"},
		{engine.StrategyLatencyOptimized, engine.ModeFullAutonomous, "", "pricey"},
		{engine.StrategyAuto, engine.ModeFullAutonomous, "cheap", "cheap"},
		{engine.StrategyAuto, engine.ModeFullAutonomous, "text", "pricey"},
		{engine.StrategyAuto, engine.ModeFullAutonomous, "missing", "pricey"},
	}
	for _, c := range cases {
		got, err := engine.Select(c.strategy, c.mode, c.preferred, cands)
		if err != nil || got.Runtime != c.want {
			t.Errorf("%s/%s/%s = %s, %v; want %s", c.strategy, c.mode, c.preferred, got.Runtime, err, c.want)
		}
	}
	var ce *engine.CapabilityError
	if _, err := engine.Select(engine.StrategyPreferred, engine.ModeFullAutonomous, "text", cands); !errors.As(err, &ce) {
		t.Errorf("preferred incapable runtime: %v", err)
	}
	var re *engine.RuntimeError
	if _, err := engine.Select(engine.StrategyPreferred, engine.ModeFullAutonomous, "missing", cands); !errors.As(err, &re) || re.Kind != engine.ErrRuntimeMissing {
		t.Errorf("preferred missing runtime: %v", err)
	}
	if _, err := engine.Select(engine.StrategyPreferred, engine.ModeFullAutonomous, "nope", cands); !errors.Is(err, engine.ErrNoRuntime) {
		t.Errorf("unknown runtime: %v", err)
	}
	if _, err := engine.Select(engine.StrategyCapabilityMatch, engine.ModeFullAutonomous, "", cands[:1]); !errors.Is(err, engine.ErrNoCandidate) {
		t.Errorf("no capable runtime: %v", err)
	}
	if _, err := engine.ParseStrategy("fastest"); err == nil {
		t.Error("bad strategy accepted")
	}
}

func TestEventJSONNamesAreStable(t *testing.T) {
	t.Parallel()
	want := []string{"session_started", "user_message", "text_delta", "reasoning_delta", "assistant_message",
		"tool_call_started", "tool_call_progress", "tool_call_finished", "permission_requested", "permission_decided",
		"file_edited", "command_started", "command_finished", "patch_proposed", "patch_applied", "patch_rejected",
		"usage_updated", "compact_boundary", "runtime_switched", "mode_changed", "error", "notice", "final_result",
		"conversation_rewound"}
	if len(want) != len(engine.AllEventTypes) {
		t.Fatalf("%d types, want %d", len(engine.AllEventTypes), len(want))
	}
	for i, w := range want {
		if string(engine.AllEventTypes[i]) != w {
			t.Errorf("type %d = %s, want %s", i, engine.AllEventTypes[i], w)
		}
	}
}

// TestSelectTiesKeepTheCandidatesOrder: with three runtimes equal in what
// each strategy compares, every strategy picks the first candidate, so the
// configuration's order (not the names') breaks ties; and preferred with
// no runtime named picks the first capable one.
func TestSelectTiesKeepTheCandidatesOrder(t *testing.T) {
	t.Parallel()
	full := engine.NewCapSet(engine.CapTextCompletion, engine.CapStructuredOutput, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell)
	same := engine.Capabilities{Set: full, InputPerMTok: 3, OutputPerMTok: 15, LatencyMS: 500}
	cands := []engine.Candidate{
		{Runtime: "text", Capabilities: engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion)}},
		{Runtime: "zeta", Capabilities: same}, {Runtime: "mid", Capabilities: same}, {Runtime: "alpha", Capabilities: same},
	}
	for _, st := range engine.Strategies {
		got, err := engine.Select(st, engine.ModeFullAutonomous, "", cands)
		if err != nil || got.Runtime != "zeta" {
			t.Errorf("%s = %s, %v; want zeta, the first capable candidate", st, got.Runtime, err)
		}
	}
	// A tie on price that the latency does not break either way.
	cands[2].Capabilities.LatencyMS = 100
	if got, _ := engine.Select(engine.StrategyLatencyOptimized, engine.ModeFullAutonomous, "", cands); got.Runtime != "mid" {
		t.Errorf("latency_optimized = %s, want mid", got.Runtime)
	}
	if got, _ := engine.Select(engine.StrategyCostOptimized, engine.ModeFullAutonomous, "", cands); got.Runtime != "zeta" {
		t.Errorf("cost_optimized = %s, want zeta", got.Runtime)
	}
}

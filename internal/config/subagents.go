package config

import (
	"math"

	"github.com/kaizen-code/kz/engine"
)

// SubagentsFile is the [subagents] table: the defaults of a child turn
// (the task tool, /task) and how many read-only children run at once.
type SubagentsFile struct {
	MaxCycles   int      `toml:"max_cycles"`
	BudgetUSD   float64  `toml:"budget_usd"`
	Timeout     Duration `toml:"timeout"`
	MaxParallel int      `toml:"max_parallel"`
}

// Subagents is the merged [subagents] table.
type Subagents struct {
	Limits      Limits
	MaxParallel int
}

// Engine is the table as the session takes it. A child's limits are cut
// to its parent's by the session whatever is configured here.
func (s Subagents) Engine() engine.SubagentConfig {
	return engine.SubagentConfig{MaxParallel: s.MaxParallel,
		Limits: engine.Limits{MaxCycles: s.Limits.MaxCycles, BudgetUSD: s.Limits.BudgetUSD, Timeout: s.Limits.Timeout.Duration}}
}

// applySubagents merges a file's [subagents] table. An untrusted project
// may tighten each value, never loosen it.
func (cfg *Config) applySubagents(f SubagentsFile, lines keyLines, full bool) error {
	switch {
	case f.MaxCycles < 0:
		return lines.errorf("subagents.max_cycles", "cannot be negative (0 means the parent's limit)")
	case math.IsNaN(f.BudgetUSD) || math.IsInf(f.BudgetUSD, 0):
		return lines.errorf("subagents.budget_usd", "want a number of USD, not %v", f.BudgetUSD)
	case f.BudgetUSD < 0:
		return lines.errorf("subagents.budget_usd", "cannot be negative (0 means the parent's budget)")
	case f.Timeout.Duration < 0:
		return lines.errorf("subagents.timeout", "cannot be negative (0 means the parent's limit)")
	case f.MaxParallel < 0:
		return lines.errorf("subagents.max_parallel", "cannot be negative (0 means %d)", engine.DefaultMaxParallelChildren)
	}
	tighter := func(cur, v float64) bool { return cur == 0 || v < cur }
	cur := &cfg.Subagents
	if f.MaxCycles > 0 && (full || tighter(float64(cur.Limits.MaxCycles), float64(f.MaxCycles))) {
		cur.Limits.MaxCycles = f.MaxCycles
	}
	if f.BudgetUSD > 0 && (full || tighter(cur.Limits.BudgetUSD, f.BudgetUSD)) {
		cur.Limits.BudgetUSD = f.BudgetUSD
	}
	if f.Timeout.Duration > 0 && (full || tighter(float64(cur.Limits.Timeout.Duration), float64(f.Timeout.Duration))) {
		cur.Limits.Timeout = f.Timeout
	}
	if f.MaxParallel > 0 && (full || tighter(float64(cur.MaxParallel), float64(f.MaxParallel))) {
		cur.MaxParallel = f.MaxParallel
	}
	return nil
}

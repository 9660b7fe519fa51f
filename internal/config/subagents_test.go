package config

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

func TestSubagentsTable(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, `
[subagents]
max_cycles = 20
budget_usd = 0.5
timeout = "5m"
max_parallel = 4
`)
	// An untrusted project may tighten each value, never loosen one.
	write(t, p.ProjectFile, `
[subagents]
max_cycles = 50
budget_usd = 0.25
timeout = "1h"
max_parallel = 2
`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.SubagentConfig{MaxParallel: 2, Limits: engine.Limits{MaxCycles: 20, BudgetUSD: 0.25, Timeout: 5 * time.Minute}}
	if got := c.Subagents.Engine(); got != want {
		t.Errorf("subagents = %+v, want %+v", got, want)
	}
}

func TestSubagentsTableErrors(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"[subagents]\nmax_cycles = -1\n":   "config.toml:2: subagents.max_cycles: cannot be negative",
		"[subagents]\nbudget_usd = -2\n":   "config.toml:2: subagents.budget_usd: cannot be negative",
		"[subagents]\nmax_parallel = -3\n": "config.toml:2: subagents.max_parallel: cannot be negative",
		"[subagents]\nbudget_usd = nan\n":  "subagents.budget_usd: want a number of USD",
		"[subagents]\nparallel = 3\n":      "parallel",
	} {
		p := paths(t)
		write(t, p.UserConfig, body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", body, err, want)
		}
	}
}

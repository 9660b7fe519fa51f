package app

import (
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tui"
)

// demoRuntimes builds the runtimes of `kz --demo` from the TUI's demo
// scripts: "demo", a full agent with two models, and "demo-lite", a
// text-only runtime.
func demoRuntimes() ([]engine.RuntimeEntry, error) {
	full, err := scripted.Parse(tui.DemoRuntime, "demo.jsonl", strings.NewReader(tui.DemoScript))
	if err != nil {
		return nil, fmt.Errorf("demo script: %w", err)
	}
	lite, err := scripted.Parse(tui.DemoLiteRuntime, "demo_lite.jsonl", strings.NewReader(tui.DemoLiteScript))
	if err != nil {
		return nil, fmt.Errorf("demo script: %w", err)
	}
	return []engine.RuntimeEntry{
		{Runtime: full, Models: []string{"demo-large", "demo-small"}, FixedModels: true, Description: "scripted demo · tools, edits, reviews"},
		{Runtime: lite, Models: []string{lite.Model()}, FixedModels: true, Description: "scripted demo · text only"},
	}, nil
}

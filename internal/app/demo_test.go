package app

import (
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tui"
)

func TestDemoRuntimesParse(t *testing.T) {
	entries, err := demoRuntimes()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Runtime.Name() != tui.DemoRuntime || entries[1].Runtime.Name() != tui.DemoLiteRuntime {
		t.Fatalf("entries = %+v", entries)
	}
	if err := engine.CheckMode(engine.ModeFullAutonomous, "demo-lite", "", entries[1].Runtime.Capabilities("")); err == nil {
		t.Fatal("demo-lite should refuse full-autonomous")
	}
}

package app

import "testing"

// --reasoning becomes the step of the TUI's /reasoning cycle the session
// starts at: a level as itself, a budget as the level it reaches, and
// nothing kz understands as no step.
func TestCycleLevelOfTheCommandLine(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "  ": "", "high": "high", "HIGH": "high", " medium ": "medium", "low": "low",
		"off": "off", "none": "off", "1024": "low", "2048": "low", "8191": "low", "8192": "medium",
		"24576": "high", "100000": "high", "bogus": "", "12": "",
	} {
		if got := cycleLevel(in); got != want {
			t.Errorf("cycleLevel(%q) = %q, want %q", in, got, want)
		}
	}
}

//go:build !race

package tui

import (
	"runtime"
	"testing"
)

// TestThousandTurnSessionStaysSmall holds the memory target as a test: a
// 1,000-turn session with every item rendered (scrolled through from the
// bottom to the top) stays under 150 MB of heap. It is left out of -race
// builds, where rendering a thousand answers takes minutes.
func TestThousandTurnSessionStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large session")
	}
	m := build1000Turns(t)
	pages := 0
	for !m.tr.atTop() {
		m.press("pgup")
		_ = m.View()
		pages++
	}
	if pages < 1000 {
		t.Fatalf("scrolled %d pages through 1,000 turns: not every item was rendered", pages)
	}
	if heap, _ := memNow(); heap > 150 {
		t.Fatalf("heap %.0f MB after a 1,000-turn session, want < 150", heap)
	}
	runtime.KeepAlive(m)
}

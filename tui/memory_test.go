//go:build !race

package tui

import (
	"runtime"
	"testing"
)

// TestThousandTurnSessionStaysSmall holds the memory target as a test: a
// 1,000-turn session with every item rendered (scrolled through from the
// bottom to the top) stays under 150 MB of heap and of RSS. It is left
// out of -race builds, where rendering a thousand answers takes minutes.
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
	heap, rss := memNow()
	if heap > 150 || rss > 150 {
		t.Fatalf("heap %.0f MB, RSS %.0f MB after a 1,000-turn session, want both < 150", heap, rss)
	}
	t.Logf("1,000 turns, all rendered: heap %.1f MB, RSS %.1f MB", heap, rss)
	runtime.KeepAlive(m)
}

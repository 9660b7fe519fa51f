package tui

import "testing"

// TestHintLineFitsEveryWidth: the key hint under the status bar is never
// wider than the terminal, whatever the width.
func TestHintLineFitsEveryWidth(t *testing.T) {
	for w := 20; w <= 120; w++ {
		m := testModel(t, newFake(), w, 24)
		if got := textWidth(m.hintLine()); got > m.width {
			t.Errorf("width %d: the hint line is %d columns: %q", w, got, m.hintLine())
		}
	}
}

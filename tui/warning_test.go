package tui

import (
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestModelWarningShownOnce: the catalog warning that kz's own runtimes put
// on session_started becomes one notice, however many turns repeat it.
func TestModelWarningShownOnce(t *testing.T) {
	tr := newTranscript()
	for turn := int64(1); turn <= 3; turn++ {
		tr.apply(engine.Event{Type: engine.EventSessionStarted, TurnID: turn, Text: `model "x" is not in kz's catalog`})
	}
	tr.apply(engine.Event{Type: engine.EventSessionStarted, TurnID: 4})
	var n int
	for _, it := range tr.items {
		if it.kind == kindNotice {
			n++
			if it.text != `warning: model "x" is not in kz's catalog` || it.style != "warn" {
				t.Errorf("notice %q style %q", it.text, it.style)
			}
		}
	}
	if n != 1 || len(tr.items) != 1 {
		t.Errorf("%d notices, %d items", n, len(tr.items))
	}
}

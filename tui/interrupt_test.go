package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// TestEscTwiceQuicklyKillsHard: the first esc stops the turn (graceful
// interrupt), a second one within hardStopWindow kills it at once, and a
// second one later is another plain stop.
func TestEscTwiceQuicklyKillsHard(t *testing.T) {
	for _, c := range []struct {
		name string
		gap  time.Duration
		hard bool
	}{
		{"at once", 100 * time.Millisecond, true},
		{"at the edge of the window", hardStopWindow, true},
		{"after the window", hardStopWindow + time.Millisecond, false},
		{"much later", 10 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			m := testModel(t, f, 80, 24)
			clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			m.now = func() time.Time { return clock }
			m.typeText("go")
			m.press("enter")
			m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "go"})
			m.press("esc")
			if !strings.Contains(m.screen(), "stopping") {
				t.Errorf("the first esc says nothing:\n%s", m.screen())
			}
			clock = clock.Add(c.gap)
			m.press("esc")
			calls := f.Calls()
			if len(calls) != 3 || calls[1].method != "Interrupt" || calls[2].method != "Interrupt" {
				t.Fatalf("calls = %+v", calls)
			}
			if calls[1].args[0] != false || calls[2].args[0] != c.hard {
				t.Errorf("interrupts %v then %v, want false then %v", calls[1].args[0], calls[2].args[0], c.hard)
			}
			if c.hard && !strings.Contains(m.screen(), "killing now") {
				t.Errorf("the hard kill says nothing:\n%s", m.screen())
			}
			// A new turn starts counting again.
			m.feed(engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: "interrupted"})
			m.typeText("again")
			m.press("enter")
			m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 2, Text: "again"})
			clock = clock.Add(100 * time.Millisecond)
			m.press("esc")
			if last := f.Calls()[len(f.Calls())-1]; last.method != "Interrupt" || last.args[0] != false {
				t.Errorf("the next turn's first esc: %+v", last)
			}
		})
	}
}

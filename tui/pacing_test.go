package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
)

// pacedModel is a model with pacing on (not quiet) and a clock the test
// moves by hand. Its Cmds are not run: they would sleep for their ticks.
func pacedModel(t *testing.T) (*Model, *time.Time) {
	t.Helper()
	m := testModel(t, newFake(), 80, 20)
	m.quiet = false
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.now = func() time.Time { return clock }
	m.Update(eventsMsg{events: []engine.Event{{Type: engine.EventUserMessage, TurnID: 1, Text: "stream please"}}})
	return m, &clock
}

func delta(text string) eventsMsg {
	return eventsMsg{events: []engine.Event{{Type: engine.EventTextDelta, TurnID: 1, Text: text}}}
}

func shown(m *Model) string { return ansi.Strip(m.View().Content) }

// Deltas that arrive within a frame interval of the last frame are drawn
// together in the next one, which a scheduled tick brings.
func TestPacingCoalescesDeltasIntoTheNextFrame(t *testing.T) {
	m, clock := pacedModel(t)
	first := shown(m)
	if !strings.Contains(first, "stream please") {
		t.Fatalf("the prompt is not shown:\n%s", first)
	}
	*clock = clock.Add(time.Millisecond)
	if _, cmd := m.Update(delta("lorem ipsum ")); cmd == nil {
		t.Fatal("a lagging frame scheduled no tick")
	}
	if got := shown(m); got != first || strings.Contains(got, "lorem") {
		t.Fatalf("a delta 1 ms after a frame was drawn at once:\n%s", got)
	}
	wait, ok := m.pace.catchUp(m.now())
	if !ok || wait <= 0 || wait > streamFrameInterval {
		t.Fatalf("catchUp = %v, %v; want a wait within one frame interval", wait, ok)
	}
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("dolor"))
	*clock = clock.Add(wait)
	m.Update(frameMsg{})
	got := shown(m)
	if !strings.Contains(got, "lorem ipsum dolor") {
		t.Fatalf("the frame after the tick lacks the deltas:\n%s", got)
	}
	if _, ok := m.pace.catchUp(m.now()); ok {
		t.Fatal("a frame that shows everything still asks for a catch-up tick")
	}
}

// The final message, keys and other events are never held back: the next
// View shows them even within a frame interval of the last frame.
func TestPacingNeverHoldsBackTheFinalState(t *testing.T) {
	m, clock := pacedModel(t)
	_ = shown(m)
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("partial "))
	m.Update(eventsMsg{events: []engine.Event{{Type: engine.EventAssistantMessage, TurnID: 1, Text: "partial answer, complete"}}})
	if got := shown(m); !strings.Contains(got, "partial answer, complete") {
		t.Fatalf("the final message waits for a frame:\n%s", got)
	}
	m.Update(delta("x"))
	m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if got := shown(m); !strings.Contains(got, "› q") {
		t.Fatalf("a key waits for a frame:\n%s", got)
	}
}

// In quiet mode (no ticks) nothing is paced: every View is current.
func TestPacingIsOffWhenQuiet(t *testing.T) {
	m := testModel(t, newFake(), 80, 20)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "q"})
	_ = shown(m)
	m.Update(delta("visible at once"))
	if got := shown(m); !strings.Contains(got, "visible at once") {
		t.Fatalf("a quiet model held a delta back:\n%s", got)
	}
}

package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kaizen-code/kz/engine"
)

// The TUI trims its memory once it comes to rest: after a turn ends, and
// only after the last rest, and never while a turn runs.
func TestRestTrimsOnceAtRest(t *testing.T) {
	trims := 0
	oldFree, oldDelay := restTrim, restDelay
	restTrim, restDelay = func() { trims++ }, time.Millisecond
	t.Cleanup(func() { restTrim, restDelay = oldFree, oldDelay })

	m := testModel(t, &fakeSession{}, 80, 24)
	gen := m.restGen
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "go"},
		engine.Event{Type: engine.EventTextDelta, TurnID: 1, Text: "hi"})
	if m.restGen != gen {
		t.Fatalf("a rest began while the turn ran")
	}
	m.feed(engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: "complete"})
	if m.restGen != gen+1 {
		t.Fatalf("the turn's end began %d rests, want 1", m.restGen-gen)
	}

	m.quiet, m.trimAtRest = false, true // the rest's timer, run by hand below
	defer func() { m.quiet = true }()
	fire := func(timer tea.Cmd) {
		t.Helper()
		_, cmd := m.Update(timer())
		for _, msg := range runCmd(cmd) {
			m.Update(msg)
		}
	}
	first, second := m.rest(), m.rest()
	fire(first)
	if trims != 0 {
		t.Fatalf("a rest that another followed trimmed")
	}
	fire(second)
	if trims != 1 {
		t.Fatalf("the last rest trimmed %d times, want 1", trims)
	}
	running := m.rest()
	m.status.running = true
	fire(running)
	if trims != 1 {
		t.Fatalf("the trim ran while a turn ran")
	}
}

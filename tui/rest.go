package tui

import (
	"runtime/debug"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kaizen-code/kz/internal/imagetrim"
)

// When the TUI comes to rest (its session attached and nothing running,
// or a turn just ended) it gives the memory it no longer uses back to the
// OS once: a garbage collection, then the freed pages returned. Go's own
// scavenger returns them too, but over minutes, so a TUI that sat at its
// prompt kept the garbage of its start (configuration, store, the first
// render) and of its last turn (a long streamed answer is tens of MB)
// resident. It also unmaps the pages of kz's executable that start-up and
// the last turn mapped (internal/imagetrim): about 25 of the 37 MB an
// idle TUI held were such pages, most never touched again; the next key
// maps back what it needs, about 1 ms once (BenchmarkProcessKeyAfterRest).
// At rest the collection costs nobody a frame.

// restDelay is how long nothing must happen before the TUI counts as at
// rest: a turn or the set-up that starts within it makes the trim wait
// for the next rest.
var restDelay = 500 * time.Millisecond

// restTrim is the trim; tests count its calls.
var restTrim = func() {
	debug.FreeOSMemory()
	// The executable's clean pages mapped at start and by the last turn
	// are unmapped too (see package imagetrim); the next frame maps back
	// what it touches. A failure only leaves them mapped.
	_, _ = imagetrim.Drop()
}

// restMsg says restDelay passed since the rest numbered gen began.
type restMsg struct{ gen uint64 }

// rest begins a rest: the trim runs after restDelay unless another rest
// began meanwhile or a turn runs then.
func (m *Model) rest() tea.Cmd {
	m.restGen++
	gen := m.restGen
	if m.quiet || !m.trimAtRest {
		// Tests run without timers, and models not run by Run (tests
		// again) do not trim.
		return nil
	}
	// Not tea.Tick: the timer ends with the program's context, so that no
	// goroutine outlives a program that quits within restDelay.
	ctx := m.ctx
	return func() tea.Msg {
		t := time.NewTimer(restDelay)
		defer t.Stop()
		select {
		case <-t.C:
			return restMsg{gen: gen}
		case <-ctx.Done():
			return nil
		}
	}
}

// onRest trims, off the UI goroutine, if the rest that scheduled msg is
// the last one and the session is idle.
func (m *Model) onRest(msg restMsg) tea.Cmd {
	if msg.gen != m.restGen || m.status.running || m.pre != nil {
		return nil
	}
	return func() tea.Msg {
		restTrim()
		return nil
	}
}

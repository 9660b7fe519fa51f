package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// preparingGate allows everything and records its preparations.
type preparingGate struct {
	engine.PermissionModeGate
	mu       sync.Mutex
	prepared int
	done     chan struct{}
}

func (g *preparingGate) Prepare() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prepared++
	if g.prepared == 1 {
		close(g.done)
	}
}

func (g *preparingGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.prepared
}

// stepRuntime runs its steps in order, each against the turn.
type stepRuntime struct{ steps []func(*engine.Turn) }

func (*stepRuntime) Name() string { return "steps" }
func (*stepRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *stepRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	for _, step := range r.steps {
		step(t)
	}
	return engine.Result{Output: "ok"}, nil
}

// TestGatePreparedWhenTheRuntimeIsUp: a gate with work to do before its
// first check is asked for it once a runtime reports its session started
// or a tool call, whichever comes first, never while the turn starts (an
// agent CLI is starting then, and the work would take a core from it),
// and once per session however many turns and calls follow.
func TestGatePreparedWhenTheRuntimeIsUp(t *testing.T) {
	t.Parallel()
	waitPrepared := func(g *preparingGate) {
		select {
		case <-g.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the gate was never prepared")
		}
	}
	for name, first := range map[string]engine.Event{
		"session started": {Type: engine.EventSessionStarted},
		"tool call":       {Type: engine.EventToolCallStarted, ToolCallID: "c1", Tool: "Bash"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := &preparingGate{done: make(chan struct{})}
			// early counts the preparations seen in the first turn before
			// the runtime reported more than text.
			var early, turns int
			rt := &stepRuntime{steps: []func(*engine.Turn){
				func(*engine.Turn) { turns++ },
				func(t *engine.Turn) { t.Emit(engine.Event{Type: engine.EventTextDelta, Text: "thinking about it"}) },
				func(*engine.Turn) {
					if turns == 1 {
						// A preparation started by the text would have
						// had time to run.
						time.Sleep(20 * time.Millisecond)
						early = g.count()
					}
				},
				func(tr *engine.Turn) { tr.Emit(first) },
				func(*engine.Turn) { waitPrepared(g) },
				func(tr *engine.Turn) {
					tr.Emit(engine.Event{Type: engine.EventSessionStarted})
					tr.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: "c2", Tool: "Read"})
				},
			}}
			s, _ := newSession(t, engine.Config{Gate: g, Runtime: "steps", Runtimes: []engine.RuntimeEntry{entry(rt)}})
			for range 2 {
				if _, err := s.RunTurn(context.Background(), "go"); err != nil {
					t.Fatal(err)
				}
			}
			if early != 0 {
				t.Errorf("the gate was prepared %d times before the runtime reported anything but text", early)
			}
			if got := g.count(); got != 1 {
				t.Errorf("the gate was prepared %d times over two turns, want once", got)
			}
		})
	}
}

package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// heldRuntime is a keptRuntime whose CloseSession, like a CLI's polite
// shutdown, takes until the test lets it go.
type heldRuntime struct {
	keptRuntime
	entered chan string
	leave   chan struct{}
}

func (r *heldRuntime) CloseSession(id string) {
	r.entered <- id
	<-r.leave
	r.keptRuntime.CloseSession(id)
}

// A one-shot session (kz -p) stops the CLI process of its runtime as soon
// as the turn is done with it, before the turn's result is returned, and
// App.Close waits for that stop to end; a session that goes on (the TUI)
// keeps its process between turns.
func TestOneShotReleasesTheAgentAfterItsTurn(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		rt := &heldRuntime{keptRuntime: keptRuntime{name: "a"}, entered: make(chan string, 1), leave: make(chan struct{})}
		entries := []engine.RuntimeEntry{{Runtime: rt}}
		a := &App{Runtimes: entries}
		sess, err := engine.NewSession(engine.Config{Workspace: t.TempDir(), Journal: nopJournal{}, Runtimes: entries, Runtime: "a",
			Release: a.releaseRuntime})
		if err != nil {
			t.Fatal(err)
		}
		a.Session = sess
		final, err := sess.RunTurn(context.Background(), "go")
		if err != nil || final.Status != string(engine.StatusComplete) {
			t.Fatalf("turn: %v %+v", err, final)
		}
		// The stop started during the turn, and is still going.
		select {
		case id := <-rt.entered:
			if id != sess.ID() {
				t.Fatalf("closed session %q, want %q", id, sess.ID())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the runtime's process was not stopped after the turn")
		}
		closed := make(chan struct{})
		go func() {
			a.Close()
			close(closed)
		}()
		select {
		case <-closed:
			t.Fatal("Close returned while the CLI was still stopping")
		case <-time.After(50 * time.Millisecond):
		}
		close(rt.leave)
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return once the CLI had stopped")
		}
		if got := rt.closedSessions(); !slices.Equal(got, []string{sess.ID()}) {
			t.Errorf("closed sessions %v, want [%s]", got, sess.ID())
		}
	})
	t.Run("interactive", func(t *testing.T) {
		rt := &keptRuntime{name: "a"}
		entries := []engine.RuntimeEntry{{Runtime: rt}}
		sess, err := engine.NewSession(engine.Config{Workspace: t.TempDir(), Journal: nopJournal{}, Runtimes: entries, Runtime: "a"})
		if err != nil {
			t.Fatal(err)
		}
		a := &App{Session: sess, Runtimes: entries}
		defer a.Close()
		for range 2 {
			if _, err := sess.RunTurn(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
		}
		if got := rt.closedSessions(); len(got) != 0 {
			t.Errorf("a session that goes on closed its agent: %v", got)
		}
	})
}

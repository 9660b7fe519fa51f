package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/sandbox/sandboxtest"
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
		a := sessionApp(t, Options{OneShot: true}, rt)
		sess := a.Session
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
		a := sessionApp(t, Options{Interactive: true}, rt)
		defer a.Close()
		sess := a.Session
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

// sessionApp is an App with a store on disk and rt as its one runtime,
// whose session newSession made from o, as Open makes it.
func sessionApp(t *testing.T, o Options, rt engine.Runtime) *App {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	a := &App{Env: &Env{Workspace: t.TempDir(), Config: &config.Config{}}, Store: st,
		Runtimes: []engine.RuntimeEntry{{Runtime: rt}}}
	if err := a.newSession(o, engine.Config{ID: engine.NewID(), Runtime: rt.Name()}); err != nil {
		a.Close()
		t.Fatal(err)
	}
	return a
}

// inotifyFDs counts this process's inotify descriptors.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// A one-shot session also drops the sandbox's scan caches when its turn
// is done, while the turn's end is stored: their inotify descriptors,
// whose close waits for the kernel, are gone before Close.
func TestOneShotForgetsTheSandboxScansAfterItsTurn(t *testing.T) {
	sandboxtest.RequireBubblewrap(t)
	rt := &keptRuntime{name: "a"}
	a := sessionApp(t, Options{OneShot: true}, rt)
	defer a.Close()
	sb, err := sandbox.New(sandbox.Policy{Workspace: a.Env.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	a.sandbox = sb
	before := inotifyFDs(t)
	// A confined command searches the workspace, and keeps the search
	// with a watch on it.
	cmd, err := sb.Command(context.Background(), engine.Confinement{Profile: engine.ProfileWorkspaceWrite},
		sandbox.Spec{Argv: []string{"/bin/true"}, Dir: a.Env.Workspace, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := inotifyFDs(t); got != before+1 {
		t.Fatalf("%d inotify descriptors after the search, %d before: the test proves nothing", got, before)
	}
	if _, err := a.Session.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	a.released.Wait()
	if got := inotifyFDs(t); got != before {
		t.Errorf("%d inotify descriptors after the one-shot turn, want %d", got, before)
	}
}

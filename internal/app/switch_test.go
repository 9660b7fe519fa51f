package app

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

type nopJournal struct{}

func (nopJournal) Append(engine.Event) error   { return nil }
func (nopJournal) Flush(context.Context) error { return nil }

// keptRuntime is a runtime that keeps a process per session, recording
// which sessions it was told to close.
type keptRuntime struct {
	name   string
	mu     sync.Mutex
	closed []string
}

func (r *keptRuntime) Name() string { return r.name }
func (r *keptRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapShell, engine.CapFilesystemEdit)}
}
func (r *keptRuntime) Run(context.Context, *engine.Turn) (engine.Result, error) {
	return engine.Result{Status: engine.StatusComplete}, nil
}
func (r *keptRuntime) CloseSession(id string) {
	r.mu.Lock()
	r.closed = append(r.closed, id)
	r.mu.Unlock()
}
func (r *keptRuntime) closedSessions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.closed...)
}

// A session that switches away from a runtime closes its process there;
// the runtime it switches to keeps its own.
func TestSwitchingAwayClosesTheAgent(t *testing.T) {
	a, b := &keptRuntime{name: "a"}, &keptRuntime{name: "b"}
	entries := []engine.RuntimeEntry{{Runtime: a}, {Runtime: b}}
	sess, err := engine.NewSession(engine.Config{Workspace: t.TempDir(), Journal: nopJournal{}, Runtimes: entries, Runtime: "a"})
	if err != nil {
		t.Fatal(err)
	}
	app := &App{Session: sess, Runtimes: entries}
	app.watchSwitches()
	defer func() { _ = app.CloseSession(context.Background()) }()
	if err := sess.SwitchRuntime("b", ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(a.closedSessions()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := a.closedSessions(); len(got) != 1 || got[0] != sess.ID() {
		t.Errorf("runtime a closed sessions %v, want [%s]", got, sess.ID())
	}
	if got := b.closedSessions(); len(got) != 0 {
		t.Errorf("runtime b closed sessions %v", got)
	}
}

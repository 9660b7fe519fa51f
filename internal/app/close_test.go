package app

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
	"go.uber.org/goleak"
)

// stoppingRuntime stands for an agent CLI whose polite shutdown takes a
// while: its Close runs during, and checks what must hold while the
// process may still be writing its native session.
type stoppingRuntime struct {
	keptRuntime
	during  func()
	stopped atomic.Bool
}

func (r *stoppingRuntime) Close() {
	r.during()
	r.stopped.Store(true)
}

// TestCloseStopsTheCLIsBesideTheStore: App.Close closes the store while a
// CLI is still stopping, so that kz -p's exit waits for the CLI's
// shutdown alone, not for the CLI and then kz's own closing; the session
// stays claimed until the CLI is gone (no second kz resumes its native
// session meanwhile), and Close returns only after that, leaving no
// goroutine behind.
func TestCloseStopsTheCLIsBesideTheStore(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kz.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id := engine.NewID()
	claim, err := st.ClaimSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Another kz on the same database.
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	var storeClosed, claimHeld bool
	rt := &stoppingRuntime{keptRuntime: keptRuntime{name: "cli"}}
	rt.during = func() {
		if c, err := other.ClaimSession(ctx, id); err == nil {
			_ = c.Release()
		} else {
			claimHeld = true
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := st.Session(ctx, id); err != nil && (strings.Contains(err.Error(), "closed")) {
				storeClosed = true
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	a := &App{Store: st, claim: claim, journal: st.NewWriter(), Runtimes: []engine.RuntimeEntry{{Runtime: rt}}}
	a.Close()
	if !rt.stopped.Load() {
		t.Fatal("Close returned before the CLI had stopped")
	}
	if !storeClosed {
		t.Error("the store stayed open until the CLI had stopped")
	}
	if !claimHeld {
		t.Error("another kz could claim the session while its CLI was still stopping")
	}
	c, err := other.ClaimSession(ctx, id)
	if err != nil {
		t.Fatalf("the session is still claimed after Close: %v", err)
	}
	_ = c.Release()
}

package app

import (
	"context"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes"
)

// sessionCloser is a runtime that keeps a process per kz session across
// turns (the agent CLIs) and can end one session's.
type sessionCloser interface {
	CloseSession(sessionID string)
}

// switchWatcher ends a session's agent process once the session switches
// away from its runtime (the person's /runtime, or a failover): the
// process, its credential proxy and its sandbox are not held while
// another runtime works. A later turn on that runtime starts a new
// process, which resumes or is primed as after any restart.
type switchWatcher struct {
	cancel context.CancelFunc
	sub    *engine.Subscription
	done   chan struct{}
	once   sync.Once
}

// watchSwitches starts the watcher of the app's session.
func (a *App) watchSwitches() {
	sess, entries := a.Session, a.Runtimes
	ctx, cancel := context.WithCancel(context.Background())
	// Only switches: a watcher woken by every streamed delta would cost
	// the stream a goroutine wake-up per delta.
	w := &switchWatcher{cancel: cancel, sub: sess.SubscribeTo(engine.EventRuntimeSwitched), done: make(chan struct{})}
	cur := sess.State().Runtime
	go func() {
		defer close(w.done)
		for {
			ev, err := w.sub.Next(ctx)
			if err != nil {
				return
			}
			if ev.Type != engine.EventRuntimeSwitched || ev.Runtime == "" || ev.Runtime == cur {
				continue
			}
			prev := cur
			cur = ev.Runtime
			closeSession(entries, prev, sess.ID())
		}
	}()
	a.switches = w
}

// stop ends the watcher and waits for it. It is safe to call more than
// once, and on a nil watcher.
func (w *switchWatcher) stop() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		w.cancel()
		w.sub.Close()
		<-w.done
	})
}

// releaseRuntime stops, in the background, the process the named runtime
// keeps for this session (engine.Config.Release, in a one-shot session):
// the CLI's polite shutdown (stdin closed, then its exit) runs while kz
// checkpoints and stores the end of the turn. Close waits for it before
// it releases the claim and the sandbox, as for any CLI. The sandbox's
// scan caches go then too: closing their inotify descriptors waits for
// the kernel (10-20 ms with a watch on each of 1,000 directories), and a
// confined command after the turn (a hook) searches the workspace again.
// The checkpoint tracker's change watcher goes first, once what it saw is
// taken for the turn's end.
func (a *App) releaseRuntime(name string) {
	if a.tracker != nil {
		// No turn follows: what the checkpoint tracker's watcher saw is
		// taken for the turn's end, and the watcher closed in the
		// background, before the CLI is told to stop (Tracker.Retire).
		a.tracker.Retire(func(close func() error) { a.released.Go(func() { _ = close() }) })
	}
	id := a.Session.ID()
	a.released.Go(func() { closeSession(a.Runtimes, name, id) })
	if a.sandbox != nil {
		a.released.Go(a.sandbox.ForgetScans)
	}
}

// closeSession ends the process the named runtime keeps for session id,
// when it keeps one per session.
func closeSession(entries []engine.RuntimeEntry, name, id string) {
	if c, ok := runtimes.Entry(entries, name).Runtime.(sessionCloser); ok {
		c.CloseSession(id)
	}
}

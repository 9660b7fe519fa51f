package codex

import (
	"context"
	"sync"
	"time"

	"github.com/kaizen-code/kz/runtimes/jsonrpc"
)

// stopper stops the CLI processes of finished turns in the background,
// so that a turn's result does not wait for Codex's shutdown (closing its
// stdin, then the kill grace). Every stop it starts is tracked until the
// process has been reaped (or, in its own sandbox, has begun to exit and
// the sandbox is killed: jsonrpc.Conn.Stop), and Close waits for them
// all: no Codex outlives the runtime.
//
// A stop is keyed by the turn's thread: a later turn that resumes the
// thread waits for the old process to have ended first, so that two Codex
// processes never write the same thread's rollout at once.
type stopper struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	// pending maps a running stop to its thread; done is closed once the
	// process is reaped and its cleanup ran.
	pending map[*pendingStop]struct{}
}

// pendingStop is one process being stopped.
type pendingStop struct {
	c      *jsonrpc.Conn
	thread string
	done   chan struct{}
}

// stop ends c after a completed turn: stdin is closed, then after grace
// the process group is killed; after that, cleanup runs (closing what
// must outlive the process, such as its credential proxy). Once the
// stopper is closed the stop runs in the caller instead.
func (s *stopper) stop(c *jsonrpc.Conn, thread string, grace time.Duration, cleanup func()) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Stop(grace)
		cleanup()
		return
	}
	if s.pending == nil {
		s.pending = map[*pendingStop]struct{}{}
	}
	p := &pendingStop{c: c, thread: thread, done: make(chan struct{})}
	s.pending[p] = struct{}{}
	// Added under mu with closed unset: Close, which sets closed under mu
	// before waiting, always sees this stop.
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		c.Stop(grace)
		cleanup()
		s.mu.Lock()
		delete(s.pending, p)
		s.mu.Unlock()
		close(p.done)
	}()
}

// await waits until no process of thread is still being stopped, or ctx
// ends.
func (s *stopper) await(ctx context.Context, thread string) error {
	if thread == "" {
		return nil
	}
	s.mu.Lock()
	var waits []chan struct{}
	for p := range s.pending {
		if p.thread == thread {
			waits = append(waits, p.done)
		}
	}
	s.mu.Unlock()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// close waits for every stop in progress. A stop is bounded by its grace
// (then the group is killed), but one whose process does not die within
// limit is killed at once, so that close returns promptly. Later stops
// run synchronously in their caller.
func (s *stopper) close(limit time.Duration) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	s.mu.Lock()
	var conns []*jsonrpc.Conn
	for p := range s.pending {
		conns = append(conns, p.c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.KillNow()
	}
	<-done
}

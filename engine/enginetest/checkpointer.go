package enginetest

import (
	"context"
	"slices"
	"sync"

	"github.com/kaizen-code/kz/engine"
)

// HeldCheckpointer is an engine.Checkpointer whose Refresh, the record of
// a turn's starting state (a scan of a large workspace takes its time),
// waits until Release. It notes each call in order ("refresh" when
// Refresh begins, "recorded" when it ends, "before ID" for a call), with
// whatever the test notes beside them, so that a test can check what
// came before the state was recorded.
type HeldCheckpointer struct {
	hold, started   chan struct{}
	release, starts sync.Once

	mu  sync.Mutex
	log []string
}

var _ engine.Checkpointer = (*HeldCheckpointer)(nil)

// NewHeldCheckpointer returns a HeldCheckpointer that holds Refresh.
func NewHeldCheckpointer() *HeldCheckpointer {
	return &HeldCheckpointer{hold: make(chan struct{}), started: make(chan struct{})}
}

// Note adds s to the steps.
func (c *HeldCheckpointer) Note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, s)
}

// Steps returns the steps so far.
func (c *HeldCheckpointer) Steps() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log)
}

// Release lets Refresh end; later calls do nothing.
func (c *HeldCheckpointer) Release() { c.release.Do(func() { close(c.hold) }) }

// Started is closed when Refresh begins.
func (c *HeldCheckpointer) Started() <-chan struct{} { return c.started }

// Refresh implements engine.Checkpointer.
func (c *HeldCheckpointer) Refresh(ctx context.Context, _ engine.CheckpointCall) error {
	c.Note("refresh")
	c.starts.Do(func() { close(c.started) })
	select {
	case <-c.hold:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.Note("recorded")
	return nil
}

// BeforeCall implements engine.Checkpointer.
func (c *HeldCheckpointer) BeforeCall(_ context.Context, call engine.CheckpointCall) error {
	c.Note("before " + call.ToolCallID)
	return nil
}

// AfterCall implements engine.Checkpointer.
func (c *HeldCheckpointer) AfterCall(context.Context, engine.CheckpointCall) error { return nil }

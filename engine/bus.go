package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// ErrClosed is returned by a subscription or session that was closed.
var ErrClosed = errors.New("closed")

// Subscription is one subscriber's view of a session's events. Each has its
// own queue, so a slow subscriber never stalls the runtime or the others:
// while it lags, consecutive deltas of the same kind are merged in its queue
// (no text is lost, it arrives in bigger pieces) and repeated progress
// events replace each other. Every other event is queued one by one, so
// permission requests, errors and final results are never dropped.
type Subscription struct {
	mu    sync.Mutex
	queue []Event
	// more holds text merged into the last queued event and not yet
	// copied into it, so merging n deltas costs O(n), not O(n²).
	more   strings.Builder
	notify chan struct{}
	closed bool
	bus    *bus
	// hint is the length of the last batch NextBatch handed out. The batch
	// belongs to the reader from then on, so the next queue starts with
	// that much room instead of growing again from nothing: events are
	// large and regrowing cost a tenth of the pipeline's CPU.
	hint int
}

// Next returns the next event, waiting until one arrives, ctx ends or the
// subscription is closed (ErrClosed once the queue is drained).
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		s.settle()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, ErrClosed
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// NextBatch returns every queued event (at least one), waiting like Next.
// A renderer uses it to apply a burst of events in one frame.
func (s *Subscription) NextBatch(ctx context.Context) ([]Event, error) {
	for {
		s.mu.Lock()
		s.settle()
		if len(s.queue) > 0 {
			out := s.queue
			s.queue, s.hint = nil, len(out)
			s.mu.Unlock()
			return out, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close detaches the subscription; queued events are discarded.
func (s *Subscription) Close() {
	if s.bus != nil {
		s.bus.remove(s)
	}
	s.mu.Lock()
	s.closed = true
	s.queue = nil
	s.more.Reset()
	s.mu.Unlock()
	s.wake()
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// deliver queues ev, merging it into the tail when it is a delta of the same
// kind and stream that the subscriber has not taken yet.
func (s *Subscription) deliver(ev Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if n := len(s.queue); n > 0 && ev.Type.Coalescible() {
		tail := &s.queue[n-1]
		if mergeable(tail, &ev) {
			s.merge(tail, &ev)
			s.mu.Unlock()
			s.wake()
			return
		}
	}
	s.settle()
	if s.queue == nil && s.hint > 0 {
		s.queue = make([]Event, 0, s.hint)
	}
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.wake()
}

// finish marks the end of the stream: Next drains what is queued, then
// returns ErrClosed.
func (s *Subscription) finish() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
}

func mergeable(tail, ev *Event) bool {
	return tail.Type == ev.Type && tail.Runtime == ev.Runtime && tail.TurnID == ev.TurnID &&
		tail.ToolCallID == ev.ToolCallID
}

// merge folds ev into tail. Text deltas concatenate; a progress event
// replaces the older one but keeps its accumulated output. s.mu is held.
func (s *Subscription) merge(tail, ev *Event) {
	switch ev.Type {
	case EventTextDelta, EventReasoningDelta:
		s.more.WriteString(ev.Text)
	case EventToolCallProgress:
		s.more.WriteString(ev.Output)
		tail.Text = ev.Text
	}
	tail.Seq, tail.Time = ev.Seq, ev.Time
}

// settle copies merged text into the last queued event. s.mu is held.
func (s *Subscription) settle() {
	if s.more.Len() == 0 || len(s.queue) == 0 {
		return
	}
	tail := &s.queue[len(s.queue)-1]
	if tail.Type == EventToolCallProgress {
		tail.Output += s.more.String()
	} else {
		tail.Text += s.more.String()
	}
	s.more.Reset()
}

// bus fans events out to subscribers. Publishing never blocks on a
// subscriber: each has its own queue.
type bus struct {
	mu     sync.Mutex
	subs   []*Subscription
	closed bool
}

func (b *bus) subscribe() *Subscription {
	s := &Subscription{notify: make(chan struct{}, 1), bus: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.closed = true
		return s
	}
	b.subs = append(b.subs[:len(b.subs):len(b.subs)], s)
	return s
}

func (b *bus) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Copy on write: publish iterates a snapshot of the slice without the
	// lock, so the slice it holds must never change under it.
	kept := make([]*Subscription, 0, len(b.subs))
	for _, x := range b.subs {
		if x != s {
			kept = append(kept, x)
		}
	}
	b.subs = kept
}

// publish must be called with events in sequence order; the session's emit
// lock guarantees that.
func (b *bus) publish(ev Event) {
	b.mu.Lock()
	subs := b.subs
	b.mu.Unlock()
	for _, s := range subs {
		s.deliver(ev)
	}
}

func (b *bus) close() {
	b.mu.Lock()
	subs := b.subs
	b.subs = nil
	b.closed = true
	b.mu.Unlock()
	for _, s := range subs {
		s.finish()
	}
}

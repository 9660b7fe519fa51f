package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrClosed is returned by a subscription or session that was closed.
var ErrClosed = errors.New("closed")

// Subscription is one subscriber's view of a session's events. Each has its
// own queue, so a slow subscriber never stalls the runtime or the others.
// In a live subscription (Subscribe), while it lags, consecutive deltas of
// the same kind are merged in its queue (no text is lost, it arrives in
// bigger pieces) and repeated progress events replace each other. Every
// other event is queued one by one, so permission requests, errors and
// final results are never dropped. A stored subscription (SubscribeStored)
// merges nothing: it receives the journal's rows as they are.
type Subscription struct {
	mu    sync.Mutex
	queue []Event
	// urgent is signalled, besides notify, whenever something arrives
	// that a reader must not wait for: an event that is not a delta, the
	// bus holding events until their commit (the reader must pull them),
	// or the end of the subscription. NextBatchBy sleeps on it, so a
	// stream of deltas does not wake its reader once per delta.
	urgent chan struct{}
	// only, when not nil, holds the event types the subscription takes;
	// the others are never queued and never wake it (SubscribeTo).
	only map[EventType]bool
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
	// stored says the subscription receives the journal's rows as they
	// are (see bus): nothing is merged in its queue.
	stored bool
}

// Next returns the next event, waiting until one arrives, ctx ends or the
// subscription is closed (ErrClosed once the queue is drained).
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.pull()
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
		s.pull()
		s.mu.Lock()
		s.settle()
		if len(s.queue) > 0 {
			out := s.queue
			s.queue, s.hint = nil, len(out)
			s.drainUrgent()
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

// NextBatchBy returns the events queued by deadline. It waits until then
// unless something urgent comes first: an event that is not a delta, or
// the end of the subscription. A renderer that draws its next frame at
// deadline anyway thus takes a burst of streamed text in one batch,
// woken once, instead of once per delta; anything else still reaches it
// at once. The batch is empty when nothing came; ErrClosed is returned
// once the subscription is closed and drained. Cancelling ctx ends the
// wait like the deadline does.
func (s *Subscription) NextBatchBy(ctx context.Context, deadline time.Time) ([]Event, error) {
	if wait := time.Until(deadline); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-s.urgent:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	s.pull()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	out := s.queue
	if len(out) == 0 {
		if s.closed {
			return nil, ErrClosed
		}
		return nil, nil
	}
	s.queue, s.hint = nil, len(out)
	s.drainUrgent()
	return out, nil
}

// pull moves the events the journal has stored since into the live
// subscriptions' queues (see bus.release). The reader does this work, not
// the journal's writer, whose goroutine is what bounds how many events
// per second the session can keep.
func (s *Subscription) pull() {
	if s.bus != nil && !s.stored {
		s.bus.release()
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
	s.wakeUrgent()
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// drainUrgent forgets a signal for events the reader has just taken, so
// that the next NextBatchBy sleeps until something new and urgent comes.
// An event delivered while the reader takes the queue may still leave a
// signal behind: it ends one wait early, which costs a wake-up, nothing
// more.
func (s *Subscription) drainUrgent() {
	select {
	case <-s.urgent:
	default:
	}
}

func (s *Subscription) wakeUrgent() {
	select {
	case s.urgent <- struct{}{}:
	default:
	}
}

// deliver queues evs in order, each merged into the tail when it is a
// delta of the same kind and stream that the subscriber has not taken yet
// (never in a stored subscription). One call takes the lock once: a commit
// hands over thousands of events at a time.
func (s *Subscription) deliver(evs ...Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	queued, urgent := false, false
	for i := range evs {
		ev := &evs[i]
		if s.only != nil && !s.only[ev.Type] {
			continue
		}
		queued = true
		urgent = urgent || !ev.Type.Coalescible()
		if n := len(s.queue); n > 0 && !s.stored && ev.Type.Coalescible() {
			if tail := &s.queue[n-1]; mergeable(tail, ev) {
				s.merge(tail, ev)
				continue
			}
		}
		s.settle()
		if s.queue == nil && s.hint > 0 {
			s.queue = make([]Event, 0, s.hint)
		}
		s.queue = append(s.queue, *ev)
	}
	s.mu.Unlock()
	if queued {
		s.wake()
	}
	if urgent {
		s.wakeUrgent()
	}
}

// finish marks the end of the stream: Next drains what is queued, then
// returns ErrClosed.
func (s *Subscription) finish() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
	s.wakeUrgent()
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
//
// With a journal that reports its commits (the bus is gated), nothing
// reaches a subscriber before the journal has stored it, except the
// deltas a live subscriber previews:
//
//   - A stored subscription (SubscribeStored) receives exactly the rows the
//     journal committed, in order, and nothing else: what a consumer of
//     kz -p sees is what kz sessions export shows, sequence numbers
//     included.
//   - A live subscription (Subscribe, the TUI) receives a delta (text,
//     reasoning, tool progress) as soon as every event before it was
//     committed, since it is a preview that the final message or result
//     replaces; every other event once it is committed itself.
//
// Without such a journal every event counts as committed when published.
type bus struct {
	mu     sync.Mutex
	live   []*Subscription
	stored []*Subscription
	closed bool
	// gated says the journal reports commits: events wait for them.
	gated bool
	// held[head:] are the events published to live subscribers and not
	// yet delivered, in order: the first waits for its commit, and each
	// later one for the commits before it.
	held []Event
	head int
	// committed is the highest sequence number the journal has stored.
	committed int64
	// failed is the journal's error once it failed: nothing more will be
	// committed, so live subscribers get every event at once.
	failed error
}

// SubscribeTo returns a live subscription (see Subscribe) that takes only
// the given event types. A watcher of a few kinds of event subscribes so,
// and a stream of thousands of deltas neither queues nor wakes it.
func (s *Session) SubscribeTo(types ...EventType) *Subscription {
	return s.bus.subscribe(false, types...)
}

// subscribe adds a subscription; only, when given, are the event types it
// takes.
func (b *bus) subscribe(stored bool, only ...EventType) *Subscription {
	s := &Subscription{notify: make(chan struct{}, 1), urgent: make(chan struct{}, 1), bus: b, stored: stored}
	if len(only) > 0 {
		s.only = make(map[EventType]bool, len(only))
		for _, t := range only {
			s.only[t] = true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.closed = true
		return s
	}
	if stored {
		b.stored = append(b.stored, s)
	} else {
		b.live = append(b.live, s)
	}
	return s
}

func (b *bus) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live = slices.DeleteFunc(b.live, func(x *Subscription) bool { return x == s })
	b.stored = slices.DeleteFunc(b.stored, func(x *Subscription) bool { return x == s })
	if len(b.live) == 0 {
		b.dropHeld()
	}
}

// publish hands one event to the bus. It must be called with events in
// sequence order; the session's emit lock guarantees that.
func (b *bus) publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.gated {
		deliverAll(b.live, ev)
		deliverAll(b.stored, ev)
		return
	}
	switch {
	case b.failed != nil:
		// Stored subscribers get what the session says was not saved
		// (see unsaved), nothing else.
		deliverAll(b.live, ev)
	case len(b.live) == 0:
		// Stored subscribers get the journal's rows (commit); with no
		// live subscriber nothing needs holding.
	case b.head == len(b.held) && ev.Type.Coalescible():
		deliverAll(b.live, ev)
	default:
		b.held = append(b.held, ev)
		if ev.Seq <= b.committed {
			// The journal stored it between the session's Append and
			// this publish, so the commit's wake-up found nothing held
			// and woke nobody. Without this one a subscriber already
			// waiting would not see the event until the next commit,
			// and the last event before a turn waits (a permission
			// request, a final result) has none after it.
			for _, s := range b.live {
				s.wake()
				s.wakeUrgent()
			}
		}
		if len(b.held)-b.head >= maxHeld {
			// No live subscriber has pulled for a while: deliver here,
			// where their queues merge the deltas, rather than hold an
			// unmerged copy of every event.
			b.releaseLocked()
		}
	}
}

// forward hands live subscribers events that another session already
// stored (a child's, wrapped as EventChild). They carry no sequence number
// of this session: they queue behind the events held for their commit and
// go out as soon as those do, so a subscriber sees a child's events after
// the parent's tool call that spawned it. Stored subscribers get only the
// journal's rows, so forwarded events never reach them.
func (b *bus) forward(evs ...Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case len(b.live) == 0:
	case !b.gated || b.failed != nil:
		deliverAll(b.live, evs...)
	default:
		for _, ev := range evs {
			ev.Seq = 0
			b.held = append(b.held, ev)
		}
		b.releaseLocked()
	}
}

// maxHeld is how many events wait in the bus before the publisher
// releases them itself.
const maxHeld = 4096

// commit takes what the journal reports: rows it stored, in order, or its
// failure. It is called from the journal's writer, one call at a time, and
// does as little as it can there: stored subscribers get the rows, live
// ones are woken to pull what is now theirs (release).
func (b *bus) commit(rows []Event, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if b.failed == nil {
			b.failed = err
		}
		deliverAll(b.live, b.held[b.head:]...)
		b.dropHeld()
		return
	}
	deliverAll(b.stored, rows...)
	if n := len(rows); n > 0 {
		b.committed = max(b.committed, rows[n-1].Seq)
	}
	if b.head < len(b.held) {
		// What is held waits behind an event that is not a delta: the
		// readers must pull it now, not at their next deadline.
		for _, s := range b.live {
			s.wake()
			s.wakeUrgent()
		}
	}
}

// release delivers to the live subscribers every held event whose turn has
// come: a delta once nothing before it waits, any other event once it is
// stored. The journal never holds back anything but deltas, so every event
// at or below the highest stored sequence number that is not a delta is
// stored.
func (b *bus) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked()
}

func (b *bus) releaseLocked() {
	i := b.head
	for ; i < len(b.held); i++ {
		if ev := &b.held[i]; !ev.Type.Coalescible() && ev.Seq > b.committed {
			break
		}
	}
	if i == b.head {
		return
	}
	deliverAll(b.live, b.held[b.head:i]...)
	clear(b.held[b.head:i])
	b.head = i
	switch {
	case b.head == len(b.held):
		b.held, b.head = b.held[:0], 0
	case b.head > len(b.held)/2:
		// Move what still waits to the front now and then, so the
		// backing array is reused instead of growing for ever.
		n := copy(b.held, b.held[b.head:])
		clear(b.held[n:])
		b.held, b.head = b.held[:n], 0
	}
}

// dropHeld forgets every held event. b.mu is held.
func (b *bus) dropHeld() {
	clear(b.held)
	b.held, b.head = b.held[:0], 0
}

// unsaved hands stored subscribers an event the journal could not store
// (its sequence number is zero), so that a consumer learns how the turn
// ended and why it is not in the history.
func (b *bus) unsaved(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	deliverAll(b.stored, ev)
}

func deliverAll(subs []*Subscription, evs ...Event) {
	if len(evs) == 0 {
		return
	}
	for _, s := range subs {
		s.deliver(evs...)
	}
}

func (b *bus) close() {
	b.mu.Lock()
	// The session flushed its journal before closing: what still waits
	// is stored, or never will be.
	deliverAll(b.live, b.held[b.head:]...)
	subs := append(b.live, b.stored...)
	b.live, b.stored = nil, nil
	b.dropHeld()
	b.closed = true
	b.mu.Unlock()
	for _, s := range subs {
		s.finish()
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Compacter is implemented by a runtime that can shrink the conversation on
// request (/compact). Compact reads turn.History, replaces it by a summary
// made with turn.Model and emits, through the turn, usage_updated for the
// summarising request and one compact_boundary with TokensBefore,
// TokensAfter and Output set to the summary. The boundary's Output is what
// later turns are primed with instead of the entries before it, so a runtime
// that emits a boundary without Output has compacted nothing that lasts.
//
// Agent CLIs manage their own context and do not implement it.
type Compacter interface {
	Compact(ctx context.Context, turn *Turn) (Result, error)
}

// ErrCannotCompact is returned by Session.Compact when the current runtime
// has no way to compact on request.
var ErrCannotCompact = errors.New("cannot compact on request")

// Compact summarises the conversation so far with the current runtime, as
// an operation like a turn: the session is busy while it runs (Submit and
// SwitchRuntime refuse, Interrupt cancels it, Close waits for it), and its
// events go through the one event path, so the journal and the transcript
// keep the compact_boundary with the summary that later turns start from.
// It returns the compact_boundary event.
//
// It refuses while a turn runs, when the conversation is empty, and when the
// current runtime cannot compact, saying why.
func (s *Session) Compact(ctx context.Context) (Event, error) {
	s.wg.Add(1)
	defer s.wg.Done()
	ts, c, err := s.beginCompact(ctx)
	if err != nil {
		return Event{}, err
	}
	res, err := safeCompact(ts.ctx, c, ts.turn)
	if err == nil && ts.ctx.Err() != nil {
		err = fmt.Errorf("compact: %w", context.Cause(ts.ctx))
	}

	s.mu.Lock()
	ts.release()
	usage, cost := ts.usage, ts.cost
	if !res.Usage.IsZero() {
		usage = res.Usage
	}
	if res.CostUSD > 0 {
		cost = res.CostUSD
	}
	// The summarising request is paid for whether or not it succeeded.
	s.totalUsage.Add(usage)
	s.totalCost += cost
	boundary := ts.boundary
	s.cur = nil
	s.mu.Unlock()

	if ferr := s.journal.Flush(context.WithoutCancel(ctx)); ferr != nil && err == nil {
		err = fmt.Errorf("compact: not saved: %w", ferr)
	}
	if err != nil {
		return Event{}, fmt.Errorf("compact on %s: %w", ts.turn.Runtime, err)
	}
	if boundary == nil {
		return Event{}, fmt.Errorf("compact on %s: the runtime found nothing it could summarise", ts.turn.Runtime)
	}
	return *boundary, nil
}

// beginCompact checks that a compaction can start and marks the session
// busy with a turn state that carries no turn number: a compaction is not a
// prompt and must not count as one.
func (s *Session) beginCompact(ctx context.Context) (*turnState, Compacter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, nil, ErrClosed
	case s.cur != nil:
		return nil, nil, fmt.Errorf("compact: %w (wait for it to end or interrupt it first)", ErrBusy)
	case s.storeErr != nil:
		return nil, nil, fmt.Errorf("compact: %w: %w", ErrNotSaved, s.storeErr)
	}
	e := s.runtimes[s.runtime]
	c, ok := e.Runtime.(Compacter)
	if !ok {
		return nil, nil, fmt.Errorf("runtime %s %w; it manages its own context (an agent CLI compacts by itself as its context fills): switch to a native runtime with /runtime to compact here",
			s.runtime, ErrCannotCompact)
	}
	if e.Unavailable != "" {
		return nil, nil, fmt.Errorf("compact: runtime %s is not available here: %s", s.runtime, e.Unavailable)
	}
	if !hasConversation(s.transcript.Entries) {
		return nil, nil, errors.New("compact: there is no conversation to compact yet")
	}
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(errInterrupted) })
	ts := &turnState{ctx: tctx, cancel: cancel, graceful: make(chan struct{}), started: s.now(), open: map[string]Event{}}
	ts.release = func() { stop(); cancel(nil) }
	n := len(s.transcript.Entries)
	// A second compaction summarises the first one's summary and what
	// came after it.
	ts.history = CompactedHistory(RewoundHistory(s.transcript.Entries[:n:n]))
	ts.turn = &Turn{SessionID: s.id, Runtime: s.runtime, Model: s.model, Mode: s.mode, PermissionMode: s.pmode,
		Workspace: s.workspace, Limits: s.limits, History: ts.history, Graceful: ts.graceful, host: s}
	s.cur = ts
	return ts, c, nil
}

// hasConversation reports whether the transcript holds anything a summary
// could replace: a message of either side.
func hasConversation(entries []TranscriptEntry) bool {
	for _, e := range entries {
		if (e.Kind == EntryUser || e.Kind == EntryAssistant) && strings.TrimSpace(e.Text) != "" {
			return true
		}
	}
	return false
}

// safeCompact turns a runtime panic into a crashed error, as runSafely does
// for turns.
func safeCompact(ctx context.Context, c Compacter, t *Turn) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &RuntimeError{Kind: ErrCrashed, Runtime: t.Runtime, Model: t.Model, Message: fmt.Sprintf("runtime panicked while compacting: %v", p)}
		}
	}()
	return c.Compact(ctx, t)
}

// CompactedHistory returns the history a runtime is primed with after the
// latest compaction: the summary carried by the last compact_boundary
// marker, as a user entry, followed by everything after that marker. It
// returns entries unchanged when nothing was compacted.
func CompactedHistory(entries []TranscriptEntry) []TranscriptEntry {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Kind == EntryMarker && e.Status == string(EventCompactBoundary) && e.Output != "" {
			out := make([]TranscriptEntry, 0, len(entries)-i)
			out = append(out, TranscriptEntry{Seq: e.Seq, TurnID: e.TurnID, Kind: EntryUser, Runtime: e.Runtime, Model: e.Model, Text: e.Output})
			return append(out, entries[i+1:]...)
		}
	}
	return entries
}

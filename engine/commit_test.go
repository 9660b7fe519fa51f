package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// gateJournal is a journal that stores only when the test says so: commit
// reports the oldest appended events as stored, fail reports a failure.
type gateJournal struct {
	mu      sync.Mutex
	pending []engine.Event
	stored  []engine.Event
	err     error
	fn      func([]engine.Event, error)
	flushed chan struct{}
}

func newGateJournal() *gateJournal { return &gateJournal{flushed: make(chan struct{}, 1)} }

func (j *gateJournal) Append(ev engine.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	if ev.Type != engine.EventToolCallProgress {
		j.pending = append(j.pending, ev)
	}
	return nil
}

// Flush stores everything, as a real journal's flush does.
func (j *gateJournal) Flush(context.Context) error {
	j.commit(-1)
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

func (j *gateJournal) ReportCommits(_ string, fn func([]engine.Event, error)) func() {
	j.mu.Lock()
	j.fn = fn
	j.mu.Unlock()
	return func() {}
}

// commit stores the n oldest pending events (all when n < 0).
func (j *gateJournal) commit(n int) {
	j.mu.Lock()
	if j.err != nil {
		j.mu.Unlock()
		return
	}
	if n < 0 || n > len(j.pending) {
		n = len(j.pending)
	}
	rows := append([]engine.Event(nil), j.pending[:n]...)
	j.pending = j.pending[n:]
	j.stored = append(j.stored, rows...)
	fn := j.fn
	j.mu.Unlock()
	if fn != nil && len(rows) > 0 {
		fn(rows, nil)
	}
}

func (j *gateJournal) fail(err error) {
	j.mu.Lock()
	j.err = err
	j.pending = nil
	fn := j.fn
	j.mu.Unlock()
	fn(nil, err)
}

func (j *gateJournal) waitPending(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j.mu.Lock()
		got := len(j.pending)
		j.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events appended, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// drain returns what a subscription holds now without waiting.
func drain(sub *engine.Subscription) []engine.Event {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	var out []engine.Event
	for {
		batch, err := sub.NextBatch(ctx)
		if err != nil {
			return out
		}
		out = append(out, batch...)
	}
}

func typesOf(evs []engine.Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, fmt.Sprintf("%s#%d", ev.Type, ev.Seq))
	}
	return strings.Join(s, " ")
}

// TestNothingIsShownBeforeItIsStored: with a journal that reports its
// commits, a stored subscriber sees an event only once it is stored, and a
// live one sees deltas as a preview but nothing else before it is stored,
// and never a delta ahead of an event before it that waits.
func TestNothingIsShownBeforeItIsStored(t *testing.T) {
	t.Parallel()
	body := `{"type":"session_started"}
{"type":"text_delta","text":"one"}
{"type":"tool_call_started","tool_call_id":"c1","tool":"read_file","input":{"path":"a"}}
{"type":"text_delta","text":"two"}
{"sleep_ms":60000}
`
	j := newGateJournal()
	s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body))}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	live, stored := s.Subscribe(), s.SubscribeStored()
	defer live.Close()
	defer stored.Close()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	// user_message, session_started, text "one", tool_call_started,
	// text "two".
	j.waitPending(t, 5)
	if got := drain(stored); len(got) != 0 {
		t.Fatalf("stored subscriber saw unstored events: %s", typesOf(got))
	}
	if got := drain(live); len(got) != 0 {
		t.Fatalf("live subscriber saw %s before the user message was stored", typesOf(got))
	}
	// The user message and session_started are stored: the live
	// subscriber previews "one", but not the tool call nor the delta
	// after it.
	j.commit(2)
	if got := typesOf(drain(stored)); got != "user_message#1 session_started#2" {
		t.Fatalf("stored subscriber: %s", got)
	}
	if got := typesOf(drain(live)); got != "user_message#1 session_started#2 text_delta#3" {
		t.Fatalf("live subscriber: %s", got)
	}
	// The delta is stored, then the tool call: the delta after it is
	// previewed only then.
	j.commit(1)
	if got := typesOf(drain(stored)); got != "text_delta#3" {
		t.Fatalf("stored subscriber: %s", got)
	}
	if got := drain(live); len(got) != 0 {
		t.Fatalf("live subscriber: %s", typesOf(got))
	}
	j.commit(1)
	if got := typesOf(drain(live)); got != "tool_call_started#4 text_delta#5" {
		t.Fatalf("live subscriber: %s", got)
	}
	if got := typesOf(drain(stored)); got != "tool_call_started#4" {
		t.Fatalf("stored subscriber: %s", got)
	}
	s.Interrupt(true)
}

// TestJournalFailureEndsTheTurn: when the journal fails, the running turn
// ends at once with a storage error, a stored subscriber gets a
// final_result without a sequence number (it is in no history), and no
// turn starts after it.
func TestJournalFailureEndsTheTurn(t *testing.T) {
	t.Parallel()
	body := `{"type":"session_started"}
{"type":"text_delta","text":"partial\n"}
{"sleep_ms":60000}
`
	j := newGateJournal()
	s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body))}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	live, stored := s.Subscribe(), s.SubscribeStored()
	defer live.Close()
	defer stored.Close()
	type result struct {
		final engine.Event
		err   error
	}
	done := make(chan result, 1)
	go func() {
		final, err := s.RunTurn(context.Background(), "go")
		done <- result{final, err}
	}()
	j.waitPending(t, 3)
	j.commit(2)
	full := errors.New("database or disk is full")
	j.fail(full)
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the turn went on after the journal failed")
	}
	if !errors.Is(r.err, engine.ErrNotSaved) || !errors.Is(r.err, full) {
		t.Fatalf("turn error %v", r.err)
	}
	if r.final.Status != string(engine.StatusError) || r.final.ErrorKind != engine.ErrStorage || r.final.Seq != 0 {
		t.Fatalf("final %+v", r.final)
	}
	got := drain(stored)
	last := got[len(got)-1]
	if typesOf(got[:2]) != "user_message#1 session_started#2" || last.Type != engine.EventFinalResult || last.Seq != 0 ||
		!strings.Contains(last.Text, "disk is full") {
		t.Fatalf("stored subscriber: %s, last %+v", typesOf(got), last)
	}
	// The live subscriber saw everything, the error included.
	var sawErr bool
	for _, ev := range drain(live) {
		sawErr = sawErr || ev.Type == engine.EventError && ev.ErrorKind == engine.ErrStorage
	}
	if !sawErr {
		t.Fatal("the live subscriber was not told why the turn ended")
	}
	if err := s.Submit("again"); !errors.Is(err, engine.ErrNotSaved) {
		t.Fatalf("a turn started on a journal that failed: %v", err)
	}
}

// TestStoredSubscriberAgreesWithTheStore runs tool-heavy streamed turns
// through the real store: every event a stored subscriber receives is a
// row of the store with the same sequence number, type and text, each
// sequence number arrives once, and after the turn they are all there.
func TestStoredSubscriberAgreesWithTheStore(t *testing.T) {
	t.Parallel()
	var sc strings.Builder
	sc.WriteString(`{"type":"session_started"}` + "\n")
	for i := range 50 {
		fmt.Fprintf(&sc, `{"type":"text_delta","text":"line %d\n","repeat":3}`+"\n", i)
		sc.WriteString(`{"type":"text_delta","text":"no newline "}` + "\n")
		fmt.Fprintf(&sc, `{"type":"tool_call_started","tool_call_id":"c%d","tool":"bash","input":{"command":"ls"}}`+"\n", i)
		fmt.Fprintf(&sc, `{"type":"tool_call_progress","tool_call_id":"c%d","output":"a"}`+"\n", i)
		fmt.Fprintf(&sc, `{"type":"tool_call_finished","tool_call_id":"c%d","tool":"bash","output":"a\nb"}`+"\n", i)
	}
	sc.WriteString(`{"type":"assistant_message","text":"done"}` + "\n")
	rt, err := scriptedRuntime("s", sc.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	w := st.NewWriter()
	defer func() { _ = w.Close() }()
	s, err := engine.NewSession(engine.Config{Journal: w, Runtimes: []engine.RuntimeEntry{entry(rt, "m")}})
	if err != nil {
		t.Fatal(err)
	}
	w.CreateLazily(store.SessionInfo{ID: s.ID(), Workspace: "/w", Runtime: "s", Model: "m"})
	sub := s.SubscribeStored()
	var seen []engine.Event
	for turn := range 3 {
		final, err := s.RunTurn(ctx, "go")
		if err != nil || final.Status != "complete" {
			t.Fatalf("turn %d: %v %s", turn, err, final.Status)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		batch, err := sub.NextBatch(ctx)
		if err != nil {
			break
		}
		seen = append(seen, batch...)
	}
	rows := map[int64]engine.Event{}
	if err := st.Events(ctx, s.ID(), func(ev engine.Event) error { rows[ev.Seq] = ev; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(rows) {
		t.Errorf("%d events seen, %d stored", len(seen), len(rows))
	}
	var prev int64
	for _, ev := range seen {
		if ev.Seq <= prev {
			t.Fatalf("sequence %d after %d", ev.Seq, prev)
		}
		prev = ev.Seq
		row, ok := rows[ev.Seq]
		if !ok || row.Type != ev.Type || row.Text != ev.Text || row.Output != ev.Output {
			t.Fatalf("seen %s#%d %q, stored %s %q", ev.Type, ev.Seq, ev.Text, row.Type, row.Text)
		}
		if ev.Type == engine.EventToolCallProgress {
			t.Fatal("tool progress, never stored, was seen")
		}
	}
}

// syncJournal stores each event the moment it is appended and reports the
// commit from inside Append, before the session has published the event.
// A real writer does the same whenever its goroutine runs between the
// session's Append and publish, which a loaded machine makes likely.
type syncJournal struct {
	mu sync.Mutex
	fn func([]engine.Event, error)
}

func (j *syncJournal) Append(ev engine.Event) error {
	j.mu.Lock()
	fn := j.fn
	j.mu.Unlock()
	if fn != nil && ev.Type != engine.EventToolCallProgress {
		fn([]engine.Event{ev}, nil)
	}
	return nil
}

func (j *syncJournal) Flush(context.Context) error { return nil }

func (j *syncJournal) ReportCommits(_ string, fn func([]engine.Event, error)) func() {
	j.mu.Lock()
	j.fn = fn
	j.mu.Unlock()
	return func() {}
}

// TestEventCommittedBeforePublishReachesTheSubscriber: an event whose
// commit the journal reports before the session publishes it still wakes a
// live subscriber that is already waiting. The last event before the turn
// waits (here a tool call; in the TUI a permission request that waits for
// the person's answer) is the one nothing else would ever wake it for.
func TestEventCommittedBeforePublishReachesTheSubscriber(t *testing.T) {
	t.Parallel()
	// Both ways a reader waits: for anything (NextBatch), and until a
	// frame's deadline unless something that is not a delta comes
	// (NextBatchBy, here with a deadline far beyond the test's wait).
	t.Run("NextBatch", func(t *testing.T) {
		t.Parallel()
		committedBeforePublish(t, func(ctx context.Context, sub *engine.Subscription) ([]engine.Event, error) {
			return sub.NextBatch(ctx)
		})
	})
	t.Run("NextBatchBy", func(t *testing.T) {
		t.Parallel()
		committedBeforePublish(t, func(ctx context.Context, sub *engine.Subscription) ([]engine.Event, error) {
			return sub.NextBatchBy(ctx, time.Now().Add(time.Hour))
		})
	})
}

func committedBeforePublish(t *testing.T, next func(context.Context, *engine.Subscription) ([]engine.Event, error)) {
	body := `{"type":"session_started"}
{"type":"text_delta","text":"one"}
{"sleep_ms":100}
{"type":"tool_call_started","tool_call_id":"c1","tool":"read_file","input":{"path":"a"}}
{"sleep_ms":60000}
`
	s, err := engine.NewSession(engine.Config{Journal: &syncJournal{}, Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body))}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	defer s.Interrupt(true)
	live := s.Subscribe()
	defer live.Close()
	got := make(chan engine.Event, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			// The subscriber is waiting before each event is
			// published: that is when a wake-up can be lost.
			batch, err := next(ctx, live)
			if err != nil {
				return
			}
			for _, ev := range batch {
				got <- ev
			}
		}
	}()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	var seen []engine.Event
	for {
		select {
		case ev := <-got:
			seen = append(seen, ev)
			if ev.Type == engine.EventToolCallStarted {
				return
			}
		case <-deadline:
			t.Fatalf("the tool call, stored before it was published, never reached the live subscriber; it saw %s", typesOf(seen))
		}
	}
}

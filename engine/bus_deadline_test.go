package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// journaledSession is a session journaled by a real store writer, so that
// its bus holds events until their commit, as kz's does.
func journaledSession(t *testing.T, body string) *engine.Session {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	s, err := engine.NewSession(engine.Config{Journal: w, Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body), "m")}})
	if err != nil {
		t.Fatal(err)
	}
	w.CreateLazily(store.SessionInfo{ID: s.ID(), Workspace: "/w", Runtime: "s", Model: "m"})
	t.Cleanup(func() {
		_ = s.Close(ctx)
		_ = w.Close()
		_ = st.Close()
	})
	return s
}

// deltaScript streams n deltas "dNN " a millisecond apart, then, after
// pause, the final message "end".
func deltaScript(n int, pause time.Duration) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"type":"text_delta","text":"d%02d ","delay_ms":1}`+"\n", i)
	}
	fmt.Fprintf(&b, `{"type":"assistant_message","text":"end","delay_ms":%d}`+"\n", pause.Milliseconds())
	return b.String()
}

func texts(evs []engine.Event) (deltas string, others []engine.EventType) {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type == engine.EventTextDelta {
			b.WriteString(ev.Text)
		} else {
			others = append(others, ev.Type)
		}
	}
	return b.String(), others
}

// NextBatchBy sleeps through a stream of deltas until its deadline and
// hands them over in one batch, merged, none lost; the final message,
// like any event that is not a delta, ends a wait at once, with a store
// holding it until its commit as kz's does.
func TestNextBatchBySleepsThroughDeltasButNotOtherEvents(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprint("stored=", stored), func(t *testing.T) {
			body := deltaScript(60, 300*time.Millisecond)
			var s *engine.Session
			if stored {
				s = journaledSession(t, body)
			} else {
				s, _ = newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body), "m")}})
			}
			sub := s.Subscribe()
			defer sub.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Submit("go"); err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			// Up to the first delta, read as a renderer does.
			for !strings.Contains(text.String(), "d00") {
				evs, err := sub.NextBatch(ctx)
				if err != nil {
					t.Fatal(err)
				}
				d, _ := texts(evs)
				text.WriteString(d)
			}
			deadline := time.Now().Add(25 * time.Millisecond)
			evs, err := sub.NextBatchBy(ctx, deadline)
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().Before(deadline) {
				t.Errorf("the wait ended %v early with only deltas coming", time.Until(deadline))
			}
			d, others := texts(evs)
			if len(others) > 0 || len(evs) > 1 {
				t.Errorf("a gathered burst of deltas: %d events, others %v; want one merged delta", len(evs), others)
			}
			text.WriteString(d)
			// The final message ends a long wait at once.
			for {
				start := time.Now()
				evs, err := sub.NextBatchBy(ctx, start.Add(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				if time.Since(start) > 20*time.Second {
					t.Fatalf("a wait for the final message took %v", time.Since(start))
				}
				d, others := texts(evs)
				text.WriteString(d)
				if len(others) > 0 {
					break
				}
			}
			var want strings.Builder
			for i := range 60 {
				fmt.Fprintf(&want, "d%02d ", i)
			}
			if text.String() != want.String() {
				t.Errorf("text\n got  %q\n want %q", text.String(), want.String())
			}
		})
	}
}

// A reader waiting in NextBatchBy learns at once that its session closed.
func TestNextBatchByEndsWhenTheSessionCloses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", hello), "m1")}})
	sub := s.Subscribe()
	got := make(chan error, 1)
	go func() {
		_, err := sub.NextBatchBy(context.Background(), time.Now().Add(time.Minute))
		if err == nil {
			_, err = sub.NextBatchBy(context.Background(), time.Now().Add(time.Minute))
		}
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, engine.ErrClosed) {
			t.Fatalf("after close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the session did not wake a reader waiting for its deadline")
	}
}

// SubscribeTo queues only the types asked for: a turn's deltas, messages
// and results never reach a watcher of runtime switches, and a watcher of
// final results gets each result and nothing else.
func TestSubscribeToTakesOnlyItsTypes(t *testing.T) {
	s := journaledSession(t, deltaScript(20, 0))
	finals := s.SubscribeTo(engine.EventFinalResult)
	defer finals.Close()
	switches := s.SubscribeTo(engine.EventRuntimeSwitched)
	defer switches.Close()
	for range 2 {
		if final, err := s.RunTurn(context.Background(), "go"); err != nil || final.Status != "complete" {
			t.Fatalf("turn: %v %+v", err, final)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var got []engine.EventType
	for len(got) < 2 {
		evs, err := finals.NextBatch(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		for _, ev := range evs {
			got = append(got, ev.Type)
		}
	}
	if len(got) != 2 || got[0] != engine.EventFinalResult || got[1] != engine.EventFinalResult {
		t.Errorf("final-result watcher got %v", got)
	}
	if evs, err := switches.NextBatchBy(ctx, time.Now().Add(20*time.Millisecond)); err != nil || len(evs) != 0 {
		t.Errorf("switch watcher got %d events (%v) from turns with no switch", len(evs), err)
	}
}

package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
)

// TestBusLeavesNoGoroutines runs readers blocked in Next and NextBatch
// while a turn streams, then ends the session in the middle of the turn:
// every reader must drain what was queued, see ErrClosed and return, and the
// turn's goroutine must end, leaving no goroutine behind.
func TestBusLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t)
	body := `{"type":"text_delta","text":"a","repeat":500}` + "\n" +
		`{"type":"error","text":"keep me","error_kind":"internal"}` + "\n" +
		`{"type":"text_delta","text":"late","delay_ms":60000}` + "\n"
	j := &memJournal{}
	s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body))}})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		finals, errs int
		end          error
	}
	results := make([]seen, 4)
	var wg sync.WaitGroup
	errSeen := make(chan struct{}, len(results))
	for i := range results {
		sub := s.Subscribe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sub.Close()
			r := &results[i]
			for {
				var batch []engine.Event
				var err error
				if i%2 == 0 {
					var ev engine.Event
					ev, err = sub.Next(context.Background())
					batch = []engine.Event{ev}
				} else {
					batch, err = sub.NextBatch(context.Background())
				}
				if err != nil {
					r.end = err
					return
				}
				for _, ev := range batch {
					switch ev.Type {
					case engine.EventError:
						r.errs++
						errSeen <- struct{}{}
					case engine.EventFinalResult:
						r.finals++
					}
				}
			}
		}()
	}
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	// Wait until every reader is inside the turn, then end the session
	// while the runtime sleeps.
	for range results {
		select {
		case <-errSeen:
		case <-time.After(30 * time.Second):
			t.Fatal("readers never saw the error event")
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("readers still blocked after the session closed")
	}
	for i, r := range results {
		if !errors.Is(r.end, engine.ErrClosed) || r.errs != 1 || r.finals != 1 {
			t.Errorf("reader %d: end %v, errors %d, finals %d", i, r.end, r.errs, r.finals)
		}
	}
	// A subscription taken after the end is closed from the start.
	late := s.Subscribe()
	if _, err := late.Next(context.Background()); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("late subscriber: %v", err)
	}
}

// TestSubscriptionEndsOnItsOwnCloseAndContext checks the two other ways a
// blocked reader returns: its context ends, or its subscription is closed.
func TestSubscriptionEndsOnItsOwnCloseAndContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", hello), "m1")}})

	sub := s.Subscribe()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := sub.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("next with an ended context: %v", err)
	}

	got := make(chan error, 1)
	go func() {
		_, err := sub.NextBatch(context.Background())
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	sub.Close()
	select {
	case err := <-got:
		if !errors.Is(err, engine.ErrClosed) {
			t.Fatalf("next batch after close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing a subscription did not wake its reader")
	}
	// A closed subscription no longer receives: a turn still completes
	// and the other subscribers still see it.
	other := s.Subscribe()
	defer other.Close()
	final, err := s.RunTurn(context.Background(), "hi")
	if err != nil || final.Status != "complete" {
		t.Fatalf("%v %+v", err, final)
	}
	if ev, err := other.Next(context.Background()); err != nil || ev.Type != engine.EventUserMessage {
		t.Fatalf("other subscriber: %v %+v", err, ev)
	}
}

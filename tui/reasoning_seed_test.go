package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncReasoning records the settings /reasoning gives, safe to read while
// the program runs.
type syncReasoning struct {
	mu  sync.Mutex
	got []string
}

func (r *syncReasoning) SetReasoning(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
	return nil
}

func (r *syncReasoning) settings() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, ",")
}

// The level the session started with (kz --reasoning) is where the
// /reasoning cycle goes on from, in a real program fed keys: from high the
// next levels are off then low; from medium, high; with none given the
// cycle starts at its beginning.
func TestReasoningCycleStartsFromTheGivenLevel(t *testing.T) {
	for _, c := range []struct{ start, want string }{
		{"high", "off,low"},
		{"medium", "high,off"},
		{"off", "low,medium"},
		{"", "off,low"},
	} {
		t.Run("start "+c.start, func(t *testing.T) {
			in, keys := io.Pipe()
			defer func() { _ = keys.Close() }()
			rs := &syncReasoning{}
			out := &syncBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, Options{Session: newFake(), Events: blockingSource{}, Input: in, Output: out, Width: 100, Height: 30,
					NoColor: true, Reasoning: rs, ReasoningLevel: c.start})
			}()
			for i, want := range strings.Split(c.want, ",") {
				if _, err := keys.Write([]byte("/reasoning\r")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "/reasoning "+want, func() bool { return len(strings.Split(rs.settings(), ",")) == i+1 && rs.settings() != "" })
			}
			if got := rs.settings(); got != c.want {
				t.Errorf("from %q /reasoning twice set %s, want %s", c.start, got, c.want)
			}
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Run = %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return")
			}
		})
	}
}

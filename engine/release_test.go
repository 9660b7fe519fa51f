package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// releases records every Config.Release call with what the journal held
// at that moment.
type releases struct {
	mu    sync.Mutex
	j     *memJournal
	names []string
	seen  [][]engine.EventType
}

func (r *releases) release(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
	r.seen = append(r.seen, r.j.types())
}

// A session with Release calls it once per turn, after the runtime's
// answer and before the turn's result is journaled, with the runtime that
// served the turn last: after a failover, the one that took over.
func TestReleaseComesBetweenTheRuntimeAndTheResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		entries  func(t *testing.T) []engine.RuntimeEntry
		failover []engine.ChainLink
		want     string
	}{
		{"one runtime", func(t *testing.T) []engine.RuntimeEntry {
			return []engine.RuntimeEntry{entry(script(t, "scripted", hello), "m1")}
		}, nil, "scripted"},
		{"after a failover", func(t *testing.T) []engine.RuntimeEntry {
			return []engine.RuntimeEntry{entry(panicRuntime{}), entry(&modelRuntime{name: "b"}, "b1")}
		}, []engine.ChainLink{{Runtime: "b"}}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &releases{}
			s, j := newSession(t, engine.Config{Runtimes: tc.entries(t), Failover: tc.failover, Release: r.release})
			// Set before the first turn, which is the first to read it.
			r.j = j
			for turn := 1; turn <= 2; turn++ {
				final, err := s.RunTurn(context.Background(), "go")
				if err != nil || final.Status != string(engine.StatusComplete) {
					t.Fatalf("turn %d: %v %+v", turn, err, final)
				}
				r.mu.Lock()
				names, seen := slices.Clone(r.names), slices.Clone(r.seen)
				r.mu.Unlock()
				if len(names) != turn || names[turn-1] != tc.want {
					t.Fatalf("after turn %d Release was called with %v, want %d calls, the last with %q", turn, names, turn, tc.want)
				}
				finals := 0
				for _, typ := range seen[turn-1] {
					if typ == engine.EventFinalResult {
						finals++
					}
				}
				if finals != turn-1 {
					t.Errorf("turn %d was released with %d final results journaled, want %d (the earlier turns'): %v", turn, finals, turn-1, seen[turn-1])
				}
				if !slices.Contains(j.types(), engine.EventFinalResult) {
					t.Errorf("no final result after turn %d", turn)
				}
			}
		})
	}
}

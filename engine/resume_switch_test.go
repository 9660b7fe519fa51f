package engine_test

import (
	"context"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// switches returns the runtime_switched events of a journal with the index
// of each among all events, and the index of the first user message.
func switches(j *memJournal) (sw []engine.Event, at []int, firstUser int) {
	firstUser = -1
	for i, ev := range j.all() {
		switch ev.Type {
		case engine.EventRuntimeSwitched:
			sw, at = append(sw, ev), append(at, i)
		case engine.EventUserMessage:
			if firstUser < 0 {
				firstUser = i
			}
		}
	}
	return sw, at, firstUser
}

// A session resumed on another runtime than its last turn's records the
// change once, before the first turn's message, so that the history says
// which runtime continued the conversation; resumed on the same runtime,
// or new, it records nothing.
func TestResumeOnAnotherRuntimeRecordsTheSwitch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		last     string
		runtime  string
		wantFrom string
	}{
		{name: "another runtime", last: "a", runtime: "b", wantFrom: "a"},
		{name: "same runtime", last: "b", runtime: "b"},
		{name: "new session", runtime: "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := engine.Config{Runtime: c.runtime, Runtimes: []engine.RuntimeEntry{
				entry(script(t, "a", hello), "m1"), entry(script(t, "b", hello), "m2")}}
			if c.last != "" {
				cfg.Prior = &engine.Prior{LastSeq: 4, LastTurn: 1, LastRuntime: c.last}
			}
			s, j := newSession(t, cfg)
			for range 2 {
				if _, err := s.RunTurn(context.Background(), "go"); err != nil {
					t.Fatal(err)
				}
			}
			sw, at, user := switches(j)
			if c.wantFrom == "" {
				if len(sw) != 0 {
					t.Fatalf("recorded %+v, want no switch", sw)
				}
				return
			}
			if len(sw) != 1 {
				t.Fatalf("recorded %d switches (%+v), want one", len(sw), sw)
			}
			ev := sw[0]
			if ev.From != c.wantFrom || ev.Runtime != c.runtime || ev.Model != "m2" || ev.To != "b/m2" || ev.Reason != "resume" {
				t.Fatalf("switch = from %q to %q runtime %q model %q reason %q", ev.From, ev.To, ev.Runtime, ev.Model, ev.Reason)
			}
			if at[0] > user {
				t.Fatalf("switch at %d after the first user message at %d", at[0], user)
			}
		})
	}
}

// A person who switches before the first turn of a resumed session gets
// one marker, from the stored session's runtime to the chosen one, not a
// marker for a runtime the history never ran.
func TestSwitchBeforeTheFirstResumedTurnStartsFromTheStoredRuntime(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtime: "b", Runtimes: []engine.RuntimeEntry{
		entry(script(t, "a", hello), "m1"), entry(script(t, "b", hello), "m2"), entry(script(t, "c", hello), "m3")},
		Prior: &engine.Prior{LastSeq: 4, LastTurn: 1, LastRuntime: "a"}})
	if err := s.SwitchRuntime("c", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	sw, _, _ := switches(j)
	if len(sw) != 1 || sw[0].From != "a" || sw[0].Runtime != "c" || sw[0].Reason != "user" {
		t.Fatalf("switches = %+v, want one from a to c", sw)
	}
}

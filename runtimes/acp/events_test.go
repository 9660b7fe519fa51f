package acp

import (
	"context"
	"flag"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/eventlog"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

var updateEvents = flag.Bool("update-events", false, "rewrite the recorded event sequences in testdata/events")

// TestRecordedEvents replays the recorded Gemini CLI (ACP) sessions through kz and
// keeps the events kz made of them in testdata/events, where the TUI's
// card tests read them (internal/eventlog).
func TestRecordedEvents(t *testing.T) {
	for _, tc := range []struct {
		name, sample string
		answer       func(engine.Event) engine.Answer
	}{
		{"gemini.approval-allow", "gemini-acp.approval-allow.jsonl", clitest.AllowOnce},
		{"gemini.approval-deny", "gemini-acp.approval-deny.jsonl", func(engine.Event) engine.Answer {
			return engine.Answer{Decision: engine.DecisionDeny, Feedback: "not now"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, clitest.Sample(t, tc.sample))
			h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: tc.answer})
			h.Run(t, context.Background(), "do the task")
			diff, err := eventlog.Check(eventlog.Path("../..", tc.name), h.Journal.Events(), f.WS, *updateEvents)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Error(diff)
			}
		})
	}
}

package claudecode

import (
	"context"
	"flag"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/eventlog"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

var updateEvents = flag.Bool("update-events", false, "rewrite the recorded event sequences in testdata/events")

// TestRecordedEvents replays the recorded Claude Code sessions through kz
// and keeps the events kz made of them in testdata/events, where the
// TUI's card tests read them (internal/eventlog).
func TestRecordedEvents(t *testing.T) {
	for _, tc := range []struct {
		name, sample, prompt string
		env                  []string
		answer               func(engine.Event) engine.Answer
	}{
		{"claude-code.approval-allow", "claude-code.approval-allow.jsonl", "Create out.txt. KZSCRIPT:bash", []string{"KZ_FAKE_EXPECT_INIT=1"}, clitest.AllowOnce},
		{"claude-code.approval-deny", "claude-code.approval-deny.jsonl", "Create out.txt. KZSCRIPT:bash", nil, func(engine.Event) engine.Answer {
			return engine.Answer{Decision: engine.DecisionDeny, Feedback: "The kz user denied this tool call."}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, clitest.Sample(t, tc.sample), tc.env...)
			h := newHarness(t, single(f), clitest.Options{Answer: tc.answer})
			h.Run(t, context.Background(), tc.prompt)
			_ = f.rt.Close()
			diff, err := eventlog.Check(eventlog.Path("../..", tc.name), h.Journal.Events(), f.rt.cfg.Workspace, *updateEvents)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Error(diff)
			}
		})
	}
}

package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/eventlog"
	"github.com/kaizen-code/kz/store"
)

// liveSession is a recorded session of four turns: text, reasoning, tool
// calls allowed and denied, a proposal with its diff accepted and its
// verification output, one rejected, a runtime switch and an interrupt in
// the middle of a command.
const liveSession = "session.live"

// storeEvents writes events through the store's journal, as a session
// does, and returns the store and the session id.
func storeEvents(t *testing.T, evs []engine.Event) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	const id = "s1"
	if err := st.CreateSession(ctx, id, eventlog.Workspace, "native", "m-1", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	for i, ev := range evs {
		ev.SessionID, ev.Seq = id, int64(i+1)
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return st, id
}

// The screen of a reopened session equals the live screen at the same
// width: the stored events go through the fold the live ones went
// through. The live model gets the events one by one, as a subscriber
// does, answering nothing (the recorded answers come as events); the
// reopened one reads them back from a real store.
func TestGoldenReplayEqualsLive(t *testing.T) {
	evs, err := eventlog.Load(eventlog.Path("..", liveSession))
	if err != nil {
		t.Fatal(err)
	}
	var total engine.Usage
	var cost float64
	for _, ev := range evs {
		if ev.Type == engine.EventFinalResult {
			total.Add(*ev.Usage)
			cost += ev.CostUSD
		}
	}
	// The session reports where it stands: live, it starts empty and the
	// status bar adds the turns up; reopened, its totals are the stored
	// ones.
	state := func() *fakeSession {
		f := newFake()
		f.state.Runtime, f.state.Model = "claude", "sonnet"
		return f
	}
	const width, height = 100, 120

	live := testModel(t, state(), width, height)
	live.tr.workspace = eventlog.Workspace
	sawDialog := false
	for _, ev := range evs {
		live.feed(ev)
		sawDialog = sawDialog || live.dialog.active()
	}
	if !sawDialog {
		t.Fatal("the live session never asked: the recording lost its requests")
	}

	st, id := storeEvents(t, evs)
	f := state()
	f.state.ID, f.state.TotalUsage, f.state.TotalCostUSD = id, total, cost
	resumed := testModel(t, f, width, height)
	resumed.tr.workspace = eventlog.Workspace
	if err := resumed.replay(context.Background(), st); err != nil {
		t.Fatal(err)
	}

	got, want := resumed.screen(), live.screen()
	if got != want {
		t.Errorf("the reopened session differs from the live one\n--- reopened\n%s\n--- live\n%s", got, want)
	}
	for _, s := range []string{
		"✓ Read calc.py", "✗ Bash python -m pytest -q", "✗ Bash rm -rf .pytest_cache build", "│ ✗ denied — “leave the cache alone”",
		"✓ Proposal add adds", "modify calc.py", "│ ✓ patch applied", "✓ Bash python -m pytest -q", "│ 2 passed",
		"✗ Proposal rename add", "│ ✗ patch rejected (declined): keep the name",
		"runtime native/m-1 → claude/sonnet (user)", "⊘ Bash make slow-test", "│ test 2/40 ok", "⊘ turn ended: interrupted",
	} {
		if !strings.Contains(want, s) {
			t.Errorf("the live screen lacks %q", s)
		}
	}
	golden(t, "replay", width, want)
}

// The recorded sessions of every runtime also look the same reopened.
func TestReplayEqualsLiveForEveryRuntime(t *testing.T) {
	for _, name := range []string{"claude-code.approval-allow", "claude-code.approval-deny", "codex.approval-allow",
		"codex.approval-deny", "gemini.approval-allow", "gemini.approval-deny"} {
		t.Run(name, func(t *testing.T) {
			evs, err := eventlog.Load(eventlog.Path("..", name))
			if err != nil {
				t.Fatal(err)
			}
			live := testModel(t, newFake(), 100, 50)
			live.tr.workspace = eventlog.Workspace
			for _, ev := range evs {
				live.feed(ev)
			}
			st, id := storeEvents(t, evs)
			f := newFake()
			f.state.ID = id
			resumed := testModel(t, f, 100, 50)
			resumed.tr.workspace = eventlog.Workspace
			if err := resumed.replay(context.Background(), st); err != nil {
				t.Fatal(err)
			}
			// The status bars differ by design (the fake's stored totals
			// are zero): the transcripts must not.
			rc := live.renderCtx()
			got := strings.Join(resumed.tr.view(rc, 200), "\n")
			want := strings.Join(live.tr.view(rc, 200), "\n")
			if got != want {
				t.Errorf("reopened\n%s\nlive\n%s", got, want)
			}
		})
	}
}

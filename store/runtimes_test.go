package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// turnOn appends one turn that starts on start and ends on end (a failover
// when they differ).
func turnOn(t *testing.T, w *Writer, session string, seq *int64, turn int64, start, end string) {
	t.Helper()
	for _, e := range []engine.Event{
		{Type: engine.EventUserMessage, Text: "do it", Runtime: start},
		{Type: engine.EventFinalResult, Status: string(engine.StatusComplete), Runtime: end},
	} {
		*seq++
		e.SessionID, e.Seq, e.TurnID, e.Time = session, *seq, turn, time.Now()
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestListSessionsReturnsEveryRuntimeInOrderOfFirstUse(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "claude-code", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, "fresh", "/w", "codex", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	var seq int64
	turnOn(t, w, "s", &seq, 1, "claude-code", "claude-code")
	turnOn(t, w, "s", &seq, 2, "native", "gemini") // failover native → gemini
	turnOn(t, w, "s", &seq, 3, "claude-code", "claude-code")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"claude-code", "native", "gemini"}
	list, err := st.ListSessions(ctx, "/w", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, si := range list {
		got[si.ID] = si.Runtimes
	}
	if !slices.Equal(got["s"], want) {
		t.Fatalf("runtimes %q, want %q", got["s"], want)
	}
	if len(got["fresh"]) != 0 {
		t.Fatalf("a session without turns used no runtime, got %q", got["fresh"])
	}
	if si, err := st.Session(ctx, "s"); err != nil || !slices.Equal(si.Runtimes, want) || si.Runtime != "claude-code" {
		t.Fatalf("Session: %+v %v", si, err)
	}

	// A database from before the column existed is backfilled from its
	// turns when the migration runs.
	if _, err := st.db.ExecContext(ctx, `ALTER TABLE sessions DROP COLUMN runtimes`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = 2`); err != nil {
		t.Fatal(err)
	}
	if err := st.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	si, err := st.Session(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	// The turns table keeps the runtime each turn ended on.
	if backfilled := []string{"claude-code", "gemini"}; !slices.Equal(si.Runtimes, backfilled) {
		t.Fatalf("backfilled %q, want %q", si.Runtimes, backfilled)
	}
	if si, _ := st.Session(ctx, "fresh"); !slices.Equal(si.Runtimes, []string{"codex"}) {
		t.Fatalf("backfill without turns falls back to the latest runtime, got %q", si.Runtimes)
	}
}

package store

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestWriterReportsWhatItStored: a session registered with ReportCommits
// is told, before Flush returns, of every row the writer stored, with the
// stored sequence numbers and text (merged deltas included), and of no
// other session's rows.
func TestWriterReportsWhatItStored(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"s", "other"} {
		if err := st.CreateSession(ctx, id, "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
			t.Fatal(err)
		}
	}
	w := st.NewWriter()
	defer func() { _ = w.Close() }()
	var mu sync.Mutex
	var got []engine.Event
	stop := w.ReportCommits("s", func(rows []engine.Event, err error) {
		if err != nil {
			t.Errorf("report: %v", err)
		}
		mu.Lock()
		got = append(got, rows...)
		mu.Unlock()
	})
	defer stop()
	seq := int64(0)
	for i := range 300 {
		seq++
		_ = w.Append(ev("s", seq, engine.EventTextDelta, "line\n"))
		_ = w.Append(ev("other", seq, engine.EventTextDelta, "x\n"))
		if i%50 == 0 {
			seq++
			_ = w.Append(ev("s", seq, engine.EventToolCallStarted, ""))
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var rows []engine.Event
	if err := st.Events(ctx, "s", func(e engine.Event) error { rows = append(rows, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows reported, %d stored", len(got), len(rows))
	}
	for i := range rows {
		if got[i].SessionID != "s" || got[i].Seq != rows[i].Seq || got[i].Type != rows[i].Type || got[i].Text != rows[i].Text {
			t.Fatalf("row %d: reported %s#%d %q, stored %s#%d %q", i, got[i].Type, got[i].Seq, got[i].Text, rows[i].Type, rows[i].Seq, rows[i].Text)
		}
	}
}

// TestWriterStopsAtTheFirstFailure: once a write fails, every session is
// told, Flush returns the error, and nothing appended later is stored
// (a later batch would leave a hole in the history).
func TestWriterStopsAtTheFirstFailure(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	failed := make(chan error, 2)
	w.ReportCommits("s", func(_ []engine.Event, err error) {
		if err != nil {
			failed <- err
		}
	})
	_ = w.Append(ev("s", 1, engine.EventUserMessage, "go"))
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Break the database under the writer: its next write fails.
	if _, err := st.db.Exec(`CREATE TRIGGER no_more BEFORE INSERT ON events BEGIN SELECT RAISE(FAIL, 'disk full (simulated)'); END`); err != nil {
		t.Fatal(err)
	}
	_ = w.Append(ev("s", 2, engine.EventToolCallStarted, ""))
	err := w.Flush(ctx)
	if err == nil {
		t.Fatal("flush after a failed write succeeded")
	}
	select {
	case rerr := <-failed:
		if !errors.Is(rerr, err) && rerr.Error() != err.Error() {
			t.Fatalf("reported %v, flush %v", rerr, err)
		}
	default:
		t.Fatal("the session was not told")
	}
	if _, err := st.db.Exec(`DROP TRIGGER no_more`); err != nil {
		t.Fatal(err)
	}
	if aerr := w.Append(ev("s", 3, engine.EventError, "later")); aerr == nil {
		t.Fatal("append after a failure accepted")
	}
	if cerr := w.Close(); cerr == nil {
		t.Fatal("close after a failure reported nothing")
	}
	var n int
	if err := st.db.QueryRow(`SELECT COUNT(*) FROM events WHERE session_id = 's'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d events stored (%v), want only the first", n, err)
	}
	// A session that registers after the failure learns of it at once.
	late := make(chan error, 1)
	w.ReportCommits("late", func(_ []engine.Event, err error) { late <- err })
	if err := <-late; err == nil {
		t.Fatal("late session not told")
	}
}

package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// TestCompactionSurvivesResume stores a turn, then a /compact (events of
// turn 0: the summary's usage and the boundary carrying the summary), and
// checks that a resumed session is primed from the summary and counts the
// summary's cost.
func TestCompactionSurvivesResume(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "native", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	var seq int64
	for _, e := range []engine.Event{
		{Type: engine.EventUserMessage, TurnID: 1, Text: "an old question"},
		{Type: engine.EventAssistantMessage, TurnID: 1, Text: "an old answer"},
		{Type: engine.EventFinalResult, TurnID: 1, Status: "complete", CostUSD: 0.25, Usage: &engine.Usage{InputTokens: 10, OutputTokens: 5}},
		{Type: engine.EventUsageUpdated, Usage: &engine.Usage{InputTokens: 300, OutputTokens: 20}, CostUSD: 0.5},
		{Type: engine.EventCompactBoundary, TokensBefore: 900, TokensAfter: 40, Text: "compacted 2 earlier messages into a summary", Output: "SUMMARY"},
	} {
		seq++
		e.SessionID, e.Seq, e.Time, e.Runtime = "s", seq, time.Now(), "native"
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := st.Prior(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	h := engine.CompactedHistory(p.Transcript)
	if len(h) != 1 || h[0].Kind != engine.EntryUser || h[0].Text != "SUMMARY" {
		t.Fatalf("resumed history %+v", h)
	}
	if math.Abs(p.CostUSD-0.75) > 1e-9 || p.Usage.InputTokens != 310 || p.LastTurn != 1 {
		t.Fatalf("prior cost %v usage %+v last turn %d", p.CostUSD, p.Usage, p.LastTurn)
	}
	if si, _ := st.Session(ctx, "s"); math.Abs(si.CostUSD-0.75) > 1e-9 {
		t.Fatalf("session cost %v", si.CostUSD)
	}
}

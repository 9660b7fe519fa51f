package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// compactRT is a runtime that answers every turn with "answer N", records
// the history each turn and compaction was primed with, and compacts by
// summarising into a fixed text. When block is set, Compact waits for it
// (or for its context) after announcing itself on started.
type compactRT struct {
	mu        sync.Mutex
	histories [][]engine.TranscriptEntry
	compacted [][]engine.TranscriptEntry
	turns     int
	started   chan struct{}
	block     chan struct{}
	// runBlock, when set, holds every turn until it is closed.
	runBlock chan struct{}
}

func (r *compactRT) Name() string { return "fakenative" }

func (r *compactRT) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell)}
}

func (r *compactRT) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	r.mu.Lock()
	r.turns++
	n := r.turns
	r.histories = append(r.histories, append([]engine.TranscriptEntry(nil), t.History...))
	r.mu.Unlock()
	if r.runBlock != nil {
		<-r.runBlock
	}
	t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: "answer " + string(rune('0'+n))})
	return engine.Result{Status: engine.StatusComplete}, nil
}

func (r *compactRT) Compact(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	r.mu.Lock()
	r.compacted = append(r.compacted, append([]engine.TranscriptEntry(nil), t.History...))
	r.mu.Unlock()
	if r.block != nil {
		r.started <- struct{}{}
		select {
		case <-r.block:
		case <-ctx.Done():
			return engine.Result{}, context.Cause(ctx)
		}
	}
	t.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &engine.Usage{InputTokens: 100, OutputTokens: 20}, CostUSD: 0.5})
	t.Emit(engine.Event{Type: engine.EventCompactBoundary, TokensBefore: 900, TokensAfter: 40,
		Text: "compacted the conversation into a summary", Output: "SUMMARY: the person asked twice"})
	return engine.Result{Status: engine.StatusComplete}, nil
}

func TestCompactSummarisesAndLaterTurnsStartFromTheSummary(t *testing.T) {
	t.Parallel()
	rt := &compactRT{}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(rt, "m")}})
	ctx := context.Background()
	if _, err := s.Compact(ctx); err == nil || !strings.Contains(err.Error(), "no conversation") {
		t.Fatalf("compact of an empty session: %v", err)
	}
	for _, p := range []string{"first question", "second question"} {
		if _, err := s.RunTurn(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	costBefore := s.State().TotalCostUSD
	boundary, err := s.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if boundary.Type != engine.EventCompactBoundary || boundary.TokensBefore != 900 || boundary.TokensAfter != 40 || boundary.Seq == 0 || boundary.TurnID != 0 {
		t.Fatalf("boundary %+v", boundary)
	}
	// The compacter saw the whole conversation.
	if h := rt.compacted[0]; len(h) == 0 || h[0].Text != "first question" {
		t.Fatalf("compacter history %+v", h)
	}
	// The boundary went through the journal and the transcript with its
	// summary; the compaction's cost counts for the session.
	var journaled bool
	for _, ev := range j.all() {
		if ev.Type == engine.EventCompactBoundary && ev.Output == "SUMMARY: the person asked twice" && ev.Seq == boundary.Seq {
			journaled = true
		}
	}
	tr := s.Transcript()
	last := tr[len(tr)-1]
	if !journaled || last.Kind != engine.EntryMarker || last.Status != string(engine.EventCompactBoundary) || last.Output == "" {
		t.Fatalf("journaled %v, transcript end %+v", journaled, last)
	}
	if got := s.State().TotalCostUSD; got != costBefore+0.5 {
		t.Fatalf("total cost %v, want %v", got, costBefore+0.5)
	}

	// The next turn is primed with the summary instead of the older turns.
	if _, err := s.RunTurn(ctx, "third question"); err != nil {
		t.Fatal(err)
	}
	h := rt.histories[2]
	if len(h) != 1 || h[0].Kind != engine.EntryUser || h[0].Text != "SUMMARY: the person asked twice" {
		t.Fatalf("history after compaction %+v", h)
	}
	// A second compaction starts from the first summary.
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if h := rt.compacted[1]; h[0].Text != "SUMMARY: the person asked twice" || h[1].Text != "third question" {
		t.Fatalf("second compaction history %+v", h)
	}
}

func TestCompactIsBusyLikeATurnAndCanBeInterrupted(t *testing.T) {
	t.Parallel()
	rt := &compactRT{started: make(chan struct{}), block: make(chan struct{})}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(rt, "m")}})
	ctx := context.Background()
	if _, err := s.RunTurn(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Compact(ctx); done <- err }()
	<-rt.started
	if !s.State().Running {
		t.Fatal("the session is not busy while it compacts")
	}
	if err := s.Submit("meanwhile"); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("submit during compaction: %v", err)
	}
	if _, err := s.Compact(ctx); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("compact during compaction: %v", err)
	}
	if err := s.SwitchRuntime("fakenative", "other"); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("switch during compaction: %v", err)
	}
	s.Interrupt(true)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted compaction: %v", err)
	}
	// Nothing was compacted and the session takes turns again.
	if _, err := s.RunTurn(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	if h := rt.histories[1]; len(h) < 2 || h[0].Text != "hello" {
		t.Fatalf("history after an interrupted compaction %+v", h)
	}
	close(rt.block)

	// A compaction while a turn runs is refused.
	rt.runBlock = make(chan struct{})
	if err := s.Submit("slow"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(ctx); !errors.Is(err, engine.ErrBusy) || !strings.Contains(err.Error(), "interrupt it first") {
		t.Fatalf("compact during a turn: %v", err)
	}
	close(rt.runBlock)
}

func TestCompactRefusedByARuntimeThatCannot(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "claude-code", hello), "m1")}})
	if _, err := s.RunTurn(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Compact(context.Background())
	if !errors.Is(err, engine.ErrCannotCompact) || !strings.Contains(err.Error(), "runtime claude-code cannot compact") ||
		!strings.Contains(err.Error(), "compacts by itself") {
		t.Fatalf("compact on a CLI runtime: %v", err)
	}
}

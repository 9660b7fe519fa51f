package native

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

var _ engine.Compacter = (*Runtime)(nil)

// TestSessionCompactSummarisesAndTheNextRequestCarriesTheSummary drives
// /compact through a real session: the native runtime asks the fake
// provider for a summary of the two earlier turns, the boundary lands in
// the journal and the transcript, and the next turn's request carries the
// summary instead of the older turns.
func TestSessionCompactSummarisesAndTheNextRequestCarriesTheSummary(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Text: "the answer about parsers"},
		llmtest.Reply{Text: "the answer about lexers"},
		llmtest.Reply{Text: "SUMMARY: asked about parsers and lexers", Usage: engine.Usage{InputTokens: 300, OutputTokens: 12}},
		llmtest.Reply{Text: "the third answer"})
	rt := nativeFor(t, fake, "claude-sonnet-4-5", nil)
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"claude-sonnet-4-5"}}},
		mode: engine.ModeAnalysisOnly})
	h.run("first: OLDPARSER " + strings.Repeat("p", 800))
	h.run("second: OLDLEXER")

	boundary, err := h.s.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	sum := reqs[2]
	if !sum.Contains("compact the conversation") || !sum.Contains("OLDPARSER") || !sum.Contains("the answer about lexers") {
		t.Fatalf("summary request: %s", sum.Raw)
	}
	if boundary.TokensBefore <= boundary.TokensAfter || boundary.TokensAfter <= 0 || !strings.Contains(boundary.Output, "SUMMARY: asked about parsers and lexers") {
		t.Fatalf("boundary %+v", boundary)
	}
	if n := len(h.journal.OfType(engine.EventCompactBoundary)); n != 1 {
		t.Fatalf("%d compact_boundary events journaled", n)
	}
	tr := h.s.Transcript()
	if last := tr[len(tr)-1]; last.Kind != engine.EntryMarker || last.Status != string(engine.EventCompactBoundary) {
		t.Fatalf("transcript ends with %+v", last)
	}
	if st := h.s.State(); st.TotalUsage.InputTokens < 300 {
		t.Fatalf("the summary's usage is not counted: %+v", st.TotalUsage)
	}

	final := h.run("third: go on")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	next := fake.Requests()[3]
	if !next.Contains("SUMMARY: asked about parsers and lexers") || !next.Contains("third: go on") {
		t.Fatalf("the next request lacks the summary or the prompt: %s", next.Raw)
	}
	if next.Contains("OLDPARSER") || next.Contains("OLDLEXER") || next.Contains("the answer about lexers") {
		t.Fatalf("the next request still carries the older turns: %s", next.Raw)
	}
}

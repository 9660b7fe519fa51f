package agentcli

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func TestRenderHistoryBounded(t *testing.T) {
	var h []engine.TranscriptEntry
	for i := 0; i < 200; i++ {
		h = append(h, engine.TranscriptEntry{Kind: engine.EntryUser, Text: strings.Repeat("x", 1000)})
	}
	out := RenderHistory(h, 10_000)
	if len(out) > 10_100 || !strings.HasPrefix(out, "[") || !strings.Contains(out, "earlier entries omitted") {
		t.Errorf("rendered %d bytes: %.80q", len(out), out)
	}
	if PrimePrompt(nil, "p", 100) != "p" {
		t.Error("an empty history must leave the prompt alone")
	}
}

package tui

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestModeChangeWhileStreamingGoesBelowTheAnswer: shift+tab while an
// answer streams puts the divider after the answer, which goes on as one
// message instead of being split in two.
func TestModeChangeWhileStreamingGoesBelowTheAnswer(t *testing.T) {
	m := testModel(t, newFake(), 100, 30)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "write"},
		engine.Event{Type: engine.EventTextDelta, TurnID: 1, Text: "Still writing the first part"},
		engine.Event{Type: engine.EventModeChanged, TurnID: 1, From: string(engine.ModeFullAutonomous), Mode: engine.ModePatchProposal},
		engine.Event{Type: engine.EventTextDelta, TurnID: 1, Text: " and the rest of it."})
	s := m.screen()
	if !strings.Contains(s, "Still writing the first part and the rest of it.") {
		t.Fatalf("the answer was split:\n%s", s)
	}
	if strings.Contains(s, "mode full-autonomous → patch-proposal") {
		t.Fatalf("the divider is drawn inside the streaming answer:\n%s", s)
	}
	m.feed(engine.Event{Type: engine.EventAssistantMessage, TurnID: 1, Text: "Still writing the first part and the rest of it."})
	s = m.screen()
	a, d := strings.Index(s, "and the rest of it."), strings.Index(s, "mode full-autonomous → patch-proposal")
	if a < 0 || d < a {
		t.Fatalf("the divider is not below the finished answer:\n%s", s)
	}
}

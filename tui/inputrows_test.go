package tui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// inputRows are the screen's rows of the input (those starting with its
// prompt).
func inputRows(m *Model) []string {
	var out []string
	for _, l := range strings.Split(m.screen(), "\n") {
		if strings.HasPrefix(l, "› ") || l == "›" {
			out = append(out, strings.TrimRight(l, " "))
		}
	}
	return out
}

func TestLongLineGrowsTheInputByWrappedRows(t *testing.T) {
	m := testModel(t, newFake(), 80, 24)
	long := "start " + strings.Repeat("word ", 40) + "end"
	m.typeText(long)
	rows := inputRows(m)
	if len(rows) < 3 || !strings.Contains(rows[0], "start") || !strings.Contains(rows[len(rows)-1], "end") {
		t.Fatalf("a long line shows rows %q, want all of its wrapped rows", rows)
	}
	// ↑ within the wrapped line moves up a row, it does not swap in
	// the history.
	m.history = []string{"older prompt"}
	m.histPos = 1
	m.press("up")
	if m.input.Value() != long {
		t.Fatalf("↑ on a wrapped row replaced the input with %q", m.input.Value())
	}
	for range 10 {
		m.press("up")
	}
	if m.input.Value() != "older prompt" {
		t.Fatalf("↑ on the first row did not go back in history: %q", m.input.Value())
	}
}

func TestNewlineKeepsEveryLineVisible(t *testing.T) {
	m := testModel(t, newFake(), 80, 24)
	m.typeText("first")
	m.press("ctrl+j")
	m.typeText("second")
	if rows := inputRows(m); len(rows) != 2 || rows[0] != "› first" || rows[1] != "› second" {
		t.Fatalf("after ctrl+j the input shows %q, want both lines", rows)
	}
	// A pasted block of three lines.
	m.press("ctrl+c")
	m.update(tea.PasteMsg{Content: "one\ntwo\nthree"})
	if rows := inputRows(m); len(rows) != 3 || rows[0] != "› one" || rows[2] != "› three" {
		t.Fatalf("after a paste the input shows %q", rows)
	}
	// A multi-line draft restored with ↓ after browsing the history.
	m.history = []string{"old"}
	m.histPos = 1
	m.press("up")
	for range 5 {
		m.press("up")
	}
	m.press("down")
	if rows := inputRows(m); len(rows) != 3 || rows[0] != "› one" || rows[2] != "› three" {
		t.Fatalf("the restored draft shows %q", rows)
	}
}

func TestFailedSendKeepsTheText(t *testing.T) {
	f := newFake()
	f.submitErr = errors.New("no runtime is available")
	m := testModel(t, f, 80, 24)
	m.typeText("explain main.go")
	m.press("enter")
	if !strings.Contains(m.screen(), "could not send") {
		t.Fatalf("no error shown:\n%s", m.screen())
	}
	if got := m.input.Value(); got != "explain main.go" {
		t.Fatalf("input after a failed send = %q, want the text kept", got)
	}
}

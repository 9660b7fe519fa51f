package tui

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Only y trusts; every other way out of the question leaves the folder
// untrusted, and keys the question does not use are ignored.
func TestTrustQuestionKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		keys []string
		want trustAnswer
	}{
		{[]string{"y"}, trustYes},
		{[]string{"Y"}, trustYes},
		{[]string{"n"}, trustNo},
		{[]string{"esc"}, trustNo},
		{[]string{"ctrl+c"}, trustNo},
		{[]string{"x", "enter", "space", "n"}, trustNo},
		{[]string{"enter", "y"}, trustYes},
	}
	for _, c := range cases {
		m := &trustModel{q: TrustQuestion{File: "/p/.kz/config.toml", Enables: []string{"allow rules"}}}
		var quit bool
		for _, k := range c.keys {
			_, cmd := m.Update(keyMsg(k))
			if cmd != nil {
				if _, ok := cmd().(tea.QuitMsg); ok {
					quit = true
					break
				}
			}
		}
		if m.answer != c.want || !quit {
			t.Errorf("keys %v: answer %q (quit %v), want %q", c.keys, m.answer, quit, c.want)
		}
	}
}

// The question names the file and what trusting it enables, fits the
// window, and shows control characters from the project as text.
func TestTrustQuestionText(t *testing.T) {
	t.Parallel()
	m := &trustModel{q: TrustQuestion{File: "/p/.kz/config.toml", Enables: []string{"allow rules", "runtime evil\x1b]52;c;aGk=\x07"}}}
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	got := m.View().Content
	for _, want := range []string{"Trust this folder?", "/p/.kz/config.toml", "• allow rules", `runtime evil\x1b]52;c;aGk=\x07`, "y trust it", "n not now"} {
		if !strings.Contains(got, want) {
			t.Errorf("question lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsRune(got, 0x1b) || strings.ContainsRune(got, 0x07) {
		t.Errorf("question carries a raw control character:\n%q", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if w := textWidth(l); w > 60 {
			t.Errorf("line of %d columns in a 60-column window: %q", w, l)
		}
	}
}

// AskTrust runs the question as a program of its own and returns the
// answer typed at it.
func TestAskTrustRunsTheQuestion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"y": true, "n": false, "\x1b": false} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := AskTrust(ctx, TrustQuestion{File: "/p/.kz/config.toml", Enables: []string{"allow rules"},
			Input: strings.NewReader(in), Output: io.Discard})
		cancel()
		if err != nil || got != want {
			t.Errorf("input %q: trusted %v, err %v; want %v", in, got, err, want)
		}
	}
}

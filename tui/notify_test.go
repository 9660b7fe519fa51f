package tui

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestNotifySequenceDecides: which bytes each mode sends in which
// terminal.
func TestNotifySequenceDecides(t *testing.T) {
	const osc = "\x1b]9;kz: permission needed\a"
	for _, c := range []struct {
		name string
		mode NotifyMode
		env  func(string) string
		want string
	}{
		{"off", NotifyOff, envOf("TERM_PROGRAM", "iTerm.app"), ""},
		{"bell", NotifyBell, envOf("TERM_PROGRAM", "iTerm.app"), "\a"},
		{"osc9 anywhere", NotifyOSC9, envOf("TERM", "xterm"), osc},
		{"auto in iTerm2", NotifyAuto, envOf("TERM_PROGRAM", "iTerm.app"), osc},
		{"auto in WezTerm", NotifyAuto, envOf("TERM_PROGRAM", "WezTerm"), osc},
		{"auto in ghostty", NotifyAuto, envOf("TERM_PROGRAM", "ghostty"), osc},
		{"auto in kitty by TERM", NotifyAuto, envOf("TERM", "xterm-kitty"), osc},
		{"auto in kitty by window id", NotifyAuto, envOf("KITTY_WINDOW_ID", "1", "TERM", "xterm-256color"), osc},
		{"auto in an unknown terminal", NotifyAuto, envOf("TERM", "xterm-256color"), "\a"},
		{"auto in Apple Terminal", NotifyAuto, envOf("TERM_PROGRAM", "Apple_Terminal"), "\a"},
		{"auto in tmux inside iTerm2", NotifyAuto, envOf("TERM_PROGRAM", "iTerm.app", "TMUX", "/tmp/tmux-1/default,1,0"), "\a"},
		{"auto in screen inside kitty", NotifyAuto, envOf("KITTY_WINDOW_ID", "1", "TERM", "screen-256color"), "\a"},
		{"unknown mode", NotifyMode("loud"), envOf(), ""},
	} {
		if got := notifySequence(c.mode, c.env, "permission needed"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestOSC9TextIsInert: whatever the text holds (a command the model chose),
// the sequence has no control character before its final BEL, so nothing
// can end it early and be read as terminal input; long text is cut.
func TestOSC9TextIsInert(t *testing.T) {
	for _, text := range []string{
		"rm -rf build\a\x1b]52;c;cHduZWQ=\a",
		"line one\nline two\ttab\r\x00\x7f\u0085",
		"\u202Egnp.exe",
		"9;4;1;50",
		strings.Repeat("é", 1000),
	} {
		seq := notifySequence(NotifyOSC9, envOf(), text)
		if !strings.HasPrefix(seq, "\x1b]9;kz: ") || !strings.HasSuffix(seq, "\a") {
			t.Fatalf("%q: framing %q", text, seq)
		}
		body := strings.TrimSuffix(strings.TrimPrefix(seq, "\x1b]9;"), "\a")
		for _, r := range body {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidiNames[r] != "" {
				t.Errorf("%q: control %U inside the sequence %q", text, r, seq)
			}
		}
		if n := len([]rune(body)); n > maxNotifyText+len("kz: ")+1 {
			t.Errorf("%q: %d characters", text, n)
		}
	}
}

func TestParseNotifyMode(t *testing.T) {
	for in, want := range map[string]NotifyMode{"": NotifyAuto, "auto": NotifyAuto, "bell": NotifyBell, "osc9": NotifyOSC9, "off": NotifyOff} {
		if got, err := ParseNotifyMode(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := ParseNotifyMode("Bell"); err == nil || !strings.Contains(err.Error(), "want auto, bell, osc9 or off") {
		t.Errorf("a bad value: %v", err)
	}
}

// rawOf runs cmd and returns what it asks to write raw to the terminal.
func rawOf(cmd tea.Cmd) string {
	var out strings.Builder
	for _, msg := range runCmdAll(cmd) {
		if r, ok := msg.(tea.RawMsg); ok {
			out.WriteString(r.Msg.(string))
		}
	}
	return out.String()
}

func runCmdAll(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmdAll(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// TestPromptNotifiesOnlyWhenNotFocused: a permission request (or a review)
// that arrives while the window is blurred is announced once per batch;
// one that arrives in a focused window, or after focus came back, is not;
// replayed requests never are.
func TestPromptNotifiesOnlyWhenNotFocused(t *testing.T) {
	req := func(id string) engine.Event {
		return engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: id, Tool: "bash", Command: "make test"}
	}
	review := engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r3", Tool: "apply_patch",
		Paths: []string{"a.go"}, Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-a\n+b\n"}
	m := testModel(t, newFake(), 100, 30)
	m.notify = NotifyOSC9
	if v := m.View(); !v.ReportFocus {
		t.Error("focus reports are not asked for")
	}
	if raw := rawOf(m.onEvents(eventsMsg{events: []engine.Event{req("r1")}})); raw != "" {
		t.Errorf("notified in a focused window: %q", raw)
	}
	m.update(tea.BlurMsg{})
	raw := rawOf(m.onEvents(eventsMsg{events: []engine.Event{req("r2"), review}}))
	if raw != "\x1b]9;kz: permission needed: bash make test\a" {
		t.Errorf("blurred: %q", raw)
	}
	m.update(tea.FocusMsg{})
	if raw := rawOf(m.onEvents(eventsMsg{events: []engine.Event{{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r4", Tool: "bash", Command: "ls"}}})); raw != "" {
		t.Errorf("notified after focus came back: %q", raw)
	}
	m.update(tea.BlurMsg{})
	if raw := rawOf(m.onEvents(eventsMsg{events: []engine.Event{review}})); raw != "\x1b]9;kz: review needed: apply_patch a.go\a" {
		t.Errorf("review: %q", raw)
	}
	m.replaying = true
	if raw := rawOf(m.onEvents(eventsMsg{events: []engine.Event{req("r5")}})); raw != "" {
		t.Errorf("a replayed request notified: %q", raw)
	}
	m.replaying = false
	m.notify = NotifyOff
	if raw := rawOf(m.onEvents(eventsMsg{events: []engine.Event{req("r6")}})); raw != "" {
		t.Errorf("notify off: %q", raw)
	}
	if v := m.View(); v.ReportFocus {
		t.Error("focus reports asked for with notify off")
	}
}

// TestRunNotifiesABlurredTerminal runs the real program: focus reporting
// is turned on, the terminal reports that it lost focus (CSI O), and the
// permission prompt of a real session's turn is announced with OSC 9 on
// the program's output.
func TestRunNotifiesABlurredTerminal(t *testing.T) {
	sess, sub := realSession(t, permissionScript)
	sub.Close()
	in, keys := io.Pipe()
	defer func() { _ = keys.Close() }()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Session: sess, Input: in, Output: out, Width: 100, Height: 30, Theme: "dark", Notify: NotifyOSC9})
	}()
	waitFor(t, "focus reporting", func() bool { return strings.Contains(out.String(), "\x1b[?1004h") })
	if _, err := keys.Write([]byte("\x1b[O")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := keys.Write([]byte("clean up\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the notification", func() bool {
		return strings.Contains(out.String(), "\x1b]9;kz: permission needed: bash rm -rf build\a")
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

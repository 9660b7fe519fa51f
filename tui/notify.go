package tui

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
)

// NotifyMode says how kz tells a person in another window that a question
// waits for them (a permission prompt or a diff review): the `notify` key
// of the [tui] table.
type NotifyMode string

const (
	// NotifyAuto sends a desktop notification (OSC 9) in terminals known
	// to show one, and rings the bell elsewhere.
	NotifyAuto NotifyMode = "auto"
	// NotifyBell rings the terminal bell (BEL), which most terminals turn
	// into an urgency hint or a badge.
	NotifyBell NotifyMode = "bell"
	// NotifyOSC9 always sends OSC 9 (ESC ] 9 ; text BEL).
	NotifyOSC9 NotifyMode = "osc9"
	// NotifyOff never notifies.
	NotifyOff NotifyMode = "off"
)

// NotifyModes lists the valid values, for configuration messages.
var NotifyModes = []NotifyMode{NotifyAuto, NotifyBell, NotifyOSC9, NotifyOff}

// ParseNotifyMode reads a `notify` value; empty is auto.
func ParseNotifyMode(s string) (NotifyMode, error) {
	if s == "" {
		return NotifyAuto, nil
	}
	for _, m := range NotifyModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("notify %q: want auto, bell, osc9 or off", s)
}

// osc9Terminals are the TERM_PROGRAM values of terminals that show OSC 9
// as a desktop notification.
var osc9Terminals = map[string]bool{"iTerm.app": true, "WezTerm": true, "ghostty": true, "kitty": true}

// maxNotifyText bounds the notification's text: a desktop notification
// shows a line, and the terminal parses the whole sequence.
const maxNotifyText = 200

// notifySequence is what to write to the terminal to notify the person of
// text under mode, given the environment (getenv): "" when nothing is to
// be sent. The text is made safe for an OSC string: a control character
// in it (a BEL or an ESC from a command the model chose) would end the
// sequence early and have the rest read as terminal input.
func notifySequence(mode NotifyMode, getenv func(string) string, text string) string {
	switch mode {
	case NotifyBell:
		return "\a"
	case NotifyOSC9:
		return osc9(text)
	case NotifyAuto:
		// Inside tmux or screen an OSC 9 stops at the multiplexer (it
		// would need passthrough), while a bell reaches the window list
		// and the outer terminal.
		if getenv("TMUX") == "" && !strings.HasPrefix(getenv("TERM"), "screen") &&
			(osc9Terminals[getenv("TERM_PROGRAM")] || getenv("TERM") == "xterm-kitty" || getenv("KITTY_WINDOW_ID") != "") {
			return osc9(text)
		}
		return "\a"
	}
	return ""
}

// osc9 is ESC ] 9 ; text BEL, with text reduced to printable characters.
// The "kz: " prefix keeps the text from starting with a digit and a
// semicolon, which some terminals read as a sub-command of OSC 9 (ConEmu's
// progress bar is 9;4).
func osc9(text string) string {
	var b strings.Builder
	b.WriteString("\x1b]9;kz: ")
	n := 0
	for _, r := range text {
		if n >= maxNotifyText {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case !unicode.IsPrint(r) || bidiNames[r] != "":
			continue
		default:
			b.WriteRune(r)
		}
		n++
	}
	b.WriteByte('\a')
	return b.String()
}

// notifyWaiting returns the command that tells the person a question waits,
// when the terminal reported that its window lost focus; nil otherwise
// (a focused window shows the question itself, and a terminal that never
// reports focus is taken as focused).
func (m *Model) notifyWaiting(text string) tea.Cmd {
	if m.focused || m.notify == "" || m.notify == NotifyOff {
		return nil
	}
	seq := notifySequence(m.notify, m.getenv, text)
	if seq == "" {
		return nil
	}
	return tea.Raw(seq)
}

// permissionNote is the notification's text for a permission request: what
// waits, and for which tool, command or file.
func permissionNote(ev engine.Event) string {
	what := "permission needed"
	if ev.Diff != "" {
		what = "review needed"
	}
	switch {
	case ev.Command != "":
		return what + ": " + ev.Tool + " " + ev.Command
	case len(ev.Paths) > 0:
		return what + ": " + ev.Tool + " " + strings.Join(ev.Paths, ", ")
	case ev.Tool != "":
		return what + ": " + ev.Tool
	}
	return what
}

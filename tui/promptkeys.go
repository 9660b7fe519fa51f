package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Keys while a permission prompt (the plain dialog or the diff review) is
// open.
//
// A prompt can appear at any moment, also while the person is typing the
// next message, and its answer keys are plain letters (y, s, a, n, m) and
// space. A key is therefore taken as an answer only when it comes after a
// pause of at least answerGrace since both the prompt appeared and the
// previous key press: nobody reads a prompt and answers it faster than
// that, and nobody typing pauses that long between two keys of a word.
// Until such a pause, printable keys (and backspace) go on to the input
// editor, where the typed text is kept as a draft and shown under the
// prompt, and every other key except moving about the prompt (navKey) is
// ignored by it.
// A person who reads the prompt and then presses y gets the answer at
// once, since reading takes longer than the grace period. Once a key has
// gone to the prompt this way, the prompt is engaged and takes its keys
// at any pace (] ] to skip two hunks).

// answerGrace is the pause that must precede an answer key.
const answerGrace = 300 * time.Millisecond

// typingAhead reports whether a key pressed at now still belongs to typing
// in progress: it came within answerGrace of the prompt appearing or of
// the previous key press.
func typingAhead(now, shownAt, prevKey time.Time) bool {
	return now.Sub(shownAt) < answerGrace || now.Sub(prevKey) < answerGrace
}

// navKey reports whether a key only moves about a prompt (scrolls it, or
// moves to another file of the review). Such keys can never answer nor be
// part of typed text, so they reach the prompt even while typing goes on,
// and they do not count as typing: a person who scrolls to read and then
// presses y is answered at once.
func navKey(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "up", "down", "pgup", "pgdown", "tab", "shift+tab":
		return true
	}
	return false
}

// textKey reports whether a key types text (a printable character, or
// backspace to correct it): such keys go to the input editor while the
// person is typing ahead of a prompt.
func textKey(msg tea.KeyPressMsg) bool {
	if msg.String() == "backspace" {
		return true
	}
	return msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModSuper) == 0
}

// promptActsOn reports whether the open prompt does something with a key:
// one of its bindings, or help. Only such keys can answer or engage it.
func (m *Model) promptActsOn(msg tea.KeyPressMsg) bool {
	var bs []key.Binding
	if m.review != nil {
		k := m.review.keys
		bs = []key.Binding{k.Allow, k.AllowSession, k.AllowAlways, k.Deny, k.DenyMessage, k.ToggleFile, k.ToggleHunk,
			k.NextFile, k.PrevFile, k.NextHunk, k.PrevHunk, k.Layout, k.Edit, k.Up, k.Down, k.PageUp, k.PageDown}
	} else {
		k := m.dialog.keys
		bs = []key.Binding{k.AllowOnce, k.AllowSession, k.AllowAlways, k.Deny, k.DenyMessage, k.Up, k.Down, k.PageUp, k.PageDown}
	}
	// A mark on a write taken whole is not offered, but answered with why
	// (review.wholeOnly) rather than typed into the input.
	return key.Matches(msg, m.keys.Help) || key.Matches(msg, bs...) || (m.review != nil && m.review.markKey(msg))
}

// promptOpen reports whether a permission prompt takes the keys.
func (m *Model) promptOpen() bool { return m.review != nil || m.dialog.active() }

// promptDenying reports whether the prompt's deny-with-message editor is
// open: keys are then deliberate typing of the message.
func (m *Model) promptDenying() bool {
	if m.review != nil {
		return m.review.denying
	}
	return m.dialog.denying
}

// onPromptKey routes a key while a prompt is open. prev is the time of the
// previous key press that counts as typing (see navKey).
func (m *Model) onPromptKey(msg tea.KeyPressMsg, now, prev time.Time) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return m.promptCtrlC(now)
	}
	if !m.promptDenying() && !navKey(msg) {
		// A key the prompt does nothing with is typing, whenever it comes
		// ("c" of "cat"), and so is any key while typing goes on, unless
		// the person is already using the prompt. Typing disengages the
		// prompt, so the "a" after that "c" is text, not "always allow".
		if !m.promptActsOn(msg) || (!m.dialog.engaged && typingAhead(now, m.dialog.shownAt, prev)) {
			m.dialog.engaged = false
			if !textKey(msg) {
				return nil
			}
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			return cmd
		}
		// Moving about the prompt (navKey) does not engage it: tab or an
		// arrow can come from typing too (completing a command), and must
		// not let the next letters through as answers.
		m.dialog.engaged = true
	}
	if key.Matches(msg, m.keys.Help) {
		// The help lists the prompt's keys too; any key closes it and
		// brings the prompt back, unanswered.
		m.showHelp = true
		return nil
	}
	if m.review != nil {
		act, cmd := m.review.update(msg, m.width, m.review.bodyHeight(&m.theme, m.width, max(m.height-4, 5)))
		if m.quiet {
			cmd = nil
		}
		if act != nil {
			m.dialog.remove(act.requestID)
			m.review = nil
			return tea.Batch(cmd, m.answer(*act))
		}
		return cmd
	}
	act, cmd := m.dialog.update(msg, m.dialogBodyHeight())
	if m.quiet {
		cmd = nil
	}
	if act != nil {
		return tea.Batch(cmd, m.answer(*act))
	}
	return cmd
}

// promptCtrlC handles ctrl+c in a prompt. In the deny-with-message editor
// it clears the message, and on an empty message backs out of the editor
// like esc; elsewhere in a prompt it quits only when pressed twice, so an
// open question and the turn waiting on it are never abandoned by one key.
func (m *Model) promptCtrlC(now time.Time) tea.Cmd {
	if !m.promptDenying() {
		return m.confirmQuit(now, "ctrl+c")
	}
	in := &m.dialog.input
	if m.review != nil {
		in = &m.review.input
	}
	if in.Value() != "" {
		in.Reset()
		return nil
	}
	if m.review != nil {
		m.review.denying = false
	} else {
		m.dialog.denying = false
	}
	in.Blur()
	return nil
}

// draftLine tells, under a prompt, what the input holds: keys typed while
// the prompt was open went there, and the person must see they were kept.
func (m *Model) draftLine() string {
	v := oneLine(m.input.Value())
	if v == "" {
		return ""
	}
	t := &m.theme
	label := "✎ kept in your input: "
	room := max(m.width-ansi.StringWidth(label)-1, 4)
	if ansi.StringWidth(v) > room {
		// The end is what was typed last: show it rather than the start.
		v = "…" + ansi.TruncateLeft(v, ansi.StringWidth(v)-room+1, "")
	}
	return t.Muted.Render(label) + t.Text.Render(v)
}

// promptView renders the open prompt, with the draft line under it when
// the input holds text.
func (m *Model) promptView(maxH int) string {
	draft := m.draftLine()
	if draft != "" {
		maxH = max(maxH-1, 5)
	}
	var v string
	if m.review != nil {
		v = m.review.view(&m.theme, m.width, maxH, len(m.dialog.queue)-1)
	} else {
		v = m.dialog.view(&m.theme, m.width, maxH)
	}
	if draft != "" {
		v += "\n" + draft
	}
	return v
}

// onPaste puts pasted text where typing goes: the message editor of a
// prompt when it is open, else the input (also under a prompt: a paste is
// never an answer, and must not be lost). Other overlays take no paste.
func (m *Model) onPaste(msg tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	if m.promptOpen() && !m.promptDenying() {
		// A paste is typing: the keys right after it are text too.
		m.lastKeyAt, m.dialog.engaged = m.now(), false
	}
	switch {
	case m.promptOpen() && m.promptDenying() && m.review != nil:
		m.review.input, cmd = m.review.input.Update(msg)
	case m.promptOpen() && m.promptDenying():
		m.dialog.input, cmd = m.dialog.input.Update(msg)
	case m.promptOpen() || !m.overlay():
		if attach, ok := m.pasteImage(msg.Content); ok {
			// A pasted path to an image file becomes an attachment
			// (attachedMsg), or pasted text if it is no image.
			return attach
		}
		before := m.input.Value()
		m.input, cmd = m.input.Update(msg)
		if m.input.Value() != before {
			// As for a typed key: the menu's matches changed, so its
			// highlight starts at the top again.
			m.menuCursor, m.menuMoved = 0, false
		}
	}
	return cmd
}

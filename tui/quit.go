package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// quitWindow is how long a first quit key waits for the second one when
// quitting would abandon something: a running turn or an open prompt.
const quitWindow = 2 * time.Second

// quitExpiredMsg ends the wait for a second quit key started at at.
type quitExpiredMsg struct{ at time.Time }

// confirmQuit quits when the same request came within quitWindow;
// otherwise it asks for a second press with a one-line notice in the
// status bar. The wait ends with any other key (clearQuit) or when the
// window passes, so two presses far apart never quit.
func (m *Model) confirmQuit(now time.Time, keyName string) tea.Cmd {
	if !m.quitAskedAt.IsZero() && now.Sub(m.quitAskedAt) <= quitWindow {
		return tea.Quit
	}
	m.quitAskedAt = now
	m.status.notice = "press " + keyName + " again to quit"
	if m.quiet {
		return nil
	}
	return tea.Tick(quitWindow, func(time.Time) tea.Msg { return quitExpiredMsg{at: now} })
}

// clearQuit ends a wait for a second quit key.
func (m *Model) clearQuit() {
	m.quitAskedAt = time.Time{}
	m.status.notice = ""
}

// onQuitExpired ends the wait it was started for, unless a newer one began.
func (m *Model) onQuitExpired(msg quitExpiredMsg) {
	if m.quitAskedAt.Equal(msg.at) {
		m.clearQuit()
	}
}

// quitKey handles ctrl+c and ctrl+d outside prompts and overlays. ctrl+c
// clears a non-empty input first (and leaves history browsing); ctrl+d
// deletes as in any editor unless the input is empty. On an empty input
// either quits, at once when nothing runs, else on a second press.
func (m *Model) quitKey(keyName string, now time.Time) (tea.Cmd, bool) {
	if m.input.Value() != "" {
		if keyName != "ctrl+c" {
			return nil, false
		}
		m.input.Reset()
		m.histPos, m.draft = len(m.history), ""
		return nil, true
	}
	if m.status.running || m.submitting {
		return m.confirmQuit(now, keyName), true
	}
	return tea.Quit, true
}

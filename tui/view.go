package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The screen layout of the root model: the transcript above, the bottom
// panel (input, dialog, review or picker) under it, then the status bar
// and a hint line.

func (m *Model) renderCtx() *renderCtx {
	return &renderCtx{
		theme: &m.theme, md: m.md, width: m.width, now: m.now(), spinner: m.spin.View(),
		expand: m.tr.expand, reasoning: m.tr.reasoning, deferCold: !m.quiet,
	}
}

// bottomPanel renders what sits under the transcript.
func (m *Model) bottomPanel() string {
	maxH := max(m.height-4, 5)
	switch {
	case m.showHelp:
		// Help hides the hint line: it may use all but the status bar and
		// the blank line above the panel.
		return m.helpView(max(m.height-2, 5))
	case m.promptOpen():
		// A permission prompt is never hidden: a picker, the session list
		// or the change log opened before it waits behind it.
		return m.promptView(maxH)
	case m.picker != nil:
		return m.picker.view(&m.theme, m.width, maxH)
	case m.sessions != nil:
		return m.sessions.view(&m.theme, m.width, maxH, m.now())
	case m.changeLog != nil:
		return m.changeLog.view(&m.theme, m.width, maxH)
	case m.rewind != nil:
		return m.rewind.view(&m.theme, m.width, maxH)
	}
	var b strings.Builder
	for i, q := range m.queue {
		if i == 3 {
			b.WriteString(m.theme.Muted.Render(fmt.Sprintf("⏳ … and %d more", len(m.queue)-3)) + "\n")
			break
		}
		line := oneLine(q.text)
		if n := len(q.images); n > 0 {
			line = strings.TrimSpace(line + " [" + plural(n, "image") + "]")
		}
		b.WriteString(m.theme.Muted.Render("⏳ queued: "+truncateLine(line, m.width-12)) + "\n")
	}
	if c := m.completionView(&m.theme); c != "" {
		b.WriteString(c + "\n")
	} else if c := m.mentionView(&m.theme); c != "" {
		b.WriteString(c + "\n")
	}
	if c := m.attachmentsView(&m.theme); c != "" {
		b.WriteString(c + "\n")
	}
	in := m.inputMemo.get(fmt.Sprintf("%d|%d|%d|%d|%d|%s", m.width, m.input.Height(), m.input.ScrollYOffset(), m.input.Line(), m.input.Column(), m.input.Value()),
		m.input.View)
	b.WriteString(in)
	return b.String()
}

// memo caches one rendered string under a key.
type memo struct {
	key, val string
	ok       bool
}

func (c *memo) get(key string, render func() string) string {
	if !c.ok || c.key != key {
		c.key, c.val, c.ok = key, render(), true
	}
	return c.val
}

func (m *Model) dialogBodyHeight() int {
	return m.dialog.bodyHeight(max(m.height-4, 5), 1)
}

func (m *Model) hintLine() string {
	if m.overlay() {
		return ""
	}
	return m.hintMemo.get(fmt.Sprint(m.width), func() string {
		h := m.help
		h.SetWidth(m.width)
		// The help view cuts its list short with an ellipsis, except when
		// the binding that does not fit leaves no room for the ellipsis
		// either: then it adds the binding anyway and the line overflows
		// (at 60 columns by 9). Fewer bindings are shown until it fits.
		keys := m.keys.ShortHelp()
		for n := len(keys); n > 0; n-- {
			if v := h.ShortHelpView(keys[:n]); textWidth(v) <= m.width {
				return v
			}
		}
		return ""
	})
}

// transcriptHeight is what is left for the transcript.
func (m *Model) transcriptHeight() int {
	used := lineCount(m.bottomPanel()) + 2
	if m.hintLine() != "" {
		used++
	}
	return max(m.height-used, 1)
}

// View draws the screen: transcript, bottom panel, status bar and hint.
func (m *Model) View() tea.View {
	m.drawnOnce.Do(func() { close(m.drawn) })
	if m.setup != nil {
		v := tea.NewView(m.setup.view(m.width, m.height))
		v.AltScreen = true
		v.WindowTitle = "kz — setup"
		return v
	}
	now := m.now()
	if v, ok := m.pace.cached(now); ok && !m.quiet {
		return v
	}
	bottom := m.bottomPanel()
	hint := m.hintLine()
	used := lineCount(bottom) + 2 // the status bar and a blank line above the panel
	if hint != "" {
		used++
	}
	th := max(m.height-used, 0)
	lines := m.tr.view(m.renderCtx(), th)
	if !m.tr.follow && len(lines) > 1 {
		// Scrolled back: say so, and how to get back, on the last line.
		lines[len(lines)-1] = divider(&m.theme, "↓ more below · pgdn to follow", m.width)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for i := len(lines); i < th; i++ {
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(bottom)
	b.WriteByte('\n')
	spin := m.spin.View()
	b.WriteString(m.statusMemo.get(fmt.Sprintf("%d|%s|%+v", m.width, spin, m.status), func() string {
		return m.status.view(&m.theme, m.width, spin)
	}))
	if hint != "" {
		b.WriteByte('\n')
		b.WriteString(hint)
	}
	v := tea.NewView(b.String())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	// Focus reports tell whether a question needs a notification.
	v.ReportFocus = m.notify != "" && m.notify != NotifyOff
	v.WindowTitle = "kz — " + m.status.state.Runtime
	m.pace.keep(v, now)
	return v
}

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

func truncateLine(s string, w int) string {
	r := []rune(s)
	if len(r) <= w || w < 2 {
		return s
	}
	return string(r[:w-1]) + "…"
}

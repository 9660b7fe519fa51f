package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// keyMap holds every key binding of the TUI. The help overlay and the hint
// line are built from it, so a binding cannot exist without being shown.
type keyMap struct {
	Send        key.Binding
	Newline     key.Binding
	HistoryPrev key.Binding
	HistoryNext key.Binding
	Interrupt   key.Binding
	ModeCycle   key.Binding
	Runtime     key.Binding
	Model       key.Binding
	ExpandTools key.Binding
	Reasoning   key.Binding
	Undo        key.Binding
	ScrollUp    key.Binding
	ScrollDown  key.Binding
	Help        key.Binding
	Quit        key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Send:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Newline:     key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"), key.WithHelp("ctrl+j", "newline")),
		HistoryPrev: key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑", "history back")),
		HistoryNext: key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("↓", "history forward")),
		Interrupt:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "interrupt")),
		ModeCycle:   key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "mode")),
		Runtime:     key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "runtime")),
		Model:       key.NewBinding(key.WithKeys("ctrl+l"), key.WithHelp("ctrl+l", "model")),
		ExpandTools: key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "expand tools")),
		Reasoning:   key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "reasoning")),
		Undo:        key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "type /undo")),
		ScrollUp:    key.NewBinding(key.WithKeys("pgup", "shift+up"), key.WithHelp("pgup", "scroll up")),
		ScrollDown:  key.NewBinding(key.WithKeys("pgdown", "shift+down"), key.WithHelp("pgdn", "scroll down")),
		Help:        key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("ctrl+c", "ctrl+d"), key.WithHelp("ctrl+c", "clear, then quit")),
	}
}

// ShortHelp is the one-line hint of the main keys.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Interrupt, k.ModeCycle, k.Runtime, k.Help}
}

// groups are the bindings of the help overlay with their short
// descriptions, for narrow screens.
func (k keyMap) groups() [][]key.Binding {
	return [][]key.Binding{
		{k.Send, k.Newline, k.HistoryPrev, k.HistoryNext, k.Interrupt},
		{k.ModeCycle, k.Runtime, k.Model, k.ExpandTools, k.Reasoning, k.Undo},
		{k.ScrollUp, k.ScrollDown, k.Help, k.Quit},
	}
}

// FullHelp is the help overlay, one column per group, with longer
// descriptions than the hint line has room for.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{
			long(k.Send, "send; queued while a turn runs"),
			long(k.Newline, "newline (also shift/alt+enter)"),
			long(k.HistoryPrev, "previous input"),
			long(k.HistoryNext, "next input"),
			long(k.Interrupt, "stop the turn and its tools; twice quickly: kill"),
		},
		{
			long(k.ModeCycle, "cycle mode"),
			long(k.Runtime, "switch runtime"),
			long(k.Model, "switch model"),
			long(k.ExpandTools, "expand/collapse tool output"),
			long(k.Reasoning, "show/hide reasoning"),
			long(k.Undo, "type /undo (enter runs it)"),
		},
		{
			long(k.ScrollUp, "scroll up (or mouse wheel)"),
			long(k.ScrollDown, "scroll down"),
			long(k.Help, "this help (on an empty input)"),
			long(k.Quit, "clear the input, then quit"),
		},
	}
}

func long(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// dialogKeys are the permission dialog's bindings.
type dialogKeys struct {
	AllowOnce    key.Binding
	AllowSession key.Binding
	AllowAlways  key.Binding
	Deny         key.Binding
	DenyMessage  key.Binding
	Up           key.Binding
	Down         key.Binding
	PageUp       key.Binding
	PageDown     key.Binding
}

func defaultDialogKeys() dialogKeys {
	return dialogKeys{
		AllowOnce:    key.NewBinding(key.WithKeys("y", "1"), key.WithHelp("y", "allow once")),
		AllowSession: key.NewBinding(key.WithKeys("s", "2"), key.WithHelp("s", "allow for session")),
		AllowAlways:  key.NewBinding(key.WithKeys("a", "3"), key.WithHelp("a", "always allow")),
		Deny:         key.NewBinding(key.WithKeys("n", "4", "esc"), key.WithHelp("n/esc", "deny")),
		DenyMessage:  key.NewBinding(key.WithKeys("m", "5"), key.WithHelp("m", "deny with message")),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "space", "f"), key.WithHelp("pgdn/space", "page down")),
	}
}

// ShortHelp implements help.KeyMap for the dialog's key line.
func (k dialogKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.AllowOnce, k.AllowSession, k.AllowAlways, k.Deny, k.DenyMessage}
}

// compact is ShortHelp with one-word descriptions, for short screens.
func (k dialogKeys) compact() []key.Binding {
	return []key.Binding{long(k.AllowOnce, "allow"), long(k.AllowSession, "session"), long(k.AllowAlways, "always"),
		long(k.Deny, "deny"), long(k.DenyMessage, "message")}
}

// FullHelp implements help.KeyMap.
func (k dialogKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.ShortHelp(), {k.Up, k.Down, k.PageUp, k.PageDown}}
}

// helpView is the ? overlay: every binding with its description, two
// columns when the screen is wide enough. It never takes more than
// maxHeight lines: on a short screen the bindings are listed inline
// ("key desc · key desc"), and what still does not fit is cut with a note,
// so the status bar always stays on screen.
func (m *Model) helpView(maxHeight int) string {
	t := &m.theme
	inner := max(m.width-4, 10)
	block := func(title string, bs []key.Binding) string {
		w := 0
		for _, b := range bs {
			w = max(w, ansi.StringWidth(b.Help().Key))
		}
		lines := []string{t.Accent.Render(title)}
		for _, b := range bs {
			k := b.Help().Key
			lines = append(lines, t.HelpKey.Render(k)+strings.Repeat(" ", w-ansi.StringWidth(k)+2)+t.HelpDesc.Render(b.Help().Desc))
		}
		return strings.Join(lines, "\n")
	}
	groups := m.keys.groups()
	if m.width >= 90 {
		groups = m.keys.FullHelp()
	}
	// Every key a prompt takes is listed too: the dialog's answers and
	// scrolling, and the review's own keys (its answers are the same).
	dk, rk := m.dialog.keys, defaultReviewKeys()
	titles := []string{"Input", "Session", "View", "Permission dialog", "Diff review"}
	sets := [][]key.Binding{groups[0], groups[1], groups[2],
		append(dk.ShortHelp(), dk.Up, dk.Down, dk.PageUp, dk.PageDown),
		{rk.ToggleFile, rk.ToggleHunk, rk.NextFile, rk.PrevFile, rk.NextHunk, rk.Layout, rk.Edit}}
	blocks := make([]string, len(sets))
	for i := range sets {
		blocks[i] = block(titles[i], sets[i])
	}
	left := blocks[0] + "\n\n" + blocks[2] + "\n\n" + blocks[4]
	right := blocks[1] + "\n\n" + blocks[3]
	body := lipgloss.JoinHorizontal(lipgloss.Top, left, "    ", right)
	if lipgloss.Width(body) > inner {
		body = strings.Join(blocks, "\n\n")
	}
	cmds := m.commands()
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = "/" + c.name
	}
	commands := t.Accent.Render("Commands") + "\n" + t.HelpDesc.Render(ansi.Wordwrap(strings.Join(names, " "), inner, ""))
	closing := t.Muted.Render("any key closes this help")
	full := body + "\n\n" + commands + "\n\n" + closing
	room := max(maxHeight-2, 3) // inside the border
	if lineCount(full) > room {
		// Short screen: each group on as few lines as its width allows.
		var parts []string
		for i, bs := range sets {
			items := []string{t.Accent.Render(titles[i] + ":")}
			for _, b := range bs {
				items = append(items, t.HelpKey.Render(b.Help().Key)+" "+t.HelpDesc.Render(b.Help().Desc))
			}
			parts = append(parts, joinWrapped(items, " ", t.Muted.Render(" · "), inner)...)
		}
		full = strings.Join(parts, "\n") + "\n" + commands + "\n" + closing
	}
	if lines := strings.Split(full, "\n"); len(lines) > room {
		full = strings.Join(lines[:room-1], "\n") + "\n" + t.Muted.Render(moreNote(inner))
	}
	return t.Dialog.Width(m.width).Render(full)
}

// joinWrapped lays items out on lines of at most width cells, breaking
// between items rather than inside them (an item wider than a line is
// word-wrapped). The first item is followed by first, the others are
// separated by sep.
func joinWrapped(items []string, first, sep string, width int) []string {
	var lines []string
	cur := ""
	for i, it := range items {
		join := sep
		if i == 1 {
			join = first
		}
		switch {
		case i == 0:
			cur = it
		case ansi.StringWidth(cur)+ansi.StringWidth(join)+ansi.StringWidth(it) <= width:
			cur += join + it
		default:
			lines = append(lines, cur)
			cur = it
		}
	}
	var out []string
	for _, l := range append(lines, cur) {
		out = append(out, strings.Split(ansi.Wordwrap(l, width, ""), "\n")...)
	}
	return out
}

// moreNote is the last line of a cut help overlay: it always says how to
// close the help, and where there is room that a taller window shows more.
func moreNote(width int) string {
	for _, n := range []string{"… more in a taller window · any key closes", "… more · any key closes"} {
		if ansi.StringWidth(n) <= width {
			return n
		}
	}
	return ansi.Truncate("any key closes", width, "…")
}

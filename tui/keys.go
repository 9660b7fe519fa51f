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
		Undo:        key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "undo")),
		ScrollUp:    key.NewBinding(key.WithKeys("pgup", "shift+up"), key.WithHelp("pgup", "scroll up")),
		ScrollDown:  key.NewBinding(key.WithKeys("pgdown", "shift+down"), key.WithHelp("pgdn", "scroll down")),
		Help:        key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("ctrl+c", "ctrl+d"), key.WithHelp("ctrl+c", "quit")),
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
			long(k.Interrupt, "interrupt the turn; twice: at once"),
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
		Deny:         key.NewBinding(key.WithKeys("n", "4", "esc"), key.WithHelp("n", "deny")),
		DenyMessage:  key.NewBinding(key.WithKeys("m", "5"), key.WithHelp("m", "deny with message")),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "space", "f"), key.WithHelp("pgdn", "page down")),
	}
}

// ShortHelp implements help.KeyMap for the dialog's key line.
func (k dialogKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.AllowOnce, k.AllowSession, k.AllowAlways, k.Deny, k.DenyMessage}
}

// FullHelp implements help.KeyMap.
func (k dialogKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.ShortHelp(), {k.Up, k.Down, k.PageUp, k.PageDown}}
}

// helpView is the ? overlay: every binding with its description, two
// columns when the screen is wide enough, never cut.
func (m *Model) helpView() string {
	t := &m.theme
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
	blocks := []string{
		block("Input", groups[0]), block("Session", groups[1]),
		block("View", groups[2]), block("Permission dialog", m.dialog.keys.ShortHelp()),
	}
	left := blocks[0] + "\n\n" + blocks[2]
	right := blocks[1] + "\n\n" + blocks[3]
	body := lipgloss.JoinHorizontal(lipgloss.Top, left, "    ", right)
	if lipgloss.Width(body) > m.width-4 {
		body = strings.Join(blocks, "\n\n")
	}
	cmds := m.commands()
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = "/" + c.name
	}
	body += "\n\n" + t.Accent.Render("Commands") + "\n" + t.HelpDesc.Render(ansi.Wordwrap(strings.Join(names, " "), max(m.width-6, 10), ""))
	body += "\n\n" + t.Muted.Render("any key closes this help")
	return t.Dialog.Width(m.width).Render(body)
}

// Package themes holds kz's colour themes: the lipgloss styles of every TUI
// component and the glamour style of rendered markdown, per theme. A theme
// is a value: it holds no state and is safe to share.
//
// NO_COLOR (https://no-color.org/) is respected by Resolve: when it is set
// to a non-empty value, every theme degrades to its colourless variant,
// which keeps emphasis (bold, reverse, underline) but emits no colour.
package themes

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"
)

// Name names a theme.
type Name string

// The built-in themes.
const (
	Dark         Name = "dark"
	Light        Name = "light"
	HighContrast Name = "high-contrast"
)

// Names lists the built-in themes in the order `kz --help` shows them.
var Names = []Name{Dark, Light, HighContrast}

// Parse validates a theme name; the empty name is the default, dark.
func Parse(s string) (Name, error) {
	if s == "" {
		return Dark, nil
	}
	n := Name(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Names, n) {
		return n, nil
	}
	return "", fmt.Errorf("unknown theme %q (use dark, light or high-contrast)", s)
}

// Theme is the set of styles the TUI renders with.
type Theme struct {
	Name Name
	// NoColor is set when the theme was degraded because of NO_COLOR.
	NoColor bool

	// Markdown is the glamour style of assistant messages. Its document
	// margins are zero: the transcript lays messages out itself.
	Markdown ansi.StyleConfig

	Text      lipgloss.Style // ordinary text
	Muted     lipgloss.Style // secondary text: hints, durations, metadata
	User      lipgloss.Style // the person's messages
	UserMark  lipgloss.Style // the marker in front of a user message
	Reasoning lipgloss.Style // model reasoning, shown dimmed
	Accent    lipgloss.Style // headings of cards, dialog titles, the current item
	OK        lipgloss.Style // success: finished tool calls, allowed
	Warn      lipgloss.Style // warnings: interrupted, refused mode change
	Error     lipgloss.Style // failures and denials
	Danger    lipgloss.Style // dangerous content in a permission request
	Escaped   lipgloss.Style // control characters shown escaped, bidi marks
	Added     lipgloss.Style // diff additions
	Removed   lipgloss.Style // diff removals
	Divider   lipgloss.Style // runtime_switched, mode_changed, compact_boundary
	Card      lipgloss.Style // border of a tool card
	Dialog    lipgloss.Style // border of the permission dialog and pickers
	Selected  lipgloss.Style // the selected row of a picker
	Status    lipgloss.Style // the status bar background
	StatusKey lipgloss.Style // labels inside the status bar
	HelpKey   lipgloss.Style // keys in help views
	HelpDesc  lipgloss.Style // descriptions in help views
	Prompt    lipgloss.Style // the input prompt
}

// palette is the handful of colours a theme is built from.
type palette struct {
	fg, muted, accent, user, ok, warn, err, danger, escaped, added, removed, statusBg, statusFg, selBg color.Color
}

// Resolve returns the named theme, degraded to its colourless variant when
// noColor is set (callers pass os.Getenv("NO_COLOR") != "").
func Resolve(name string, noColor bool) (Theme, error) {
	n, err := Parse(name)
	if err != nil {
		return Theme{}, err
	}
	if noColor {
		return colorless(n), nil
	}
	return build(n), nil
}

// MustResolve is Resolve for names known to be valid (tests, defaults).
func MustResolve(name string, noColor bool) Theme {
	t, err := Resolve(name, noColor)
	if err != nil {
		panic(err)
	}
	return t
}

func build(n Name) Theme {
	var p palette
	var md ansi.StyleConfig
	switch n {
	case Light:
		p = palette{
			fg: lipgloss.Color("#1f2328"), muted: lipgloss.Color("#6e7781"), accent: lipgloss.Color("#0550ae"),
			user: lipgloss.Color("#8250df"), ok: lipgloss.Color("#1a7f37"), warn: lipgloss.Color("#9a6700"),
			err: lipgloss.Color("#cf222e"), danger: lipgloss.Color("#cf222e"), escaped: lipgloss.Color("#bc4c00"),
			added: lipgloss.Color("#1a7f37"), removed: lipgloss.Color("#cf222e"),
			statusBg: lipgloss.Color("#d0d7de"), statusFg: lipgloss.Color("#1f2328"), selBg: lipgloss.Color("#0969da"),
		}
		md = styles.LightStyleConfig
	case HighContrast:
		p = palette{
			fg: lipgloss.Color("#ffffff"), muted: lipgloss.Color("#d0d0d0"), accent: lipgloss.Color("#00ffff"),
			user: lipgloss.Color("#ffff00"), ok: lipgloss.Color("#00ff00"), warn: lipgloss.Color("#ffff00"),
			err: lipgloss.Color("#ff5f5f"), danger: lipgloss.Color("#ff0000"), escaped: lipgloss.Color("#ff00ff"),
			added: lipgloss.Color("#00ff00"), removed: lipgloss.Color("#ff5f5f"),
			statusBg: lipgloss.Color("#ffffff"), statusFg: lipgloss.Color("#000000"), selBg: lipgloss.Color("#0000aa"),
		}
		md = highContrastMarkdown()
	default:
		p = palette{
			fg: lipgloss.Color("#d0d7de"), muted: lipgloss.Color("#7d8590"), accent: lipgloss.Color("#58a6ff"),
			user: lipgloss.Color("#d2a8ff"), ok: lipgloss.Color("#3fb950"), warn: lipgloss.Color("#d29922"),
			err: lipgloss.Color("#f85149"), danger: lipgloss.Color("#ff7b72"), escaped: lipgloss.Color("#ffa657"),
			added: lipgloss.Color("#3fb950"), removed: lipgloss.Color("#f85149"),
			statusBg: lipgloss.Color("#30363d"), statusFg: lipgloss.Color("#e6edf3"), selBg: lipgloss.Color("#1f6feb"),
		}
		md = styles.DarkStyleConfig
	}
	s := lipgloss.NewStyle
	t := Theme{
		Name:      n,
		Markdown:  flatten(md),
		Text:      s().Foreground(p.fg),
		Muted:     s().Foreground(p.muted),
		User:      s().Foreground(p.fg).Bold(true),
		UserMark:  s().Foreground(p.user).Bold(true),
		Reasoning: s().Foreground(p.muted).Italic(true),
		Accent:    s().Foreground(p.accent).Bold(true),
		OK:        s().Foreground(p.ok),
		Warn:      s().Foreground(p.warn),
		Error:     s().Foreground(p.err).Bold(true),
		Danger:    s().Foreground(p.danger).Bold(true).Underline(true),
		Escaped:   s().Foreground(p.escaped).Reverse(true),
		Added:     s().Foreground(p.added),
		Removed:   s().Foreground(p.removed),
		Divider:   s().Foreground(p.muted),
		Card:      s().Border(lipgloss.RoundedBorder()).BorderForeground(p.muted).Padding(0, 1),
		Dialog:    s().Border(lipgloss.RoundedBorder()).BorderForeground(p.warn).Padding(0, 1),
		Selected:  s().Background(p.selBg).Foreground(lipgloss.Color("#ffffff")).Bold(true),
		Status:    s().Background(p.statusBg).Foreground(p.statusFg),
		StatusKey: s().Background(p.statusBg).Foreground(p.statusFg).Bold(true),
		HelpKey:   s().Foreground(p.accent).Bold(true),
		HelpDesc:  s().Foreground(p.muted),
		Prompt:    s().Foreground(p.user).Bold(true),
	}
	if n == HighContrast {
		t.Card = t.Card.Border(lipgloss.ThickBorder()).BorderForeground(p.fg)
		t.Dialog = t.Dialog.Border(lipgloss.DoubleBorder()).BorderForeground(p.warn)
		t.Reasoning = s().Foreground(p.muted).Italic(true)
		t.Selected = t.Selected.Reverse(true)
	}
	return t
}

// highContrastMarkdown is glamour's dark style with the low-contrast
// parts made bright: white body text, pure bright headings, links and
// inline code on black, and a brighter code-block text colour. Only the
// copy's pointers are replaced, never the values they point at: those are
// shared with glamour's own style variables.
func highContrastMarkdown() ansi.StyleConfig {
	c := styles.DarkStyleConfig
	str := func(s string) *string { return &s }
	yes := true
	c.Document.Color = str("#ffffff")
	c.BlockQuote.Color = str("#ffffff")
	c.Heading.Color, c.Heading.Bold = str("#00ffff"), &yes
	c.H1.Color, c.H1.BackgroundColor = str("#000000"), str("#00ffff")
	c.H6.Color = str("#00ffff")
	c.Link.Color, c.Link.Underline = str("#00ffff"), &yes
	c.LinkText.Color, c.LinkText.Bold = str("#ffff00"), &yes
	c.Code.Color, c.Code.BackgroundColor = str("#ffff00"), str("#000000")
	c.HorizontalRule.Color = str("#ffffff")
	if c.CodeBlock.Chroma != nil {
		ch := *c.CodeBlock.Chroma
		ch.Text.Color = str("#ffffff")
		ch.Comment.Color = str("#d0d0d0")
		c.CodeBlock.Chroma = &ch
	}
	return c
}

// colorless is the NO_COLOR variant: emphasis through attributes only, and
// the ASCII markdown style, which uses no colour at all.
func colorless(n Name) Theme {
	s := lipgloss.NewStyle
	return Theme{
		Name:      n,
		NoColor:   true,
		Markdown:  flatten(styles.ASCIIStyleConfig),
		Text:      s(),
		Muted:     s().Faint(true),
		User:      s().Bold(true),
		UserMark:  s().Bold(true),
		Reasoning: s().Faint(true).Italic(true),
		Accent:    s().Bold(true),
		OK:        s(),
		Warn:      s().Bold(true),
		Error:     s().Bold(true),
		Danger:    s().Bold(true).Underline(true),
		Escaped:   s().Reverse(true),
		Added:     s(),
		Removed:   s(),
		Divider:   s().Faint(true),
		Card:      s().Border(lipgloss.NormalBorder()).Padding(0, 1),
		Dialog:    s().Border(lipgloss.DoubleBorder()).Padding(0, 1),
		Selected:  s().Reverse(true),
		Status:    s().Reverse(true),
		StatusKey: s().Reverse(true).Bold(true),
		HelpKey:   s().Bold(true),
		HelpDesc:  s(),
		Prompt:    s().Bold(true),
	}
}

// flatten removes the document margin and the blank lines glamour puts
// around a document, so rendered messages (and the chunks of a streaming
// message) stack without extra space. The input is copied, never changed:
// the glamour style variables are shared package state.
func flatten(c ansi.StyleConfig) ansi.StyleConfig {
	zero := uint(0)
	c.Document.Margin = &zero
	c.Document.BlockPrefix = ""
	c.Document.BlockSuffix = ""
	return c
}

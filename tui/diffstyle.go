package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/themes"
)

// cellWriter packs styled cells into lines of a fixed width, changing SGR
// only where the style changes, and pads each line with its background.
type cellWriter struct {
	width   int
	bg      string
	noColor bool
	lines   []string
	b       strings.Builder
	col     int
	cur     string // the SGR in effect on the current line
}

func newCellWriter(width int, bg string, noColor bool) *cellWriter {
	return &cellWriter{width: max(width, 2), bg: bg, noColor: noColor}
}

func (w *cellWriter) sgr(fg, bg string, em bool) string {
	if w.noColor {
		if em {
			return "4"
		}
		return ""
	}
	var parts []string
	if fg != "" {
		parts = append(parts, fg)
	}
	if bg != "" {
		parts = append(parts, bg)
	}
	if em {
		parts = append(parts, "1")
	}
	return strings.Join(parts, ";")
}

func (w *cellWriter) put(s, fg, bg string, em bool) {
	code := w.sgr(fg, bg, em)
	for _, r := range s {
		cw := max(ansi.StringWidth(string(r)), 1)
		if w.col+cw > w.width {
			w.newline()
		}
		if code != w.cur {
			w.b.WriteString("\x1b[0m")
			if code != "" {
				w.b.WriteString("\x1b[" + code + "m")
			}
			w.cur = code
		}
		w.b.WriteRune(r)
		w.col += cw
	}
}

func (w *cellWriter) newline() {
	pad := w.sgr("", w.bg, false)
	if pad != w.cur {
		w.b.WriteString("\x1b[0m")
		if pad != "" {
			w.b.WriteString("\x1b[" + pad + "m")
		}
	}
	w.b.WriteString(strings.Repeat(" ", max(w.width-w.col, 0)))
	w.b.WriteString("\x1b[0m")
	w.lines = append(w.lines, w.b.String())
	w.b.Reset()
	w.col, w.cur = 0, ""
}

func (w *cellWriter) finish() []string {
	w.newline()
	return w.lines
}

// diffPalette holds the SGR parameters of the diff view. Line bodies are
// written as raw SGR rather than through lipgloss: a screen of a review
// has thousands of style changes and this is the hot path.
type diffPalette struct {
	noColor                         bool
	addBg, addEm, delBg, delEm      string
	addFg, delFg, mutedFg, escFg    string
	style                           *chroma.Style
	tokenCache                      map[chroma.TokenType]string
	headerStyle, hunkStyle, dimText func(...string) string
}

func paletteFor(t *themes.Theme) diffPalette {
	p := diffPalette{
		noColor:     t.NoColor,
		headerStyle: t.Accent.Bold(true).Render,
		hunkStyle:   t.Divider.Render,
		dimText:     t.Muted.Render,
		tokenCache:  map[chroma.TokenType]string{},
	}
	if t.NoColor {
		return p
	}
	styleName := "github-dark"
	switch t.Name {
	case themes.Light:
		p.addBg, p.addEm, p.delBg, p.delEm = bgHex("#e6ffec"), bgHex("#abf2bc"), bgHex("#ffebe9"), bgHex("#ffb3ae")
		p.addFg, p.delFg, p.mutedFg, p.escFg = fgHex("#1a7f37"), fgHex("#cf222e"), fgHex("#6e7781"), fgHex("#bc4c00")
		styleName = "github"
	case themes.HighContrast:
		p.addBg, p.addEm, p.delBg, p.delEm = bgHex("#002b00"), bgHex("#006b00"), bgHex("#3b0000"), bgHex("#8b0000")
		p.addFg, p.delFg, p.mutedFg, p.escFg = fgHex("#00ff00"), fgHex("#ff5555"), fgHex("#c0c0c0"), fgHex("#ffff00")
	default:
		p.addBg, p.addEm, p.delBg, p.delEm = bgHex("#12261e"), bgHex("#1f5a37"), bgHex("#2d1517"), bgHex("#73282d")
		p.addFg, p.delFg, p.mutedFg, p.escFg = fgHex("#3fb950"), fgHex("#f85149"), fgHex("#6e7681"), fgHex("#d29922")
	}
	p.style = styles.Get(styleName)
	return p
}

func (p diffPalette) tokenFg(tt chroma.TokenType) string {
	if c, ok := p.tokenCache[tt]; ok {
		return c
	}
	e := p.style.Get(tt)
	c := ""
	if e.Colour.IsSet() {
		c = fmt.Sprintf("38;2;%d;%d;%d", e.Colour.Red(), e.Colour.Green(), e.Colour.Blue())
	}
	p.tokenCache[tt] = c
	return c
}

func (p diffPalette) markerFg(k diff.Op) string {
	switch k {
	case diff.Add:
		return p.addFg
	case diff.Delete:
		return p.delFg
	}
	return p.mutedFg
}

func (p diffPalette) gutter(s string) string {
	if p.noColor || p.mutedFg == "" {
		return s
	}
	return "\x1b[" + p.mutedFg + "m" + s + "\x1b[0m"
}

func (p diffPalette) muted(s string) string  { return p.dimText(s) }
func (p diffPalette) header(s string) string { return p.headerStyle(s) }
func (p diffPalette) hunk(s string) string   { return p.hunkStyle(s) }
func (p diffPalette) add(s string) string {
	if p.noColor {
		return s
	}
	return "\x1b[" + p.addFg + "m" + s + "\x1b[0m"
}

func (p diffPalette) del(s string) string {
	if p.noColor {
		return s
	}
	return "\x1b[" + p.delFg + "m" + s + "\x1b[0m"
}

func fgHex(h string) string { return rgbSGR("38", h) }
func bgHex(h string) string { return rgbSGR("48", h) }

func rgbSGR(kind, h string) string {
	n, err := strconv.ParseUint(strings.TrimPrefix(h, "#"), 16, 32)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s;2;%d;%d;%d", kind, n>>16&0xff, n>>8&0xff, n&0xff)
}

// dialogBox draws t.Dialog at width around lines, exactly as
// t.Dialog.Width(width).Render(strings.Join(lines, "\n")) does when every
// line fits the inner width (width-4), but without lipgloss's wrapping
// pass over every cell, which was most of a review frame's time. A line
// too wide falls back to lipgloss, so the output never differs.
func dialogBox(t *themes.Theme, width int, lines []string) string {
	inner := width - 4
	st := t.Dialog
	b := st.GetBorderStyle()
	if inner < 1 || st.GetPaddingLeft() != 1 || st.GetPaddingRight() != 1 || st.GetPaddingTop() != 0 || st.GetPaddingBottom() != 0 ||
		!st.GetBorderTop() || !st.GetBorderBottom() || !st.GetBorderLeft() || !st.GetBorderRight() {
		return st.Width(width).Render(strings.Join(lines, "\n"))
	}
	widths := make([]int, len(lines))
	for i, l := range lines {
		if strings.ContainsAny(l, "\n\t") {
			return st.Width(width).Render(strings.Join(lines, "\n"))
		}
		if widths[i] = ansi.StringWidth(l); widths[i] > inner {
			return st.Width(width).Render(strings.Join(lines, "\n"))
		}
	}
	edge := lipgloss.NewStyle().Foreground(st.GetBorderTopForeground())
	left, right := edge.Render(b.Left)+" ", " "+edge.Render(b.Right)
	var sb strings.Builder
	sb.WriteString(edge.Render(b.TopLeft + strings.Repeat(b.Top, width-2) + b.TopRight))
	for i, l := range lines {
		sb.WriteByte('\n')
		sb.WriteString(left)
		sb.WriteString(l)
		if openStyle(l) {
			// A style spanning lines (a wrapped key line) must not
			// colour the padding and the border.
			sb.WriteString("\x1b[m")
		}
		sb.WriteString(strings.Repeat(" ", inner-widths[i]))
		sb.WriteString(right)
	}
	sb.WriteByte('\n')
	sb.WriteString(edge.Render(b.BottomLeft + strings.Repeat(b.Bottom, width-2) + b.BottomRight))
	return sb.String()
}

// openStyle says whether the last SGR sequence of s leaves a style on.
func openStyle(s string) bool {
	i := strings.LastIndex(s, "\x1b[")
	if i < 0 {
		return false
	}
	rest := s[i+2:]
	j := strings.IndexByte(rest, 'm')
	if j < 0 {
		return false
	}
	p := rest[:j]
	return p != "" && p != "0"
}

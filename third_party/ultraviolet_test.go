package thirdparty

import (
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// The ultraviolet fork's renderer skips its width-drift check for a cell
// holding one printable ASCII byte of width 1 (terminal_renderer.go,
// lineHasDrift). Upstream's check finds drift in a cell that is wider
// than one column or whose width the terminal's method measures otherwise
// than ansi.StringWidth does, so the skip changes nothing exactly when
// every width method measures each such byte as one column: the premise
// this test holds, for the methods the renderer may be given.
func TestASCIICellsCannotDrift(t *testing.T) {
	for c := byte(0x20); c < 0x7f; c++ {
		s := string([]byte{c})
		for _, m := range []ansi.Method{ansi.GraphemeWidth, ansi.WcWidth} {
			if w := m.StringWidth(s); w != 1 {
				t.Errorf("%q is %d columns under method %v", s, w, m)
			}
		}
		if w := ansi.StringWidth(s); w != 1 {
			t.Errorf("%q is %d columns under ansi.StringWidth", s, w)
		}
	}
}

// TestDrawClearedIsDrawOnAClearedBuffer: Bubble Tea's renderer (fork)
// clears its buffer and then draws each frame with DrawCleared, which
// leaves out Draw's own blanking of the area. On a buffer just cleared
// the two must leave the same cells, whatever the buffer held before:
// styled text, wide characters (also cut by the edge), wrapped and
// unwrapped lines, tails, more lines than the area, and an empty frame.
func TestDrawClearedIsDrawOnAClearedBuffer(t *testing.T) {
	frames := []string{
		"",
		"plain",
		"\x1b[1;31mred bold\x1b[0m and \x1b[38;5;42mindexed\x1b[0m\r\nnext line",
		"wide: 日本語テキスト and emoji 👍🏽 at the edge 日本",
		strings.Repeat("long line that runs past the edge of the area ", 4),
		strings.Repeat("line\n", 30),
		"\x1b]8;;https://example.com\x1b\\a link\x1b]8;;\x1b\\ then \ttab",
		"combining e\u0301 and zero width \u200b joiner",
	}
	prev := uv.NewStyledString(strings.Repeat("日本語 \x1b[7mreverse\x1b[0m ", 20))
	for _, wrap := range []bool{false, true} {
		for _, tail := range []string{"", "…"} {
			for _, f := range frames {
				draw := func(cleared bool) string {
					buf := uv.NewScreenBuffer(40, 12)
					prev.Draw(buf, buf.Bounds())
					buf.Clear()
					s := uv.NewStyledString(f)
					s.Wrap, s.Tail = wrap, tail
					if cleared {
						s.DrawCleared(buf, buf.Bounds())
					} else {
						s.Draw(buf, buf.Bounds())
					}
					return buf.Render()
				}
				if got, want := draw(true), draw(false); got != want {
					t.Errorf("wrap %v tail %q frame %q:\nDrawCleared:\n%s\nDraw:\n%s", wrap, tail, f, got, want)
				}
			}
		}
	}
}

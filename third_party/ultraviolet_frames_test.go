package thirdparty

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image/color"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// scrollFrames is what a streamed answer looks like to the renderer: a
// 200×50 full screen whose transcript grows at the bottom, each frame the
// last 46 lines of the document so far (styled as glamour styles text:
// SGR colours, bold, code with a background) over a four-line footer that
// changes with every frame, the last line still being written.
func scrollFrames(n int) []string {
	rng := rand.New(rand.NewPCG(7, 21))
	words := []string{"stream", "the", "\x1b[1mbold\x1b[0m", "render", "\x1b[38;5;42mgreen\x1b[0m", "of", "frame",
		"\x1b[48;5;236m\x1b[38;5;203mcode()\x1b[0m", "a", "terminal", "diff", "scroll", "line"}
	var doc []string
	// Glamour gives every run of text its document colour, spaces
	// included, and resets after it.
	line := func() string {
		var b strings.Builder
		b.WriteString("\x1b[38;5;252m  \x1b[0m")
		for w := 0; w < 8+rng.IntN(18); w++ {
			word := words[rng.IntN(len(words))]
			if !strings.Contains(word, "\x1b") {
				word = "\x1b[38;5;252m" + word + "\x1b[0m"
			}
			b.WriteString(word)
			b.WriteString("\x1b[38;5;252m \x1b[0m")
		}
		return b.String()
	}
	frames := make([]string, n)
	for i := range frames {
		for range rng.IntN(3) {
			doc = append(doc, line())
		}
		tail := line()
		tail = ansi.Truncate(tail, rng.IntN(ansi.StringWidth(tail)/2+1)+ansi.StringWidth(tail)/2, "")
		view := append(append([]string(nil), doc[max(len(doc)-45, 0):]...), tail)
		for len(view) < 46 {
			view = append([]string{""}, view...)
		}
		view = append(view, strings.Repeat("─", 200), fmt.Sprintf("\x1b[2m⠋ streaming · %d tokens\x1b[0m", i*7), "> ", "status")
		frames[i] = strings.Join(view, "\n")
	}
	return frames
}

// renderFrames draws frames as Bubble Tea's renderer (fork) does, a full
// screen with scroll optimisation and the line cache, writing what it
// outputs to w.
func renderFrames(w io.Writer, frames []string) {
	r := testRenderer(w, true)
	buf := uv.NewScreenBuffer(200, 50)
	var lines uv.LineCache
	for _, f := range frames {
		uv.NewStyledString(f).DrawCached(buf, &lines)
		r.SetRowKeys(lines.RowKeys())
		r.Render(buf.RenderBuffer)
		_ = r.Flush()
	}
}

// TestScrollFramesRenderAsBefore holds the renderer's output for 300
// frames of a growing, scrolling transcript to the bytes it wrote before
// the fork's speed patches to the renderer (terminal_renderer_hashmap.go's
// hash, cell.go's colorEqual): they change how fast lines are hashed and
// cells compared, never what is written.
func TestScrollFramesRenderAsBefore(t *testing.T) {
	var out bytes.Buffer
	renderFrames(&out, scrollFrames(300))
	const want = "23cef33ad976adcd24cad602f390f658f35792fec78358ffb8253ba178e97798"
	if got := fmt.Sprintf("%x", sha256.Sum256(out.Bytes())); got != want {
		t.Fatalf("the renderer wrote %d bytes with sha256 %s, want %s", out.Len(), got, want)
	}
}

// BenchmarkScrollFrame is the renderer's cost per frame of a streamed
// answer on a 200×50 screen (see scrollFrames): the frame drawn into the
// cleared cell buffer, diffed against the screen, written to io.Discard.
func BenchmarkScrollFrame(b *testing.B) {
	frames := scrollFrames(400)
	b.ReportAllocs()
	for b.Loop() {
		renderFrames(io.Discard, frames)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(frames)), "µs/frame")
}

// TestLineCacheDrawsAsDrawCleared: drawing a frame with the fork's line
// cache leaves every cell and every touched range of the buffer as
// DrawCleared does, frame after frame, for the streamed transcript of
// scrollFrames and for random frames made of lines that test the cache's
// rules: a style or a link left open into the next line, a combining mark
// that starts a line (it belongs to the row above), wide characters cut
// at the edge, carriage returns, truncated lines, repeated and blank
// lines, with the width changing now and then. So does DrawCached, which
// draws over the frame before without clearing it.
func TestLineCacheDrawsAsDrawCleared(t *testing.T) {
	check := func(t *testing.T, frames []string, widths []int, tail string) {
		t.Helper()
		var lines, lazyLines uv.LineCache
		var want, got, lazy uv.ScreenBuffer
		for i, f := range frames {
			w := widths[i%len(widths)]
			if want.RenderBuffer == nil || want.Width() != w {
				want, got, lazy = uv.NewScreenBuffer(w, 12), uv.NewScreenBuffer(w, 12), uv.NewScreenBuffer(w, 12)
			}
			want.Clear()
			got.Clear()
			ss := uv.NewStyledString(f)
			ss.Tail = tail
			ss.DrawCleared(want, want.Bounds())
			ss.DrawClearedCached(got, &lines)
			// DrawCached draws over the frame before, not cleared.
			ss.DrawCached(lazy, &lazyLines)
			for name, b := range map[string]uv.ScreenBuffer{"cached": got, "drawn over": lazy} {
				for y := range want.Lines {
					if !reflect.DeepEqual(want.Lines[y], b.Lines[y]) {
						t.Fatalf("frame %d row %d: %s\n%q\nwant\n%q", i, y, name, b.Lines[y].String(), want.Lines[y].String())
					}
					if !reflect.DeepEqual(want.Touched[y], b.Touched[y]) {
						t.Fatalf("frame %d row %d: %s touched %+v, want %+v", i, y, name, b.Touched[y], want.Touched[y])
					}
				}
			}
		}
	}
	t.Run("stream", func(t *testing.T) { check(t, scrollFrames(120), []int{200}, "") })
	for seed := range uint64(12) {
		t.Run(fmt.Sprintf("random %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			frames := make([]string, 300)
			var prev []string
			for i := range frames {
				var rows []string
				if len(prev) > 0 && rng.IntN(3) > 0 {
					// Scroll what was there by a line or two, as a stream does.
					rows = append(rows, prev[min(rng.IntN(3), len(prev)):]...)
				}
				for len(rows) < 11+rng.IntN(3) {
					rows = append(rows, linePool[rng.IntN(len(linePool))])
				}
				prev = rows
				frames[i] = strings.Join(rows, "\n")
			}
			check(t, frames, []int{40, 40, 40, 23}, []string{"", "…"}[seed%2])
		})
	}
}

// linePool holds lines that test the line cache's rules: a style or a
// link left open into the next line, a combining mark that starts a line
// (it belongs to the row above), wide characters cut at the edge, carriage
// returns, truncated escape sequences, repeated and blank lines.
var linePool = []string{
	"", "", "plain text", "\x1b[38;5;252mstyled\x1b[0m and reset", "\x1b[1mbold left open",
	"after an open style", "\x1b[0m", "\x1b]8;;https://example.com\x1b\\link left open", "\x1b]8;;\x1b\\closed link",
	"\u0301starts with a combining mark", "e\u0301 composed", "\u4e16\u754c wide \U0001F468\u200d\U0001F469 emoji",
	strings.Repeat("\u4e16", 30), strings.Repeat("long line ", 12), "over\rcarriage", "tab\there",
	"\x1b[2K erase in line", "\x1b[48;5;236m\x1b[38;5;203mcode()\x1b[0m", "\x1b[31mred\x1b[0m\x1b[4:3munder\x1b[0m",
	"\x1b[38;2;10;20;30mtrue colour", "\x1b[0mreset first", "ends with a mode\x1b[?25h",
	"a title \x1b]0;in an OSC", "an open CSI \x1b[", "\x1b]8;;https://example.com/x\x07bel link\x1b]8;;\x07",
}

// TestCellEqualIsEachFieldEqual: the fork's Cell.Equal, which compares
// the fields itself, answers as upstream's did (width, content,
// Style.Equal, Link.Equal), for cells that differ in any one field or in
// several, nil and non-nil colours included.
func TestCellEqualIsEachFieldEqual(t *testing.T) {
	red, black := color.Color(ansi.BasicColor(1)), color.Color(ansi.IndexedColor(16))
	variants := []func(*uv.Cell){
		func(*uv.Cell) {},
		func(c *uv.Cell) { c.Width = 2 },
		func(c *uv.Cell) { c.Content = "y" },
		func(c *uv.Cell) { c.Content = "" },
		func(c *uv.Cell) { c.Style.Attrs = 1 },
		func(c *uv.Cell) { c.Style.Underline = 1 },
		func(c *uv.Cell) { c.Style.Fg = red },
		func(c *uv.Cell) { c.Style.Fg = ansi.IndexedColor(1) },
		func(c *uv.Cell) { c.Style.Bg = black },
		func(c *uv.Cell) { c.Style.Bg = ansi.BasicColor(0) },
		func(c *uv.Cell) { c.Style.UnderlineColor = red },
		func(c *uv.Cell) { c.Link.URL = "https://example.com" },
		func(c *uv.Cell) { c.Link.Params = "id=1" },
		func(c *uv.Cell) { c.Style.Fg, c.Link.URL = red, "u" },
	}
	for i, va := range variants {
		for j, vb := range variants {
			a, b := uv.Cell{Content: "x", Width: 1}, uv.Cell{Content: "x", Width: 1}
			va(&a)
			vb(&b)
			want := a.Width == b.Width && a.Content == b.Content && a.Style.Equal(&b.Style) && a.Link.Equal(&b.Link)
			if got := a.Equal(&b); got != want {
				t.Errorf("variants %d and %d (%+v, %+v): Equal %v, want %v", i, j, a, b, got, want)
			}
		}
	}
	if (&uv.Cell{}).Equal(nil) {
		t.Error("a cell equals nil")
	}
}

// TestCellColoursEqualAsTheirRGBA: the fork's short way to equal colours
// (cell.go, sameColorValue) changes no answer of Cell.Equal: two cells
// differing only in a colour are equal exactly when the colours convert
// to the same RGBA, across the colour types and values where the two can
// part (indexed 0 and 16 are both black; basic 1 and indexed 1 are one
// red; nil is no colour).
func TestCellColoursEqualAsTheirRGBA(t *testing.T) {
	colours := []color.Color{nil, ansi.BasicColor(0), ansi.BasicColor(1), ansi.IndexedColor(0), ansi.IndexedColor(1),
		ansi.IndexedColor(16), ansi.IndexedColor(252),
		ansi.RGBColor{R: 0xd0, G: 0xd0, B: 0xd0}, color.RGBA{R: 0xd0, G: 0xd0, B: 0xd0, A: 0xff}, color.RGBA{A: 0xff},
		color.Gray{Y: 0xd0}}
	rgba := func(c color.Color) [4]uint32 {
		if c == nil {
			return [4]uint32{1 << 31}
		}
		r, g, b, a := c.RGBA()
		return [4]uint32{r, g, b, a}
	}
	for _, a := range colours {
		for _, b := range colours {
			for _, field := range []string{"fg", "bg", "underline"} {
				x, y := uv.Cell{Content: "x", Width: 1}, uv.Cell{Content: "x", Width: 1}
				switch field {
				case "fg":
					x.Style.Fg, y.Style.Fg = a, b
				case "bg":
					x.Style.Bg, y.Style.Bg = a, b
				default:
					x.Style.UnderlineColor, y.Style.UnderlineColor = a, b
				}
				if got, want := x.Equal(&y), rgba(a) == rgba(b); got != want {
					t.Errorf("%s %#v and %#v: Equal %v, their RGBA say %v", field, a, b, got, want)
				}
			}
		}
	}
}

package thirdparty

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	gansi "charm.land/glamour/v2/ansi"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The glamour fork's padding and indentation writers process whole runs
// of bytes, decode plain SGR sequences themselves and skip the ANSI parser
// over printable ASCII, where upstream goes rune by rune through
// lipgloss.WrapWriter. TestGlamourWritersMatchUpstream holds them to
// upstream's output, byte for byte, on random text full of what changes
// the pen (SGR sequences of every shape, hyperlinks, sequences cut across
// writes, C1 bytes and invalid UTF-8) and on text shaped like glamour's
// own output (see renderedLike), written in random pieces.

// writerTokens are the pieces the random inputs are made of.
var writerTokens = []string{
	"word", " ", "  ", "\n", "\n\n", "\t", "\r", "\x7f", "日本語", "🚀", "e\u0301", "ñ",
	"\x1b[0m", "\x1b[m", "\x1b[1m", "\x1b[38;5;252m", "\x1b[1;38;5;203;48;5;236m", "\x1b[;1m", "\x1b[;m",
	"\x1b[38:2::10:20:30m", "\x1b[38;2;10;20;30m", "\x1b[4:3m", "\x1b[22;23;24;25;27;28;29;39;49m",
	"\x1b[1;2;3;4;5;7;8;9;21;22;23;24;1;2;3;4;5;7;8;9m", "\x1b[1234567890m", "\x1b[0000000001m",
	"\x1b[?25l", "\x1b[>4;2m", "\x1b[1 q", "\x1b7", "\x1b\x1b[1m",
	"\x1b]8;;https://example.com/x\x1b\\", "\x1b]8;id=1;https://example.com/y\x07", "\x1b]8;;\x1b\\",
	"\x9b1m", "\xff", "\xe6\x97", "\x1b[", "m", "38;5;1",
}

// randomPen returns text of n random tokens.
func randomPen(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(writerTokens[rng.IntN(len(writerTokens))])
	}
	return b.String()
}

// writePieces writes s to w in random pieces, cutting sequences and runes.
func writePieces(t *testing.T, rng *rand.Rand, w io.Writer, s string) {
	t.Helper()
	for s != "" {
		n := min(1+rng.IntN(12), len(s))
		if _, err := io.WriteString(w, s[:n]); err != nil {
			t.Fatal(err)
		}
		s = s[n:]
	}
}

func TestGlamourWritersMatchUpstream(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	pad := "\x1b[38;5;252m \x1b[0m"
	for i := range 800 {
		in := randomPen(rng, 1+rng.IntN(60))
		if i%2 == 1 {
			// Lines shaped like glamour's output, whose widths the fork
			// counts without ansi.StringWidth.
			in = renderedLike(rng, 1+rng.IntN(6), 5+rng.IntN(25))
		}
		padding, indent := rng.IntN(30), rng.IntN(4)
		styled := rng.IntN(2) == 0
		for _, kind := range []string{"padding", "indent", "margin"} {
			var got, want bytes.Buffer
			padFunc := func(out *bytes.Buffer) func(io.Writer) {
				if !styled {
					return nil
				}
				return func(io.Writer) { out.WriteString(pad) }
			}
			var g, w io.WriteCloser
			switch kind {
			case "padding":
				g = gansi.NewPaddingWriter(&got, padding, padFunc(&got))
				w = newUpstreamPadding(&want, padding, padFunc(&want))
			case "indent":
				g = gansi.NewIndentWriter(&got, indent, padFunc(&got))
				w = newUpstreamIndent(&want, indent, padFunc(&want))
			default:
				g = gansi.NewIndentWriter(gansi.NewPaddingWriter(&got, padding, padFunc(&got)), indent, padFunc(&got))
				w = newUpstreamIndent(newUpstreamPadding(&want, padding, padFunc(&want)), indent, padFunc(&want))
			}
			writePieces(t, rng, g, in)
			writePieces(t, rng, w, in)
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("case %d, %s writer (padding %d, indent %d) on %q:\n got  %q\n want %q",
					i, kind, padding, indent, in, got.String(), want.String())
			}
		}
	}
}

// upstreamPadding is glamour v2.0.1's PaddingWriter, the reference.
type upstreamPadding struct {
	padding int
	padFunc func(io.Writer)
	w       *lipgloss.WrapWriter
	cache   bytes.Buffer
}

func newUpstreamPadding(w io.Writer, padding int, padFunc func(io.Writer)) *upstreamPadding {
	return &upstreamPadding{padding: padding, padFunc: padFunc, w: lipgloss.NewWrapWriter(w)}
}

func (w *upstreamPadding) Write(p []byte) (int, error) {
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == '\n' {
			linew := ansi.StringWidth(w.cache.String())
			if w.padding > 0 && linew < w.padding {
				if w.padFunc != nil {
					for n := 0; n < w.padding-linew; n++ {
						w.padFunc(w.w)
					}
				} else if _, err := io.WriteString(w.w, strings.Repeat(" ", w.padding-linew)); err != nil {
					return 0, fmt.Errorf("padding: %w", err)
				}
			}
			w.cache.Reset()
		} else {
			w.cache.Write(p[i : i+size])
		}
		if _, err := w.w.Write(p[i : i+size]); err != nil {
			return 0, fmt.Errorf("write: %w", err)
		}
		i += size
	}
	return len(p), nil
}

func (w *upstreamPadding) Close() error { return w.w.Close() }

// upstreamIndent is glamour v2.0.1's IndentWriter, the reference.
type upstreamIndent struct {
	indent     int
	indentFunc func(io.Writer)
	w          io.Writer
	pw         *lipgloss.WrapWriter
	skipIndent bool
}

func newUpstreamIndent(w io.Writer, indent int, indentFunc func(io.Writer)) *upstreamIndent {
	return &upstreamIndent{indent: indent, indentFunc: indentFunc, pw: lipgloss.NewWrapWriter(w), w: w}
}

func (w *upstreamIndent) Write(p []byte) (int, error) {
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if !w.skipIndent {
			style, link := w.pw.Style(), w.pw.Link()
			if !style.IsZero() {
				_, _ = io.WriteString(w.w, ansi.ResetStyle)
			}
			if !link.IsZero() {
				_, _ = io.WriteString(w.w, ansi.ResetHyperlink())
			}
			if w.indentFunc != nil {
				for range w.indent {
					w.indentFunc(w.pw)
				}
			} else if _, err := io.WriteString(w.pw, strings.Repeat(" ", w.indent)); err != nil {
				return 0, fmt.Errorf("indent: %w", err)
			}
			w.skipIndent = true
			style, link = w.pw.Style(), w.pw.Link()
			if !style.IsZero() {
				_, _ = io.WriteString(w.w, style.String())
			}
			if !link.IsZero() {
				_, _ = io.WriteString(w.w, ansi.SetHyperlink(link.URL, link.Params))
			}
		}
		if r == '\n' {
			w.skipIndent = false
		}
		if _, err := w.pw.Write(p[i : i+size]); err != nil {
			return 0, fmt.Errorf("write: %w", err)
		}
		i += size
	}
	return len(p), nil
}

func (w *upstreamIndent) Close() error {
	err := w.pw.Close()
	if c, ok := w.w.(io.WriteCloser); ok {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

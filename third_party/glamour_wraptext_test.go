package thirdparty

import (
	"math/rand/v2"
	"strings"
	"testing"

	gansi "charm.land/glamour/v2/ansi"
	"charm.land/lipgloss/v2"
)

// The glamour fork's WrapText skips the two steps of lipgloss.Wrap where
// a scan shows they change nothing: lines that already fit are not
// wrapped again, and the pen is not tracked through text where it is
// never set at a newline. TestGlamourWrapTextMatchesLipgloss holds it to
// lipgloss.Wrap, byte for byte, on random text of every kind the random
// writer test uses and on text shaped like glamour's own output (lines
// of words, styled runs and padding, some wider than the width, some
// not, the pen left set at some newlines), at widths around the lines'
// widths and with glamour's breakpoints.
func TestGlamourWrapTextMatchesLipgloss(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	breakpoints := []string{"", " ,.;-+|"}
	check := func(in string, width int, bp string) {
		t.Helper()
		if got, want := gansi.WrapText(in, width, bp), lipgloss.Wrap(in, width, bp); got != want {
			t.Fatalf("WrapText(%q, %d, %q)\n got  %q\n want %q", in, width, bp, got, want)
		}
	}
	for range 2000 {
		in := randomPen(rng, 1+rng.IntN(60))
		check(in, rng.IntN(40)-2, breakpoints[rng.IntN(2)])
		in = renderedLike(rng, 1+rng.IntN(8), 10+rng.IntN(30))
		check(in, 5+rng.IntN(40), breakpoints[rng.IntN(2)])
	}
}

// renderedLike returns lines shaped like glamour's output around width
// columns: words, styled runs, non-ASCII words (wide, combining, joined
// and prepended clusters, Unicode spaces with and without marks, the
// no-break space, list bullets and table borders) and padding made of
// styled spaces, each line ended by a reset or, now and then, with its
// style left open.
func renderedLike(rng *rand.Rand, lines, width int) string {
	pieces := []string{"word", "a", "configuration", "x,y", "a-b", "1+2|3", "é", "日本", "🚀", "  ",
		"e\u0301", "\u0301", "\u3000", "\u3000\u0301", "\u00a0", "\u00a0\u0301", "\u0600" + "1", "👩\u200d💻", "🇫🇷", "•", "│", "─",
		"\x1b[38;5;252m", "\x1b[1m", "\x1b[38;5;39;1m", "\x1b[m", "\x1b[0m", "\x1b[38;5;203;48;5;236m"}
	pad := "\x1b[38;5;252m \x1b[m"
	var b strings.Builder
	for l := range lines {
		cols := 0
		for cols < width-rng.IntN(width/2+1) {
			p := pieces[rng.IntN(len(pieces))]
			b.WriteString(p)
			if p[0] != '\x1b' {
				b.WriteByte(' ')
				cols += len(p) + 1
			}
		}
		for range rng.IntN(width/2 + 1) {
			b.WriteString(pad)
		}
		if rng.IntN(5) == 0 {
			b.WriteString("\x1b[1m")
		}
		if l < lines-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

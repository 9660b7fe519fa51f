package tui

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTrimStyledRightMatchesReference holds trimStyledRight, which walks
// back over a padded line's sequences byte by byte, to the search-based
// version it replaced (trimStyledRightReference), on random lines of
// text, blanks, padding and sequences of every nearby shape: SGR with
// ':' and ';', sequences cut short, a '[' without ESC, other CSI finals.
func TestTrimStyledRightMatchesReference(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	pieces := []string{"word", " ", "   ", "é", "日本", "\x1b[38;5;252m \x1b[m", "\x1b[m", "\x1b[0m", "\x1b[1;38;5;39m",
		"\x1b[38:2::1:2:3m", "\x1b[", "[", "m", "1;2m", "[1m", "\x1b[1K", "\x1b[?25l", "\x1b", ";", "\x1b]8;;x\x1b\\"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		l := b.String()
		if got, want := trimStyledRight(l), trimStyledRightReference(l); got != want {
			t.Fatalf("trimStyledRight(%q) = %q, want %q", l, got, want)
		}
	}
}

// trimStyledRightReference is trimStyledRight as it was before it walked
// back byte by byte: it looked for each sequence's start with
// strings.LastIndex and checked its parameters with strings.Trim.
func trimStyledRightReference(l string) string {
	end := len(l)
	styled := false
	for end > 0 {
		switch l[end-1] {
		case ' ':
			end--
		case 'm':
			i := strings.LastIndex(l[:end], "\x1b[")
			if i < 0 || strings.Trim(l[i+2:end-1], "0123456789;:") != "" {
				return l[:end] + reset(styled)
			}
			end, styled = i, true
		default:
			return l[:end] + reset(styled)
		}
	}
	return ""
}

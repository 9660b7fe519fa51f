package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// widthCases covers the fast path (ASCII, styled ASCII) and every way out
// of it: wide and combining characters, emoji, control characters, OSC
// hyperlinks, cut-off and malformed sequences.
var widthCases = []string{
	"", "a", "hello, world", strings.Repeat("x", 300),
	"\x1b[1mbold\x1b[m", "\x1b[38;5;203mred\x1b[0m and \x1b[48;2;1;2;3mbg\x1b[m",
	"\x1b[38:2::1:2:3mcolon\x1b[m", "tab\there", "bell\a", "del\x7f",
	"日本語", "e\u0301", "👍🏽 ok", "\x1b]8;;https://x.dev\x07link\x1b]8;;\x07",
	"cut \x1b[", "cut \x1b[38;5", "\x1b", "\x1bX", "mixed \x1b[1mé\x1b[m",
	"│ box ─", "\x1b[?25l", "\x1b[2K\x1b[1G", "\x1b[1;31;42m  padded  \x1b[m   ",
}

func TestTextWidthMatchesStringWidth(t *testing.T) {
	t.Parallel()
	for _, s := range widthCases {
		if got, want := textWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, ansi.StringWidth = %d", s, got, want)
		}
	}
}

func FuzzTextWidth(f *testing.F) {
	for _, s := range widthCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := textWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, ansi.StringWidth = %d", s, got, want)
		}
	})
}

func BenchmarkTextWidth(b *testing.B) {
	line := "\x1b[38;5;252m  The handler in \x1b[38;5;203mserver/handler.go\x1b[38;5;252m parses the request and writes the reply.\x1b[m"
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			_ = textWidth(line)
		}
	})
	b.Run("ansi", func(b *testing.B) {
		for b.Loop() {
			_ = ansi.StringWidth(line)
		}
	})
}

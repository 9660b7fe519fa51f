package tui

import (
	"strings"
	"testing"
	"unicode"
)

func joinSegments(lines [][]segment) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, s := range l {
			b.WriteString(s.text)
		}
	}
	return b.String()
}

func TestEscapeCommand(t *testing.T) {
	cases := []struct{ in, want, report string }{
		{"ls -la", "ls -la", ""},
		{"printf 'a\tb'", `printf 'a\tb'`, ""},
		{"echo \x1b[31mred", `echo \x1b[31mred`, "1 control character"},
		{"a\rb", `a\rb`, "1 control character"},
		{"x\u202ey", "x⟨U+202E RLO⟩y", "1 bidirectional override"},
		{"rm\u200b -rf", "rm⟨U+200B ZWSP⟩ -rf", "1 invisible character"},
		{"a" + strings.Repeat(" ", 9) + "b", "a⟨9 blanks⟩b", "1 long run of blanks"},
		{"a\u00a0b", "a⟨U+00A0⟩b", "1 invisible character"},
		{"one\ntwo", "one\\n\ntwo", ""},
		{"bad\xffbyte", `bad\xffbyte`, "1 control character"},
	}
	for _, c := range cases {
		lines, rep := escapeCommand(c.in)
		if got := joinSegments(lines); got != c.want {
			t.Errorf("escapeCommand(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.report == "" && rep.any() || c.report != "" && !strings.Contains(rep.summary(), c.report) {
			t.Errorf("escapeCommand(%q) report %q, want %q", c.in, rep.summary(), c.report)
		}
	}
}

// FuzzEscape checks that nothing a runtime sends can put a control, bidi
// or invisible character on the screen through the permission dialog or
// the transcript.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "ls", "\x1b[2K\r\u202e", "a\x00b\x7f\u0085\u2066\ufeff", "\xff\xfe", strings.Repeat(" ", 100) + "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines, _ := escapeCommand(s)
		for _, l := range lines {
			for _, seg := range l {
				for _, r := range seg.text {
					if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidiNames[r] != "" || invisibleNames[r] != "" {
						t.Fatalf("escapeCommand(%q) let %U through", s, r)
					}
					if !seg.marked && !unicode.IsPrint(r) && r != ' ' {
						t.Fatalf("escapeCommand(%q) left unprintable %U unmarked", s, r)
					}
				}
			}
		}
		for _, r := range sanitize(s) {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidiNames[r] != "" {
				t.Fatalf("sanitize(%q) let %U through", s, r)
			}
		}
	})
}

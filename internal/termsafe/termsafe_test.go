package termsafe

import (
	"testing"
	"unicode/utf8"
)

func TestLineEscapesWhatATerminalWouldObey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain title", "plain title"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\x07`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"rlo \u202eevil", `rlo \u202eevil`},
	} {
		got := Line(c.in)
		if got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Line(%q) is not UTF-8", c.in)
		}
		for _, b := range []byte(got) {
			if b < 0x20 || b == 0x7f || b == 0xff {
				t.Errorf("Line(%q) = %q still holds byte %#x", c.in, got, b)
			}
		}
	}
}

// TestTextKeepsLayoutAndEscapesSequences: running text keeps its newlines
// and tabs, while an OSC 52 clipboard write, a title change, a carriage
// return, DEL, a C1 CSI and a byte that is not UTF-8 are shown visibly.
func TestTextKeepsLayoutAndEscapesSequences(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n\tindented é":              "plain\n\tindented é",
		"copy \x1b]52;c;ZXZpbA==\x07 done": `copy \x1b]52;c;ZXZpbA==\x07 done`,
		"\x1b]0;owned\x07title\rover\x7f":  `\x1b]0;owned\x07title\rover\x7f`,
		"c1 \u009b31m and \xff":            `c1 \u009b31m and ` + "\uFFFD",
		"שלום \u200f":                      "שלום \u200f",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

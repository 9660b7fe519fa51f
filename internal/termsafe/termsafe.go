// Package termsafe makes untrusted text safe to print on a terminal from
// kz's command line (the TUI has its own, richer escaping in tui/escape.go).
// Session titles and prompts are whatever a person or a script typed, and
// may hold escape sequences that would move the cursor, recolour or rewrite
// the screen, or bytes that are not UTF-8 (0xFF is also text/tabwriter's
// escape character and breaks a table's columns).
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line returns s for one line of a table or a "key value" listing: every
// control character (newlines and tabs included, since either would break
// the layout) is shown visibly as an escape like \x1b or \n, as are the
// Unicode bidirectional overrides that make a terminal show text in
// another order; bytes that are not UTF-8 become U+FFFD. Plain text is
// returned as it is, without copying.
func Line(s string) string { return escape(s, false) }

// Text returns s for printing as running text, such as a model's answer:
// like Line, but newlines and tabs are kept, since they are the text's own
// layout, and the bidirectional formatting characters too, which
// right-to-left prose uses and which move no cursor. Every other control
// character (C0, DEL, C1; \r included, which would let text overwrite the
// line before it) is shown visibly, so an escape sequence in the text
// (a window title, an OSC 52 clipboard write) prints as \x1b]52;… instead
// of acting on the terminal. Bytes that are not UTF-8 become U+FFFD.
func Text(s string) string { return escape(s, true) }

// escape is Line (layout false) or Text (layout true). Plain text is
// returned as it is, without copying.
func escape(s string, layout bool) string {
	if clean(s, layout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case !unsafe(r, size, layout):
			b.WriteString(s[i : i+size])
		case r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default: // C1 controls, and bidi overrides in a line
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// clean reports whether escape has nothing to change in s; ASCII text
// without controls, the common case, is checked a byte at a time.
func clean(s string, layout bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			for j := i; j < len(s); {
				r, size := utf8.DecodeRuneInString(s[j:])
				if unsafe(r, size, layout) {
					return false
				}
				j += size
			}
			return true
		}
		if unsafe(rune(c), 1, layout) {
			return false
		}
	}
	return true
}

// unsafe reports whether the rune r (size bytes of the input) must be
// shown escaped: bytes that are not UTF-8, C0 controls (but newline and
// tab in running text), DEL, C1 controls, and in a line the bidirectional
// formatting characters.
func unsafe(r rune, size int, layout bool) bool {
	switch {
	case r == utf8.RuneError && size <= 1:
		return true
	case layout && (r == '\n' || r == '\t'):
		return false
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	}
	return !layout && isBidi(r)
}

// isBidi reports the Unicode bidirectional formatting characters
// (CVE-2021-42574, "Trojan Source").
func isBidi(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

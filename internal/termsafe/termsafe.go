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
func Line(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Text returns s for printing as running text, such as a model's answer:
// like Line, but newlines and tabs are kept, since they are the text's own
// layout, and the bidirectional formatting characters too, which
// right-to-left prose uses and which move no cursor. Every other control
// character (C0, DEL, C1; \r included, which would let text overwrite the
// line before it) is shown visibly, so an escape sequence in the text
// (a window title, an OSC 52 clipboard write) prints as \x1b]52;… instead
// of acting on the terminal. Bytes that are not UTF-8 become U+FFFD.
func Text(s string) string {
	if textClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// textClean reports whether Text has nothing to escape in s.
func textClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			for j := i; j < len(s); {
				r, size := utf8.DecodeRuneInString(s[j:])
				if (r == utf8.RuneError && size <= 1) || (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) {
					return false
				}
				j += size
			}
			return true
		}
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// clean reports whether s needs no escaping.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return onlySafeUnicode(s[i:])
		}
	}
	return true
}

func onlySafeUnicode(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || r < 0x20 || (r >= 0x7f && r < 0xa0) || isBidi(r) {
			return false
		}
		i += size
	}
	return true
}

// isBidi reports the Unicode bidirectional formatting characters
// (CVE-2021-42574, "Trojan Source").
func isBidi(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

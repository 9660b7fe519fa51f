package tui

import "github.com/charmbracelet/x/ansi"

// textWidth is the number of terminal cells s takes, as ansi.StringWidth
// counts them, with a fast path for the common case: printable ASCII,
// possibly styled with CSI sequences (colours, bold). ansi.StringWidth
// runs every string through a grapheme segmenter and an escape-sequence
// parser; for ASCII each byte is one cell, so counting bytes outside the
// sequences gives the same answer at a fraction of the cost. Anything
// else (a byte of a multi-byte character, a control character, another
// kind of escape sequence) takes the exact path.
func textWidth(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			end := csiEnd(s, i+2)
			if end < 0 {
				return ansi.StringWidth(s)
			}
			i = end
		default:
			return ansi.StringWidth(s)
		}
	}
	return n
}

// csiEnd returns the index of the final byte of a CSI sequence whose
// parameters start at i, or -1 when the sequence is not a plain one:
// digits, ';' and ':' only, then a final byte in 0x40–0x7e. Private
// markers and intermediate bytes, which the parser treats in ways of its
// own, take the exact path.
func csiEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= ';':
		case c >= 0x40 && c <= 0x7e:
			return i
		default:
			return -1
		}
	}
	return -1
}

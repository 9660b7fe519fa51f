package ansi

// kz fork: this file is not in upstream glamour.

import (
	"bytes"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// WrapText is lipgloss.Wrap, byte for byte: s wrapped at width (breaking
// also after the given characters) with the pen reset and restored around
// each newline, without the final reset the writer's Close would add. It
// is exported for the fork's tests, which hold it to lipgloss.Wrap.
//
// Every block glamour renders goes through it, its children's lines
// included, and those lines are already wrapped and padded to the block's
// width: the document's own call gets the whole rendered answer, mostly
// padding, each column a styled space. Both of lipgloss.Wrap's steps are
// the identity on such text, and WrapText finds that out with one plain
// scan each instead of running them:
//
//   - ansi.Wrap changes a line only when it is wider than width, and lines
//     of text and SGR sequences are wrapped independently of each other
//     (see wrapLines), so such a line that fits is kept as it is and only
//     the other lines are wrapped.
//   - The pen step writes a reset before and a restore after a newline
//     only when the pen (the SGR style and hyperlink in effect) is set
//     there; penClearAtNewlines shows it is not, or the step is run.
func WrapText(s string, width int, breakpoints string) string {
	return wrapText(s, width, breakpoints)
}

func wrapText(s string, width int, breakpoints string) string {
	s = wrapLines(s, width, breakpoints)
	if penClearAtNewlines(s) {
		return s
	}
	var buf bytes.Buffer
	buf.Grow(len(s) + len(s)/8)
	w := newWrapWriter(&buf)
	_, _ = io.WriteString(w, s)
	out := buf.String()
	ansi.PutParser(w.p)
	w.p = nil
	return out
}

// wrapLines is ansi.Wrap(s, width, breakpoints).
//
// ansi.Wrap carries nothing over a newline except the state of its ANSI
// parser: at a newline it flushes its word and its spaces exactly as it
// does at the end of the text, and starts the next line with an empty line,
// word and space. A line that is valid UTF-8 and whose only escape
// sequences are complete SGR sequences (see scanLine) leaves the parser in
// its ground state, where the next line then starts as at the beginning of
// a text. So when every line is such a line, wrapping s is wrapping each
// line alone and joining them with newlines; and a line of printable ASCII
// no wider than width is kept by ansi.Wrap as it is (nothing in it reaches
// the width that makes ansi.Wrap break, drop spaces or add a newline), and
// so is a line with other text whose width, measured as ansi.Wrap measures
// it, fits (see wrapWidth). When any line is not such a line, the whole
// text is left to ansi.Wrap.
func wrapLines(s string, width int, breakpoints string) string {
	if width < 1 {
		return s
	}
	fits := true
	for rest := s; ; {
		line, tail, more := strings.Cut(rest, "\n")
		switch kind, w := scanLine(line); kind {
		case otherLine:
			return ansi.Wrap(s, width, breakpoints)
		case utf8Line:
			fits = fits && wrapFits(line, width)
		default:
			fits = fits && w <= width
		}
		if !more {
			break
		}
		rest = tail
	}
	if fits {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	for rest := s; ; {
		line, tail, more := strings.Cut(rest, "\n")
		if kind, w := scanLine(line); kind == asciiLine && w <= width || kind == utf8Line && wrapFits(line, width) {
			b.WriteString(line)
		} else {
			b.WriteString(ansi.Wrap(line, width, breakpoints))
		}
		if !more {
			break
		}
		b.WriteByte('\n')
		rest = tail
	}
	return b.String()
}

// wrapFits reports that ansi.Wrap keeps a utf8Line as it is at width: its
// width as ansi.Wrap counts it is no more than width. ansi.Wrap counts a
// printable ASCII byte as one column and, at a non-ASCII byte, takes the
// grapheme cluster that starts there at its grapheme width; it keeps every
// byte of the line in order unless the count passes width, with one
// exception: of a cluster that starts with a Unicode space it keeps only
// that space, so a line with such a cluster of more than one rune is not
// kept.
func wrapFits(line string, width int) bool {
	w := 0
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c < utf8.RuneSelf && c != ansi.ESC:
			w++
			i++
		case c == ansi.ESC:
			i += sgrLen(line[i:])
		default:
			cluster, cw := ansi.FirstGraphemeCluster(line[i:], ansi.GraphemeWidth)
			if r, size := utf8.DecodeRuneInString(cluster); size < len(cluster) && r != nbsp && unicode.IsSpace(r) {
				return false
			}
			w += cw
			i += len(cluster)
		}
		if w > width {
			return false
		}
	}
	return true
}

// nbsp is the no-break space, which ansi.Wrap does not take for a space.
const nbsp = 0xA0

// stringWidth is ansi.StringWidth of a utf8Line or an asciiLine (see
// scanLine), counted as ansi.StringWidth counts it, without a copy: the
// grapheme cluster starting at each printable byte, at its grapheme width.
// A printable ASCII byte followed by another ASCII byte, an escape
// sequence or the end is a cluster of its own, one column wide.
func stringWidth[T string | []byte](line T) int {
	w := 0
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ansi.ESC:
			i += sgrLen(line[i:])
		case c < utf8.RuneSelf && (i+1 == len(line) || line[i+1] < utf8.RuneSelf):
			w++
			i++
		default:
			cluster, cw := ansi.FirstGraphemeCluster(line[i:], ansi.GraphemeWidth)
			w += cw
			i += len(cluster)
		}
	}
	return w
}

// lineKind classifies a line for wrapLines.
type lineKind int

const (
	// asciiLine holds printable ASCII and complete SGR sequences only.
	asciiLine lineKind = iota
	// utf8Line is valid UTF-8 with non-ASCII text and, as escape
	// sequences, complete SGR sequences only.
	utf8Line
	// otherLine holds anything else: controls, DEL, other escape
	// sequences, an SGR sequence cut short, invalid UTF-8.
	otherLine
)

// scanLine classifies a line (without its newline) and, for an asciiLine,
// returns its width: its printable bytes outside SGR sequences, which is
// how ansi.Wrap measures it.
func scanLine[T string | []byte](line T) (lineKind, int) {
	kind, width := asciiLine, 0
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			width++
			i++
		case c == ansi.ESC:
			n := sgrLen(line[i:])
			if n == 0 {
				return otherLine, 0
			}
			i += n
		case c >= utf8.RuneSelf:
			n := runeLen(line[i:])
			if n == 0 {
				return otherLine, 0
			}
			kind = utf8Line
			i += n
		default:
			return otherLine, 0
		}
	}
	return kind, width
}

// sgrLen returns the length of the SGR sequence of digits and semicolons
// ("\x1b[38;5;252m", "\x1b[m") at the start of s, or 0 if s does not
// start with one.
func sgrLen[T string | []byte](s T) int {
	if len(s) < 3 || s[0] != ansi.ESC || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case (c < '0' || c > '9') && c != ';':
			return 0
		}
	}
	return 0
}

// penClearAtNewlines reports that the pen is certainly not set at any
// newline of s, written from the start to a new wrapWriter (see penClear).
func penClearAtNewlines(s string) bool {
	return penClear(s, false)
}

// penClear reports that a wrapWriter whose pen is not set and whose parser
// is in its ground state, given s, certainly finds the pen not set at any
// newline of s and, with atEnd, at its end: s holds no escape sequence but
// SGR sequences, no control but newlines, no invalid UTF-8, and the last
// SGR sequence before each newline (and before the end), if any, is a full
// reset ("\x1b[m" or "\x1b[0m"). Such a writer adds nothing at the
// newlines, writes s as it is, and ends with its pen not set and its
// parser in its ground state. False means it may not: the writer has to
// look at every sequence.
func penClear[T string | []byte](s T, atEnd bool) bool {
	set := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			i++
		case c == '\n':
			if set {
				return false
			}
			i++
		case c == ansi.ESC:
			n := sgrLen(s[i:])
			if n == 0 {
				return false
			}
			set = !isReset(s[i : i+n])
			i += n
		case c >= utf8.RuneSelf:
			n := runeLen(s[i:])
			if n == 0 {
				return false
			}
			i += n
		default:
			return false
		}
	}
	return !atEnd || !set
}

// runeLen returns the length of the valid UTF-8 encoding of a rune at the
// start of s, or 0 if s does not start with one.
func runeLen[T string | []byte](s T) int {
	var r rune
	var size int
	switch v := any(s).(type) {
	case string:
		r, size = utf8.DecodeRuneInString(v)
	case []byte:
		r, size = utf8.DecodeRune(v)
	}
	if r == utf8.RuneError && size <= 1 {
		return 0
	}
	return size
}

// isReset reports whether an SGR sequence resets the whole pen style.
func isReset[T string | []byte](seq T) bool {
	return string(seq) == "\x1b[m" || string(seq) == "\x1b[0m"
}

package store

import (
	"sort"
	"strings"
)

// textView is persisted text as the rules read it: with JSON string
// escapes decoded. Most of what kz persists is JSON, where a newline is
// the two characters \n, a quote is \" and "<" is \u003c; rules written
// for plain text (gitleaks' among them) would see no word boundary
// between that n and a key that starts the next line, and no quote around
// a JSON value inside a JSON string. Decoding once lets every rule see
// the text a person would, and each match found in the view is mapped
// back to whole escapes of the raw text, so a replacement never cuts an
// escape in half and the JSON stays valid.
type textView struct {
	raw, text string
	// esc lists the decoded escapes in order: where each starts in text
	// (v) and in raw (r), and how long it is in each.
	esc []viewEscape
}

type viewEscape struct {
	v, r       int
	vlen, rlen int
}

// newTextView decodes raw's JSON escapes. Text without a backslash is
// its own view; a backslash that starts no valid escape is kept as is.
func newTextView(raw string) *textView {
	tv := &textView{raw: raw, text: raw}
	if strings.IndexByte(raw, '\\') < 0 {
		return tv
	}
	var b strings.Builder
	b.Grow(len(raw))
	last := 0
	for i := 0; i < len(raw); {
		j := strings.IndexByte(raw[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		dec, n := decodeEscape(raw[i:])
		if n == 0 {
			i++
			continue
		}
		b.WriteString(raw[last:i])
		tv.esc = append(tv.esc, viewEscape{v: b.Len(), r: i, vlen: len(dec), rlen: n})
		b.WriteString(dec)
		i += n
		last = i
	}
	b.WriteString(raw[last:])
	tv.text = b.String()
	return tv
}

// decodeEscape decodes the JSON escape s starts with and says how many
// bytes of s it took; 0 when s starts no valid escape.
func decodeEscape(s string) (string, int) {
	if len(s) < 2 {
		return "", 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return s[1:2], 2
	case 'n':
		return "\n", 2
	case 't':
		return "\t", 2
	case 'r':
		return "\r", 2
	case 'b':
		return "\b", 2
	case 'f':
		return "\f", 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return "", 0
		}
		n := 6
		if 0xD800 <= r && r < 0xDC00 {
			// A surrogate pair is one character.
			lo, ok := hex4(strings.TrimPrefix(s[6:], `\u`))
			if !ok || !strings.HasPrefix(s[6:], `\u`) || lo < 0xDC00 || lo > 0xDFFF {
				return "", 0
			}
			r, n = 0x10000+(r-0xD800)<<10+(lo-0xDC00), 12
		} else if 0xDC00 <= r && r <= 0xDFFF {
			return "", 0
		}
		return string(rune(r)), n
	}
	return "", 0
}

func hex4(s string) (int, bool) {
	if len(s) < 4 {
		return 0, false
	}
	r := 0
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// rawStart is where in raw the view byte at v comes from: the start of
// its escape when it was decoded from one.
func (tv *textView) rawStart(v int) int {
	k := sort.Search(len(tv.esc), func(i int) bool { return tv.esc[i].v > v }) - 1
	if k < 0 {
		return v
	}
	e := tv.esc[k]
	if v < e.v+e.vlen {
		return e.r
	}
	return v + (e.r + e.rlen) - (e.v + e.vlen)
}

// rawEnd is the raw position that ends a view span ending at v: after
// the whole escape when v falls inside one.
func (tv *textView) rawEnd(v int) int {
	k := sort.Search(len(tv.esc), func(i int) bool { return tv.esc[i].v >= v }) - 1
	if k < 0 {
		return v
	}
	e := tv.esc[k]
	if v < e.v+e.vlen {
		return e.r + e.rlen
	}
	return v + (e.r + e.rlen) - (e.v + e.vlen)
}

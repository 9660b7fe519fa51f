package patch

import (
	"bytes"
	"slices"
	"strings"
)

// doc is a file's content as lines plus everything needed to write it back
// byte for byte: each line's own terminator, the byte order mark, and the
// dominant line ending used for lines an edit introduces.
type doc struct {
	lines    []string
	eols     []string // "\n", "\r\n", or "" for a last line without newline
	bom      bool
	dominant string
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func parseDoc(b []byte) *doc {
	d := &doc{dominant: "\n"}
	if bytes.HasPrefix(b, utf8BOM) {
		d.bom = true
		b = b[len(utf8BOM):]
	}
	s := string(b)
	crlf, lf := 0, 0
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			d.lines = append(d.lines, s)
			d.eols = append(d.eols, "")
			break
		}
		line, eol := s[:i], "\n"
		if i > 0 && s[i-1] == '\r' {
			line, eol = s[:i-1], "\r\n"
			crlf++
		} else {
			lf++
		}
		d.lines = append(d.lines, line)
		d.eols = append(d.eols, eol)
		s = s[i+1:]
	}
	if crlf > lf {
		d.dominant = "\r\n"
	}
	return d
}

// finalNewline reports whether the content ends with a line terminator (an
// empty file counts as ending with one, so appended lines get terminators).
func (d *doc) finalNewline() bool {
	return len(d.eols) == 0 || d.eols[len(d.eols)-1] != ""
}

func (d *doc) bytes() []byte {
	n := 0
	if d.bom {
		n += len(utf8BOM)
	}
	for i := range d.lines {
		n += len(d.lines[i]) + len(d.eols[i])
	}
	out := make([]byte, 0, n)
	if d.bom {
		out = append(out, utf8BOM...)
	}
	for i := range d.lines {
		out = append(out, d.lines[i]...)
		out = append(out, d.eols[i]...)
	}
	return out
}

// splice replaces lines[start:start+n] with repl. from[k] >= 0 names the
// original line whose terminator line k keeps; new lines get the dominant
// ending. The file's trailing-newline state is kept: if the old last line
// had no terminator, the new last line has none either.
func (d *doc) splice(start, n int, repl []string, from []int) {
	hadFinal := d.finalNewline()
	newEOLs := make([]string, len(repl))
	for k := range repl {
		if from != nil && from[k] >= 0 && d.eols[from[k]] != "" {
			newEOLs[k] = d.eols[from[k]]
		} else {
			newEOLs[k] = d.dominant
		}
	}
	d.lines = slices.Replace(d.lines, start, start+n, repl...)
	d.eols = slices.Replace(d.eols, start, start+n, newEOLs...)
	// Only the line before the splice and the spliced lines can have lost
	// their terminator (a former last line that is no longer last).
	for i := max(start-1, 0); i < min(start+len(repl)+1, len(d.eols)-1); i++ {
		if d.eols[i] == "" {
			d.eols[i] = d.dominant
		}
	}
	if len(d.eols) > 0 {
		last := len(d.eols) - 1
		if !hadFinal {
			d.eols[last] = ""
		} else if d.eols[last] == "" {
			d.eols[last] = d.dominant
		}
	}
}

// contentDoc converts model-written whole-file content (LF) into the
// conventions of an existing file: its BOM, its dominant line ending and
// its trailing-newline state. For a new file, base is nil and the content
// is written as given.
func contentDoc(content string, base *doc) *doc {
	d := parseDoc([]byte(content))
	if base == nil {
		return d
	}
	d.bom = d.bom || base.bom
	d.dominant = base.dominant
	for i := range d.eols {
		if d.eols[i] != "" {
			d.eols[i] = base.dominant
		}
	}
	if len(d.eols) > 0 {
		if base.finalNewline() {
			d.eols[len(d.eols)-1] = base.dominant
		} else {
			d.eols[len(d.eols)-1] = ""
		}
	}
	return d
}

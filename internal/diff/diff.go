// Package diff is kz's one model of a unified diff: the File and Hunk
// values, the generator that computes them from two contents (Hunks,
// Unified), the writer (Format), the parser (Parse) and what works on hunks
// (Apply, Reverse, Stat). Every package that shows, stores or applies a
// diff goes through it: the tools' previews, patch's review and partial
// apply, the TUI's review. One model keeps them in step: a hunk the review
// shows as the second one is the second one patch applies, because the
// text between them is Format's output read back by Parse.
package diff

import (
	"strconv"
	"strings"
)

// DevNull names the missing side of a created or deleted file.
const DevNull = "/dev/null"

// Op says what a line of a hunk does.
type Op byte

// The three kinds of hunk line, as a unified diff marks them.
const (
	Context Op = ' '
	Add     Op = '+'
	Delete  Op = '-'
)

// Line is one line of a hunk. Text is the line's exact bytes with its
// line ending ("\n" or "\r\n"), so a file rebuilt from hunks is the same
// byte for byte; only a file's last line may have none, which a unified
// diff writes as "\ No newline at end of file".
type Line struct {
	Op   Op
	Text string
}

// EOL is the line's ending: "\r\n", "\n", or "" for a last line without
// one.
func (l Line) EOL() string {
	switch {
	case strings.HasSuffix(l.Text, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l.Text, "\n"):
		return "\n"
	}
	return ""
}

// Content is the line without its ending.
func (l Line) Content() string { return l.Text[:len(l.Text)-len(l.EOL())] }

// Hunk is one @@ section: where it is in each side and its lines.
type Hunk struct {
	// OldStart, OldLines, NewStart and NewLines are the header's numbers:
	// 1-based first lines and line counts. A side without lines (a pure
	// insertion or removal) starts at the line it follows, 0 at the top.
	OldStart, OldLines int
	NewStart, NewLines int
	// Header is the @@ line without its ending, as the parsed text wrote
	// it or as Format writes it; "" for a hunk read without one (a
	// headerless diff), which Format writes with its numbers.
	Header string
	Lines  []Line
	// Src is where Parse read the hunk; zero for a computed hunk.
	Src Source
}

// Source says where a parsed hunk was in the text and how it read, for a
// caller that reports problems by line (a proposal's feedback).
type Source struct {
	// Line and EndLine are the 1-based lines of the @@ header (of the
	// first line for a headerless hunk) and of the hunk's last line.
	Line, EndLine int
	// BadHeader says the @@ line did not parse; the hunk's numbers are
	// then zero.
	BadHeader bool
	// Truncated says the text ended before the hunk had the lines its
	// header counts: the diff was cut off.
	Truncated bool
}

// Stat counts the hunk's added and removed lines.
func (h Hunk) Stat() (added, removed int) {
	for _, l := range h.Lines {
		switch l.Op {
		case Add:
			added++
		case Delete:
			removed++
		}
	}
	return added, removed
}

// OldSpan is the hunk's old side as its lines say: the 0-based index of
// its first line in the old content and how many lines it has. An empty
// side is where the hunk's new lines go: after the line the header names.
func (h Hunk) OldSpan() (start, n int) { return h.span(Delete, h.OldStart) }

// NewSpan is the same for the new side.
func (h Hunk) NewSpan() (start, n int) { return h.span(Add, h.NewStart) }

func (h Hunk) span(side Op, headerStart int) (start, n int) {
	for _, l := range h.Lines {
		if l.Op == Context || l.Op == side {
			n++
		}
	}
	if n > 0 {
		return headerStart - 1, n
	}
	return headerStart, 0
}

// Reverse returns the hunk that undoes h: its sides swapped, what it added
// removed and what it removed added. A header that parsed keeps its text,
// its two ranges swapped.
func (h Hunk) Reverse() Hunk {
	r := Hunk{OldStart: h.NewStart, OldLines: h.NewLines, NewStart: h.OldStart, NewLines: h.OldLines, Src: h.Src}
	r.Lines = make([]Line, len(h.Lines))
	for i, l := range h.Lines {
		switch l.Op {
		case Add:
			l.Op = Delete
		case Delete:
			l.Op = Add
		}
		r.Lines[i] = l
	}
	if hd, ok := parseHeader(h.Header); ok {
		r.Header = "@@ -" + hd.newRange + " +" + hd.oldRange + " @@" + hd.rest
	}
	return r
}

// File is one file of a unified diff.
type File struct {
	// OldPath and NewPath are the two sides' paths without git's a/ and b/
	// prefixes, DevNull for a created or deleted file's missing side; ""
	// when the diff does not say (a headerless diff).
	OldPath, NewPath string
	// Git's extended headers, as written ("100644"), "" when absent.
	OldMode, NewMode             string
	NewFileMode, DeletedFileMode string
	RenameFrom, RenameTo         string
	// Binary says the diff only notes that the file differs in content
	// it does not show.
	Binary bool
	Hunks  []Hunk
	// HeaderLine and BinaryLine are the 1-based lines of the file's
	// ---/+++ pair (of its "---") and of its binary notice in the parsed
	// text; 0 when it has none.
	HeaderLine, BinaryLine int
}

// Stat counts the file's added and removed lines.
func (f File) Stat() (added, removed int) {
	for _, h := range f.Hunks {
		a, r := h.Stat()
		added += a
		removed += r
	}
	return added, removed
}

// Reverse returns the file's diff undone: paths, modes and hunks swapped.
func (f File) Reverse() File {
	r := f
	r.OldPath, r.NewPath = f.NewPath, f.OldPath
	r.OldMode, r.NewMode = f.NewMode, f.OldMode
	r.NewFileMode, r.DeletedFileMode = f.DeletedFileMode, f.NewFileMode
	r.RenameFrom, r.RenameTo = f.RenameTo, f.RenameFrom
	r.Hunks = make([]Hunk, len(f.Hunks))
	for i, h := range f.Hunks {
		r.Hunks[i] = h.Reverse()
	}
	return r
}

// Reverse undoes a unified diff: what it added it removes. Line numbers of
// the old side become the new side's.
func Reverse(text string) string {
	var b strings.Builder
	for _, f := range Parse(text) {
		b.WriteString(Format(f.Reverse()))
	}
	return b.String()
}

// header is a parsed @@ line: its two ranges as written ("3" or "3,4")
// and what follows the closing @@ (a function name, with its space).
type header struct {
	oldStart, oldLines, newStart, newLines int
	oldRange, newRange, rest               string
}

// parseHeader reads "@@ -a,b +c,d @@ rest"; a count left out is 1.
func parseHeader(l string) (header, bool) {
	body, ok := strings.CutPrefix(l, "@@ -")
	if !ok {
		return header{}, false
	}
	end := strings.Index(body, " @@")
	if end < 0 {
		return header{}, false
	}
	fields := strings.Fields(body[:end])
	if len(fields) != 2 || !strings.HasPrefix(fields[1], "+") {
		return header{}, false
	}
	h := header{oldRange: fields[0], newRange: fields[1][1:], rest: body[end+len(" @@"):]}
	var ok1, ok2 bool
	h.oldStart, h.oldLines, ok1 = parseRange(h.oldRange)
	h.newStart, h.newLines, ok2 = parseRange(h.newRange)
	return h, ok1 && ok2
}

func parseRange(s string) (start, n int, ok bool) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	n = 1
	if hasCount {
		if n, err = strconv.Atoi(b); err != nil || n < 0 {
			return 0, 0, false
		}
	}
	return start, n, true
}

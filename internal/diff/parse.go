package diff

import (
	"strconv"
	"strings"
)

// Parse reads the unified diffs of one or more files, git's or plain. It
// never fails: whatever a runtime or a model wrote is read as far as it
// is a diff, so a review can show it, and what a strict reader must
// refuse (a cut-off hunk, a bad header, a binary file, a hunk without
// ---/+++) is recorded on the values, with its line, for it to check.
//
// The rules, which patch's proposal reader and the TUI's review share:
//   - A file starts at "diff --git", at a ---/+++ pair, or at a rename
//     header once the current file has @@ hunks; a ---/+++ pair or git's
//     extended headers before them belong to the current file. Extended
//     headers after a file's hunks describe the next file.
//   - A hunk starts at "@@ -" and holds the lines that follow and start
//     with ' ', '-', '+' or '\', or are empty (a blank context line whose
//     space was dropped). It ends at any other line, and at a ---/+++ pair
//     once it has all the lines its header counts (before that the pair
//     is a removed and an added line). Empty lines at its end beyond its
//     counts are separators, not context.
//   - Diff lines outside any hunk form a headerless hunk (Header "", at
//     line 1 of both sides); lines that are no diff are skipped.
//   - A header line may end in CR; a hunk's lines keep their bytes.
func Parse(text string) []File {
	p := parser{lines: splitLines(text)}
	p.run()
	return p.files
}

// FileHunks reads the hunks of one file's diff (an engine.FileChange's
// Diff), in order, over every file Parse finds in it. A hunk selection
// (engine.FileSelection.Hunks) indexes this list: the review numbers the
// hunks it shows with it and patch applies the ones kept from it, both
// reading the same text, so that hunk i is the same hunk on both sides by
// construction.
func FileHunks(text string) []Hunk {
	var hunks []Hunk
	for _, f := range Parse(text) {
		hunks = append(hunks, f.Hunks...)
	}
	return hunks
}

// splitLines splits text after each "\n"; the last line may have none.
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

type parser struct {
	lines []string
	files []File
	// pending holds extended headers read after a file's hunks, without
	// a "diff --git" first: they describe the next file.
	pending [][2]string
}

// cur is the file headers and hunks go to, nil before the first.
func (p *parser) cur() *File {
	if len(p.files) == 0 {
		return nil
	}
	return &p.files[len(p.files)-1]
}

func (p *parser) newFile() *File {
	p.files = append(p.files, File{})
	f := p.cur()
	for _, h := range p.pending {
		f.setHeader(h[0], h[1])
	}
	p.pending = nil
	return f
}

// open says whether f still takes headers: it has no @@ hunk and no
// binary notice yet. Diff lines read before (a headerless hunk) do not
// close it.
func (f *File) open() bool {
	if f == nil || f.Binary {
		return false
	}
	for _, h := range f.Hunks {
		if h.Header != "" {
			return false
		}
	}
	return true
}

// headerText is a line as a header reads it: without its ending.
func headerText(l string) string {
	l = strings.TrimSuffix(l, "\n")
	return strings.TrimSuffix(l, "\r")
}

func (p *parser) run() {
	for i := 0; i < len(p.lines); i++ {
		l := headerText(p.lines[i])
		cur := p.cur()
		switch {
		case strings.HasPrefix(l, "diff --git "):
			p.pending = nil
			f := p.newFile()
			if a, b, ok := strings.Cut(strings.TrimPrefix(l, "diff --git "), " b/"); ok {
				f.OldPath, f.NewPath = strings.TrimPrefix(a, "a/"), b
			}
		case p.pairAt(i):
			if !cur.open() || cur.HeaderLine > 0 {
				cur = p.newFile()
			}
			cur.OldPath, cur.NewPath = stripGitPrefixes(headerPath(l[4:]), headerPath(headerText(p.lines[i+1])[4:]))
			cur.HeaderLine = i + 1
			i++
		case strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch"):
			if cur == nil {
				cur = p.newFile()
			}
			if !cur.Binary {
				cur.Binary, cur.BinaryLine = true, i+1
			}
		case strings.HasPrefix(l, "@@ -"):
			if cur == nil {
				cur = p.newFile()
			}
			i = p.hunk(cur, i, l) - 1
		default:
			if name, value, ok := extendedHeader(l); ok {
				switch {
				case cur.open():
					cur.setHeader(name, value)
				case strings.HasPrefix(name, "rename "):
					// A rename is a file of its own, with or without
					// a ---/+++ pair after it.
					p.newFile().setHeader(name, value)
				default:
					p.pending = append(p.pending, [2]string{name, value})
				}
				continue
			}
			if l == "" || !strings.ContainsRune(" -+", rune(l[0])) {
				continue // not a diff line: prose, or what this reader does not know
			}
			if cur == nil {
				cur = p.newFile()
			}
			i = p.hunk(cur, i, "") - 1
		}
	}
}

// pairAt says whether lines i and i+1 are a ---/+++ file header.
func (p *parser) pairAt(i int) bool {
	return strings.HasPrefix(p.lines[i], "--- ") && i+1 < len(p.lines) && strings.HasPrefix(p.lines[i+1], "+++ ")
}

// hunk reads the hunk at line i into f and returns the index of the line
// after it. header is its @@ line, "" for a headerless hunk, which starts
// at line i itself.
func (p *parser) hunk(f *File, i int, header string) int {
	h := Hunk{Header: header, Src: Source{Line: i + 1}}
	j := i
	if header != "" {
		hd, ok := parseHeader(header)
		h.OldStart, h.OldLines, h.NewStart, h.NewLines = hd.oldStart, hd.oldLines, hd.newStart, hd.newLines
		h.Src.BadHeader = !ok
		if !ok {
			h.OldStart, h.OldLines, h.NewStart, h.NewLines = 0, 0, 0, 0
		}
		j++
	}
	seenOld, seenNew := 0, 0
lines:
	for ; j < len(p.lines); j++ {
		raw := p.lines[j]
		if p.pairAt(j) && seenOld >= h.OldLines && seenNew >= h.NewLines {
			break
		}
		body := strings.TrimSuffix(raw, "\n")
		switch {
		case blankLine(raw):
			h.Lines = append(h.Lines, Line{Context, withEOL(raw)})
			seenOld++
			seenNew++
		case body[0] == '\\':
			// "\ No newline at end of file": the line before has none.
			if n := len(h.Lines); n > 0 && strings.HasPrefix(body, `\ `) {
				h.Lines[n-1].Text = strings.TrimSuffix(h.Lines[n-1].Text, "\n")
			}
		case body[0] == ' ' || body[0] == '-' || body[0] == '+':
			h.Lines = append(h.Lines, Line{Op(body[0]), withEOL(raw[1:])})
			if body[0] != '+' {
				seenOld++
			}
			if body[0] != '-' {
				seenNew++
			}
		default:
			break lines
		}
	}
	// Trailing empty lines are separators more often than blank context.
	for n := len(h.Lines); n > 0 && blankLine(p.lines[j-1]); n-- {
		if seenOld <= h.OldLines && seenNew <= h.NewLines {
			break
		}
		h.Lines = h.Lines[:n-1]
		seenOld--
		seenNew--
		j--
	}
	if header == "" {
		// A headerless hunk is taken at the top of both sides.
		h.OldStart, h.NewStart, h.OldLines, h.NewLines = 1, 1, seenOld, seenNew
	} else if j >= len(p.lines) && !h.Src.BadHeader && (seenOld < h.OldLines || seenNew < h.NewLines) {
		h.Src.Truncated = true
	}
	h.Src.EndLine = j
	f.Hunks = append(f.Hunks, h)
	return j
}

// blankLine says a line is empty but for its ending: in a hunk, a
// context line whose space was dropped.
func blankLine(raw string) bool { return raw == "\n" || raw == "\r\n" || raw == "\r" }

// withEOL gives a hunk line its ending: the diff's last line may lack the
// newline that every line of a hunk has unless a "\" line says otherwise.
func withEOL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// extendedHeader reads one of git's extended header lines.
func extendedHeader(l string) (name, value string, ok bool) {
	for _, name := range []string{"new file mode ", "deleted file mode ", "old mode ", "new mode ", "rename from ", "rename to ",
		"similarity index ", "dissimilarity index ", "index "} {
		if v, ok := strings.CutPrefix(l, name); ok {
			return name, strings.TrimSpace(v), true
		}
	}
	return "", "", false
}

func (f *File) setHeader(name, value string) {
	switch name {
	case "new file mode ":
		f.NewFileMode = value
	case "deleted file mode ":
		f.DeletedFileMode = value
	case "old mode ":
		f.OldMode = value
	case "new mode ":
		f.NewMode = value
	case "rename from ":
		f.RenameFrom = value
	case "rename to ":
		f.RenameTo = value
	}
}

// headerPath takes the path from a ---/+++ line: a tab-separated
// timestamp goes, and git's quotes around a path with special bytes.
func headerPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		s = u
	}
	return s
}

// stripGitPrefixes removes git's a/ and b/ prefixes when the pair uses
// them, and a leading ./ otherwise.
func stripGitPrefixes(oldPath, newPath string) (string, string) {
	oa, nb := strings.HasPrefix(oldPath, "a/"), strings.HasPrefix(newPath, "b/")
	switch {
	case oa && nb:
		return oldPath[2:], newPath[2:]
	case oldPath == DevNull && nb:
		return oldPath, newPath[2:]
	case newPath == DevNull && oa:
		return oldPath[2:], newPath
	}
	return strings.TrimPrefix(oldPath, "./"), strings.TrimPrefix(newPath, "./")
}

// ParseHunk reads one hunk a tool reported as its header's numbers and
// its lines, each with its marker (a "\" line takes the ending of the line
// before), as Parse reads a hunk under that header.
func ParseHunk(oldStart, oldLines, newStart, newLines int, marked []string) Hunk {
	header := formatHeader(oldStart, oldLines, newStart, newLines)
	var b strings.Builder
	for _, l := range marked {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	p := parser{lines: append([]string{header + "\n"}, splitLines(b.String())...)}
	var f File
	p.hunk(&f, 0, header)
	h := f.Hunks[0]
	h.Src = Source{}
	return h
}

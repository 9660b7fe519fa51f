package diff

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// ContextLines is the number of unchanged lines around each change in a
// hunk; changes closer than twice that share a hunk.
const ContextLines = 3

// Unified returns the unified diff that turns old into new (Format of the
// file with the two paths and Hunks), and its added and removed line
// counts. Identical contents give "".
func Unified(oldPath, newPath string, old, new []byte) (text string, added, removed int) {
	f := File{OldPath: oldPath, NewPath: newPath, Hunks: Hunks(old, new)}
	added, removed = f.Stat()
	return Format(f), added, removed
}

// Hunks computes the hunks that turn old into new, with ContextLines of
// context. Line endings are part of the comparison, so a CRLF→LF change
// shows as a change; each line keeps its exact bytes.
func Hunks(old, new []byte) []Hunk {
	// Lines are encoded as one rune each (our own table, sized once and
	// never re-split), go-diff compares the rune strings, and the result
	// is decoded straight into diff lines.
	oldRunes, newRunes, table := linesToRunes(string(old), string(new))
	var lines []Line
	if len(table) > maxDistinctLines {
		// More distinct lines than valid runes: show the file as
		// replaced whole, which is correct if not minimal.
		lines = make([]Line, 0, len(oldRunes)+len(newRunes))
		for _, l := range strings.SplitAfter(string(old), "\n") {
			if l != "" {
				lines = append(lines, Line{Delete, l})
			}
		}
		for _, l := range strings.SplitAfter(string(new), "\n") {
			if l != "" {
				lines = append(lines, Line{Add, l})
			}
		}
	} else {
		lines = make([]Line, 0, len(table))
		for _, d := range diffmatchpatch.New().DiffMainRunes(oldRunes, newRunes, false) {
			op := Context
			switch d.Type {
			case diffmatchpatch.DiffDelete:
				op = Delete
			case diffmatchpatch.DiffInsert:
				op = Add
			}
			for _, r := range d.Text {
				lines = append(lines, Line{op, table[runeIndex(r)]})
			}
		}
	}
	return group(lines)
}

// group cuts a whole-file sequence of lines into hunks: each change with
// ContextLines around it, changes closer than twice that in one hunk.
func group(lines []Line) []Hunk {
	oldNo, newNo := make([]int, len(lines)), make([]int, len(lines))
	o, n := 1, 1
	for i, l := range lines {
		oldNo[i], newNo[i] = o, n
		if l.Op != Add {
			o++
		}
		if l.Op != Delete {
			n++
		}
	}
	var hunks []Hunk
	for i := 0; i < len(lines); {
		if lines[i].Op == Context {
			i++
			continue
		}
		start := max(i-ContextLines, 0)
		end := i
		for end < len(lines) {
			if lines[end].Op != Context {
				end++
				continue
			}
			run := end
			for run < len(lines) && lines[run].Op == Context {
				run++
			}
			if run == len(lines) || run-end > 2*ContextLines {
				end = min(end+ContextLines, run)
				break
			}
			end = run
		}
		hunks = append(hunks, newHunk(lines[start:end:end], oldNo[start], newNo[start]))
		i = end
	}
	return hunks
}

// newHunk makes the hunk of lines whose first line is line oldStart of the
// old side and newStart of the new, with its header.
func newHunk(lines []Line, oldStart, newStart int) Hunk {
	h := Hunk{Lines: lines}
	for _, l := range lines {
		if l.Op != Add {
			h.OldLines++
		}
		if l.Op != Delete {
			h.NewLines++
		}
	}
	h.OldStart, h.NewStart = oldStart, newStart
	if h.OldLines == 0 {
		h.OldStart--
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	h.Header = formatHeader(h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	return h
}

// linesToRunes encodes each distinct line (with its terminator) of a and
// b as one rune, returning both encodings and the table of lines. Indexes
// skip the surrogate range, whose runes do not survive conversion to a
// string (go-diff returns its diffs as strings).
func linesToRunes(a, b string) ([]rune, []rune, []string) {
	n := strings.Count(a, "\n") + strings.Count(b, "\n") + 2
	index := make(map[string]rune, n)
	table := make([]string, 0, n)
	encode := func(s string) []rune {
		out := make([]rune, 0, strings.Count(s, "\n")+1)
		for len(s) > 0 {
			i := strings.IndexByte(s, '\n')
			line := s
			if i >= 0 {
				line = s[:i+1]
			}
			s = s[len(line):]
			r, ok := index[line]
			if !ok {
				r = indexRune(len(table))
				index[line] = r
				table = append(table, line)
			}
			out = append(out, r)
		}
		return out
	}
	ra := encode(a)
	rb := encode(b)
	return ra, rb, table
}

const surrogateLo, surrogateHi = 0xD800, 0xE000

// maxDistinctLines is how many distinct lines indexRune can encode as
// valid runes.
const maxDistinctLines = 0x10FFFF + 1 - (surrogateHi - surrogateLo)

func indexRune(i int) rune {
	if i >= surrogateLo {
		i += surrogateHi - surrogateLo
	}
	return rune(i)
}

func runeIndex(r rune) int {
	if r >= surrogateHi {
		return int(r) - (surrogateHi - surrogateLo)
	}
	return int(r)
}

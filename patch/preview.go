package patch

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// FileDiff is the review data of one file: a unified diff and its stats.
// It mirrors engine.FileChange, which the engine fills from it.
type FileDiff struct {
	Path      string    `json:"path"`
	NewPath   string    `json:"new_path,omitempty"`
	Operation Operation `json:"operation"`
	Diff      string    `json:"diff"`
	Added     int       `json:"added"`
	Removed   int       `json:"removed"`
}

// Preview renders every file of a plan as a unified diff. It only reads
// the plan; go-diff computes the diff and never applies anything.
func Preview(plan *Plan) []FileDiff {
	out := make([]FileDiff, 0, len(plan.Files))
	for _, f := range plan.Files {
		oldName, newName := "a/"+f.Path, "b/"+f.Path
		switch f.Operation {
		case OpAdd:
			oldName = "/dev/null"
		case OpDelete:
			newName = "/dev/null"
		case OpRename:
			newName = "b/" + f.NewPath
		}
		text, added, removed := UnifiedDiff(oldName, newName, f.OldContent, f.NewContent)
		if f.Existed && f.NewContent != nil && f.NewMode != f.OldMode {
			text = fmt.Sprintf("old mode %o\nnew mode %o\n", 0o100000|f.OldMode, 0o100000|f.NewMode) + text
		}
		out = append(out, FileDiff{Path: f.Path, NewPath: f.NewPath, Operation: f.Operation, Diff: text, Added: added, Removed: removed})
	}
	return out
}

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

type diffLine struct {
	op   byte // ' ', '-', '+'
	text string
}

// UnifiedDiff returns a unified diff of two contents with 3 lines of
// context, and the added and removed line counts. Line endings are part of
// the comparison, so a CRLF→LF change shows as a change.
func UnifiedDiff(oldName, newName string, oldContent, newContent []byte) (string, int, int) {
	// Lines are encoded as one rune each (our own table, sized once and
	// never re-split), go-diff compares the rune strings, and the result
	// is decoded straight into diff lines.
	oldRunes, newRunes, table := linesToRunes(string(oldContent), string(newContent))
	lines := make([]diffLine, 0, len(table))
	added, removed := 0, 0
	if len(table) > maxDistinctLines {
		// More distinct lines than valid runes: show the file as
		// replaced whole, which is correct if not minimal.
		for _, l := range strings.SplitAfter(string(oldContent), "\n") {
			if l != "" {
				lines = append(lines, diffLine{'-', l})
				removed++
			}
		}
		for _, l := range strings.SplitAfter(string(newContent), "\n") {
			if l != "" {
				lines = append(lines, diffLine{'+', l})
				added++
			}
		}
	}
	var diffs []diffmatchpatch.Diff
	if len(table) <= maxDistinctLines {
		diffs = diffmatchpatch.New().DiffMainRunes(oldRunes, newRunes, false)
	}
	for _, d := range diffs {
		var op byte
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			op = ' '
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, r := range d.Text {
			lines = append(lines, diffLine{op, table[runeIndex(r)]})
			switch op {
			case '-':
				removed++
			case '+':
				added++
			}
		}
	}
	if added == 0 && removed == 0 {
		return "", 0, 0
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	oldNo, newNo := make([]int, len(lines)), make([]int, len(lines))
	o, n := 1, 1
	for i, l := range lines {
		oldNo[i], newNo[i] = o, n
		if l.op != '+' {
			o++
		}
		if l.op != '-' {
			n++
		}
	}
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(lines) {
			if lines[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(lines) && lines[run].op == ' ' {
				run++
			}
			if run == len(lines) || run-end > 2*diffContext {
				end = min(end+diffContext, run)
				break
			}
			end = run
		}
		writeHunk(&sb, lines[start:end], oldNo[start], newNo[start])
		i = end
	}
	return sb.String(), added, removed
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

func writeHunk(sb *strings.Builder, h []diffLine, oldStart, newStart int) {
	oc, nc := 0, 0
	for _, l := range h {
		if l.op != '+' {
			oc++
		}
		if l.op != '-' {
			nc++
		}
	}
	if oc == 0 {
		oldStart--
	}
	if nc == 0 {
		newStart--
	}
	fmt.Fprintf(sb, "@@ -%d,%d +%d,%d @@\n", oldStart, oc, newStart, nc)
	for _, l := range h {
		text := strings.TrimSuffix(l.text, "\n")
		sb.WriteByte(l.op)
		sb.WriteString(text)
		sb.WriteByte('\n')
		if !strings.HasSuffix(l.text, "\n") {
			sb.WriteString("\\ No newline at end of file\n")
		}
	}
}

package memory

import (
	"strings"
	"unicode"
)

// Imports returns the @path imports of a memory file's text, in order, as
// Claude Code reads them: a word that starts with @ at the start of a line
// or after white space names a file to include after this one. Words in a
// fenced code block or an inline code span are text, not imports, and an
// address like a@b.c is not one either (the @ does not start a word).
// Trailing punctuation (",;:!?)") is not part of the path; "\ " is an
// escaped space.
func Imports(text string) []string {
	var out []string
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		out = append(out, lineImports(line)...)
	}
	return out
}

// lineImports scans one line outside fenced blocks.
func lineImports(line string) []string {
	var out []string
	inCode := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '`':
			inCode = !inCode
		case inCode || rs[i] != '@' || i > 0 && !unicode.IsSpace(rs[i-1]):
		default:
			var b strings.Builder
			j := i + 1
			for ; j < len(rs); j++ {
				if rs[j] == '\\' && j+1 < len(rs) && rs[j+1] == ' ' {
					b.WriteRune(' ')
					j++
					continue
				}
				if unicode.IsSpace(rs[j]) || rs[j] == '`' {
					break
				}
				b.WriteRune(rs[j])
			}
			i = j - 1
			p := strings.TrimRight(b.String(), ",;:!?)")
			if p != "" && !strings.ContainsRune(p, 0) {
				out = append(out, p)
			}
		}
	}
	return out
}

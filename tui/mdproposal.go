package tui

import (
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/patch"
)

// fenceEditBlocks prepares a proposal in an answer for markdown, which
// would otherwise mangle it: each edit block that is not already in a
// code block gets a fence of its own, so that its lines are shown as they
// are. (Metadata lines keep their breaks through splitMetadata.)
//
// The edit blocks are the three forms patch reads from text: a
// search/replace block ("<<<<<<< SEARCH" to ">>>>>>> REPLACE", whose
// markers markdown renders as nested block quotes and a setext heading),
// the "*** Begin Patch" envelope (to "*** End Patch"), and a unified diff
// (from "diff --git", a ---/+++ pair or a bare "@@ -" hunk, to the first
// line no diff has), whose +/- lines markdown turns into lists. A block
// the message stopped in is fenced to the end.
func fenceEditBlocks(src string) string {
	if !strings.Contains(src, "SEARCH") && !strings.Contains(src, "*** Begin Patch") && !strings.Contains(src, "@@ -") {
		return src
	}
	var b strings.Builder
	b.Grow(len(src) + 16)
	lines := strings.SplitAfter(src, "\n")
	fence := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		line := strings.TrimRight(l, "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence != "" {
			b.WriteString(l)
			if closesFence(trimmed, indent, fence) {
				fence = ""
			}
			continue
		}
		if end := editBlockEnd(lines, i); end > i {
			writeFenced(&b, lines[i:end])
			i = end - 1
			continue
		}
		if f := fenceOpener(trimmed); f != "" && indent <= 3 {
			fence = f
		}
		b.WriteString(l)
	}
	return b.String()
}

// editBlockEnd returns the end (exclusive) of the edit block that starts
// at line i, or i when none starts there.
func editBlockEnd(lines []string, i int) int {
	line := strings.TrimRight(lines[i], "\r\n")
	upTo := func(last func(string) bool) int {
		for j := i + 1; j < len(lines); j++ {
			if last(strings.TrimRight(lines[j], "\r\n")) {
				return j + 1
			}
		}
		return len(lines)
	}
	switch {
	case patch.IsSearchMarker(line):
		return upTo(patch.IsReplaceMarker)
	case strings.TrimSpace(line) == "*** Begin Patch":
		return upTo(func(l string) bool { return strings.TrimSpace(l) == "*** End Patch" })
	case diffStart(lines, i):
		return diffEnd(lines, i)
	}
	return i
}

// diffEnd returns the end (exclusive) of the unified diff that starts at
// line i. A hunk takes as many lines as its header counts, blank ones
// too (a context line whose space was dropped); after it only another
// header or hunk continues the diff, so a list that follows a diff is
// not taken for removed lines.
func diffEnd(lines []string, i int) int {
	remOld, remNew := 0, 0
	counted := false // the current hunk's header gave counts
	j := i
	for ; j < len(lines); j++ {
		l := strings.TrimRight(lines[j], "\r\n")
		inHunk := remOld > 0 || remNew > 0
		switch {
		case strings.HasPrefix(l, "@@ -"):
			remOld, remNew, counted = hunkCounts(l)
		case inHunk && (l == "" || l[0] == ' '):
			remOld, remNew = remOld-1, remNew-1
		case inHunk && l[0] == '-':
			remOld--
		case inHunk && l[0] == '+':
			remNew--
		case strings.HasPrefix(l, "\\"):
		case !counted && diffBody(l):
			// A hunk without counts runs while its lines look like one.
		case !inHunk && diffLine(l) && !diffBody(l):
			// A file header.
		case !inHunk && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")):
		default:
			return j
		}
	}
	return j
}

// hunkCounts reads the line counts of a hunk header "@@ -a,b +c,d @@" (a
// missing count is 1); ok is false when the header has none to read.
func hunkCounts(h string) (oldN, newN int, ok bool) {
	var a, b, c, d int
	if n, _ := fmt.Sscanf(h, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &d); n == 4 {
		return b, d, true
	}
	if n, _ := fmt.Sscanf(h, "@@ -%d +%d,%d @@", &a, &c, &d); n == 3 {
		return 1, d, true
	}
	if n, _ := fmt.Sscanf(h, "@@ -%d,%d +%d @@", &a, &b, &c); n == 3 {
		return b, 1, true
	}
	if n, _ := fmt.Sscanf(h, "@@ -%d +%d @@", &a, &c); n == 2 {
		return 1, 1, true
	}
	return 0, 0, false
}

// diffStart says a unified diff starts at line i: a git header, a ---
// line followed by its +++ line, or a bare hunk header.
func diffStart(lines []string, i int) bool {
	l := lines[i]
	switch {
	case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "@@ -"):
		return true
	case strings.HasPrefix(l, "--- ") && i+1 < len(lines):
		return strings.HasPrefix(lines[i+1], "+++ ")
	}
	return false
}

// diffBody says a line is a hunk's: context, removed, added, a hunk
// header or a "\ No newline" note.
func diffBody(l string) bool {
	return l != "" && strings.IndexByte(" +-@\\", l[0]) >= 0
}

// diffLine says a line belongs to a unified diff: a hunk's line or a
// file's header.
func diffLine(l string) bool {
	if diffBody(l) {
		return true
	}
	for _, p := range []string{"diff ", "index ", "new file mode", "deleted file mode", "old mode", "new mode",
		"similarity index", "rename from", "rename to", "Binary files"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// mdPart is a piece of a message rendered on its own: a metadata line
// (SUMMARY:, VERIFY:, RISK:) or the markdown between two. gap says a blank
// line came before it.
type mdPart struct {
	text string
	gap  bool
}

// splitMetadata cuts a message (after fenceEditBlocks) before and after
// each metadata line outside code blocks. Rendered apart, each such line
// keeps its own line: markdown joins consecutive lines into one
// paragraph, and glamour renders no hard line break.
func splitMetadata(src string) []mdPart {
	if !strings.Contains(src, ":") {
		return []mdPart{{text: src}}
	}
	var parts []mdPart
	var cur strings.Builder
	curGap, prevBlank, fence := false, false, ""
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			parts = append(parts, mdPart{text: cur.String(), gap: curGap})
		}
		cur.Reset()
	}
	for _, l := range strings.SplitAfter(src, "\n") {
		line := strings.TrimRight(l, "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		blank := fence == "" && strings.TrimSpace(line) == ""
		switch {
		case fence != "":
			if closesFence(trimmed, indent, fence) {
				fence = ""
			}
		case blank:
		case fenceOpener(trimmed) != "" && indent <= 3:
			fence = fenceOpener(trimmed)
		default:
			if _, _, ok := patch.MetadataKey(line); ok {
				flush()
				parts = append(parts, mdPart{text: l, gap: prevBlank && len(parts) > 0})
				prevBlank = false
				continue
			}
		}
		if !blank && strings.TrimSpace(cur.String()) == "" {
			curGap = prevBlank && len(parts) > 0
		}
		cur.WriteString(l)
		prevBlank = blank
	}
	flush()
	return parts
}

// writeFenced writes lines as a fenced code block whose fence is longer than
// any run of backticks that starts one of them.
func writeFenced(b *strings.Builder, lines []string) {
	n := 3
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		if k := len(t) - len(strings.TrimLeft(t, "`")); k >= n {
			n = k + 1
		}
	}
	fence := strings.Repeat("`", n)
	b.WriteString(fence + "\n")
	for _, l := range lines {
		b.WriteString(l)
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(fence + "\n")
}

package diff

import (
	"fmt"
	"strings"
)

// Format writes a file's unified diff: its mode change, when it has one,
// then, when it has hunks, the ---/+++ pair (a/ and b/ prefixed, DevNull
// as it is) and the hunks. A file without hunks gets no ---/+++ pair, so
// a change of nothing but the mode is two lines and no change at all is
// "". Parse reads the text back into a File with the same paths, modes
// and hunks (git's other headers, which Format does not write, are lost).
func Format(f File) string {
	var sb strings.Builder
	if f.OldMode != "" || f.NewMode != "" {
		fmt.Fprintf(&sb, "old mode %s\nnew mode %s\n", f.OldMode, f.NewMode)
	}
	if len(f.Hunks) == 0 {
		return sb.String()
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", side("a/", f.OldPath), side("b/", f.NewPath))
	for _, h := range f.Hunks {
		writeHunk(&sb, h)
	}
	return sb.String()
}

func side(prefix, path string) string {
	if path == DevNull {
		return path
	}
	return prefix + path
}

// writeHunk writes one hunk: its header (the numbers' when it has none)
// and its lines, each with its marker; a line without an ending is
// followed by git's "\ No newline at end of file".
func writeHunk(sb *strings.Builder, h Hunk) {
	if h.Header != "" {
		sb.WriteString(h.Header)
		sb.WriteByte('\n')
	} else {
		sb.WriteString(formatHeader(h.OldStart, h.OldLines, h.NewStart, h.NewLines))
		sb.WriteByte('\n')
	}
	for _, l := range h.Lines {
		sb.WriteByte(byte(l.Op))
		sb.WriteString(l.Text)
		if !strings.HasSuffix(l.Text, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func formatHeader(oldStart, oldLines, newStart, newLines int) string {
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", oldStart, oldLines, newStart, newLines)
}

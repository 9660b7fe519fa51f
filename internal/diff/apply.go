package diff

import (
	"bytes"
	"fmt"
	"strings"
)

// Apply rebuilds a file from its old content and the hunks of its diff, in
// order: the new lines of each hunk keep says yes to, the old lines of the
// others (a nil keep takes every hunk). Every hunk's old side must be in
// old exactly where its header says, line endings included; a mismatch is
// an error, never a guess.
func Apply(old []byte, hunks []Hunk, keep func(i int) bool) ([]byte, error) {
	oldLines := strings.SplitAfter(string(old), "\n")
	if n := len(oldLines); oldLines[n-1] == "" {
		oldLines = oldLines[:n-1]
	}
	var out bytes.Buffer
	out.Grow(len(old))
	pos := 0
	for hi, h := range hunks {
		start, _ := h.OldSpan()
		if start < pos || start > len(oldLines) {
			return nil, fmt.Errorf("hunk %d starts at line %d, outside the file or before the previous hunk", hi+1, start+1)
		}
		for _, l := range oldLines[pos:start] {
			out.WriteString(l)
		}
		k := start
		for _, l := range h.Lines {
			if l.Op == Add {
				continue
			}
			if k >= len(oldLines) || oldLines[k] != l.Text {
				return nil, fmt.Errorf("hunk %d does not match line %d of the file", hi+1, k+1)
			}
			k++
		}
		take := keep == nil || keep(hi)
		for _, l := range h.Lines {
			if l.Op == Context || (take && l.Op == Add) || (!take && l.Op == Delete) {
				out.WriteString(l.Text)
			}
		}
		pos = k
	}
	for _, l := range oldLines[pos:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}

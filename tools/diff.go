package tools

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// maxDiffInput bounds the content a preview diff is computed for; larger
// files get a one-line summary instead, so a preview never costs much.
const maxDiffInput = 1 << 20

// contextLines is the number of unchanged lines around each hunk.
const contextLines = 3

// UnifiedDiff renders a unified diff of old and new for a preview (events,
// permission requests). It is only ever shown, never applied: edits are
// applied by exact string replacement.
func UnifiedDiff(path string, old, new []byte, existed bool) string {
	if len(old) > maxDiffInput || len(new) > maxDiffInput {
		return fmt.Sprintf("--- a/%s\n+++ b/%s\n(diff not shown: %d -> %d bytes)\n", path, path, len(old), len(new))
	}
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(string(old), string(new))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)

	// Flatten into one op per line.
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var ls []line
	for _, d := range diffs {
		parts := strings.SplitAfter(d.Text, "\n")
		for _, p := range parts {
			if p != "" {
				ls = append(ls, line{d.Type, p})
			}
		}
	}
	var sb strings.Builder
	from := "a/" + path
	if !existed {
		from = "/dev/null"
	}
	fmt.Fprintf(&sb, "--- %s\n+++ b/%s\n", from, path)
	changed := false
	for i := 0; i < len(ls); {
		if ls[i].op == diffmatchpatch.DiffEqual {
			i++
			continue
		}
		changed = true
		// A hunk starts contextLines before the change and runs until a
		// stretch of more than 2*contextLines equal lines.
		start := max(i-contextLines, 0)
		end := i
		for end < len(ls) {
			if ls[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			run := end
			for run < len(ls) && ls[run].op == diffmatchpatch.DiffEqual {
				run++
			}
			if run == len(ls) || run-end > 2*contextLines {
				end = min(end+contextLines, len(ls))
				break
			}
			end = run
		}
		oldStart, newStart := 1, 1
		for _, l := range ls[:start] {
			if l.op != diffmatchpatch.DiffInsert {
				oldStart++
			}
			if l.op != diffmatchpatch.DiffDelete {
				newStart++
			}
		}
		var oldN, newN int
		var body strings.Builder
		for _, l := range ls[start:end] {
			prefix := " "
			switch l.op {
			case diffmatchpatch.DiffDelete:
				prefix = "-"
				oldN++
			case diffmatchpatch.DiffInsert:
				prefix = "+"
				newN++
			default:
				oldN++
				newN++
			}
			body.WriteString(prefix + l.text)
			if !strings.HasSuffix(l.text, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		if oldN == 0 {
			oldStart--
		}
		if newN == 0 {
			newStart--
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
		sb.WriteString(body.String())
		i = end
	}
	if !changed {
		return ""
	}
	return sb.String()
}

package tools

import (
	"fmt"

	"github.com/kaizen-code/kz/internal/diff"
)

// maxDiffInput bounds the content a preview diff is computed for; larger
// files get a one-line summary instead, so a preview never costs much.
const maxDiffInput = 1 << 20

// UnifiedDiff renders a unified diff of old and new for a preview (events,
// permission requests). It is only ever shown, never applied: edits are
// applied by exact string replacement.
func UnifiedDiff(path string, old, new []byte, existed bool) string {
	text, _, _ := unifiedDiff(path, old, new, existed)
	return text
}

// unifiedDiff is UnifiedDiff with the diff's added and removed line
// counts, both 0 for contents too large to diff.
func unifiedDiff(path string, old, new []byte, existed bool) (text string, added, removed int) {
	if len(old) > maxDiffInput || len(new) > maxDiffInput {
		return fmt.Sprintf("--- a/%s\n+++ b/%s\n(diff not shown: %d -> %d bytes)\n", path, path, len(old), len(new)), 0, 0
	}
	from := path
	if !existed {
		from = diff.DevNull
	}
	return diff.Unified(from, path, old, new)
}

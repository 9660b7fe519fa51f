package tools

import (
	"strings"
	"testing"
)

// TestUnifiedDiffPreview: the preview is internal/diff's unified diff
// (whose tests apply it with patch(1)), from /dev/null for a new file, ""
// for no change, and a one-line summary for contents too large to diff.
func TestUnifiedDiffPreview(t *testing.T) {
	t.Parallel()
	if d := UnifiedDiff("f.txt", []byte("a\nb\n"), []byte("a\nB\n"), true); d != "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n" {
		t.Errorf("modified: %q", d)
	}
	if d := UnifiedDiff("n.txt", nil, []byte("x\n"), false); d != "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Errorf("new file: %q", d)
	}
	if d := UnifiedDiff("f", []byte("same\n"), []byte("same\n"), true); d != "" {
		t.Errorf("no-change diff = %q", d)
	}
	big := []byte(strings.Repeat("x\n", maxDiffInput))
	if d := UnifiedDiff("big", big, nil, true); !strings.Contains(d, "(diff not shown:") {
		t.Errorf("large file: %.80q", d)
	}
}

package permission

import (
	"slices"
	"testing"
)

// TestKnownTools: the known names are exactly those KindOf maps to a rule
// kind (the gate reads their input), those with a declared spec, and MCP
// tools; anything else (a typo such as "write") is unknown.
func TestKnownTools(t *testing.T) {
	t.Parallel()
	names := KnownTools()
	if !slices.IsSorted(names) {
		t.Fatalf("not sorted: %v", names)
	}
	for _, n := range names {
		if _, spec := SpecOf(n); spec {
			if KindOf(n) != Kind(n) {
				t.Errorf("%s has both a kind and a spec", n)
			}
			continue
		}
		if KindOf(n) == Kind(n) && n != string(KindBash) && n != string(KindRead) && n != string(KindEdit) &&
			n != string(KindWrite) && n != string(KindWebFetch) {
			t.Errorf("%s is listed but has no kind", n)
		}
	}
	for _, n := range []string{"bash", "write_file", "Write", "Edit", "apply_patch", "run_shell_command", "mcp__github__create_issue", "Task", "WebSearch"} {
		if !KnownTool(n) {
			t.Errorf("%s unknown", n)
		}
	}
	for _, n := range []string{"write", "", "mcp__", "BASH", "task", "Tasks"} {
		if KnownTool(n) {
			t.Errorf("%q known", n)
		}
	}
	if KindOf("write_file") != KindWrite || KindOf("Grep") != KindRead || KindOf("mcp__x") != Kind("mcp__x") {
		t.Error("KindOf changed")
	}
}

package hooks

import (
	"context"
	"testing"
)

// BenchmarkPreToolUse is what a PreToolUse hook adds to every gate check:
// a process per matching hook (here one that reads its input and exits
// 0), and nothing measurable for a call no matcher selects.
func BenchmarkPreToolUse(b *testing.B) {
	for _, bc := range []struct{ name, matcher string }{{"matching", "Bash"}, {"not-matching", "Write"}} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := New(Options{Workspace: b.TempDir(), User: Config{"PreToolUse": {{Matcher: bc.matcher, Hooks: []Command{{Command: "cat >/dev/null"}}}}}})
			if err != nil {
				b.Fatal(err)
			}
			q := bashQuery("git status")
			for b.Loop() {
				if v := r.PreToolUse(context.Background(), q); v.Decision != "" {
					b.Fatalf("decision %+v", v)
				}
			}
		})
	}
}

//go:build linux

package proc

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriteHeld is what a turn's end pays to learn that no process
// of kz's holds a write inotify has not reported (checkpoint.Options.WriteHeld):
// each op walks the benchmark's descendants, four helpers (two mapping a
// file shared and writable, two holding one open for writing, as a
// CLI's store and logs are), and reads their mappings and descriptors.
// In kz -p at the end of a Claude Code or Codex turn it measured 0.8 to
// 2.8 ms (the CLI still shutting down, with its dozens of threads).
func BenchmarkWriteHeld(b *testing.B) {
	dir := b.TempDir()
	for i, action := range []string{"map", "map", "write-fd", "write-fd"} {
		path := filepath.Join(dir, "f"+string(rune('0'+i)))
		if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
			b.Fatal(err)
		}
		startHolder(b, action, path)
	}
	self := os.Getpid()
	for b.Loop() {
		if inodes, ok := WriteHeld(self); !ok || len(inodes) < 4 {
			b.Fatalf("WriteHeld = %v, %v", inodes, ok)
		}
	}
}

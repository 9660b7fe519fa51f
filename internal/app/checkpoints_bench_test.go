package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/internal/testfs"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/workspace"
)

// benchWorkspace builds a workspace of n tracked files in 100
// directories, one in fifty of them gitignored by pattern, plus an
// ignored build directory of n/10 files.
func benchWorkspace(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	files := map[string]string{".gitignore": "build/\n*.log\n"}
	for i := range n {
		name := fmt.Sprintf("pkg%02d/f%05d.go", i%100, i)
		if i%50 == 0 {
			name = fmt.Sprintf("pkg%02d/f%05d.log", i%100, i)
		}
		files[name] = fmt.Sprintf("package p%d\n", i)
	}
	for i := range n / 10 {
		files[fmt.Sprintf("build/o%05d", i)] = "x"
	}
	testfs.Write(b, dir, files)
	return dir
}

// BenchmarkShellChangeScan is the scan after a tool call on a 10,000-file
// workspace, as the session runs it (Tracker.AfterCall with the real
// SQLite store): with nothing changed, and with a call that edited two
// files, created one and deleted one (each iteration makes those changes
// outside the timer and records the checkpoint inside it). The change
// watcher names what changed, so the scan stats only those files;
// full_scan is the scan of every file that the turn's start and end run
// (and that a call's scan falls back to when the watcher cannot tell).
//
//	go test -run XXX -bench ShellChangeScan -benchtime 20x -count 5 ./internal/app/
func BenchmarkShellChangeScan(b *testing.B) {
	dir := benchWorkspace(b, 10_000)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "kz.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ws.Close() })
	tr := newTracker(st, ws, nil, false)
	b.Cleanup(func() { _ = tr.Close() })
	call := engine.CheckpointCall{SessionID: "s", TurnID: 1, ToolCallID: "c", Tool: "bash", Command: "true"}
	if err := tr.Refresh(ctx, call); err != nil {
		b.Fatal(err)
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if err := tr.AfterCall(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
	// i runs on across the runs of the sub-benchmark, so that every
	// iteration deletes a file that is still there.
	i := 0
	b.Run("few_changes", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			i++
			for _, rel := range []string{"pkg03/f00003.go", "pkg42/f00042.go"} {
				if err := os.WriteFile(filepath.Join(dir, rel), []byte(fmt.Sprintf("package p\n// edit %d\n", i)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "pkg07", fmt.Sprintf("new%d.go", i)), []byte("package p\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			// The file the previous iteration created is deleted (the
			// first iteration deletes a file of the fixture).
			gone := filepath.Join(dir, "pkg07", fmt.Sprintf("new%d.go", i-1))
			if i == 1 {
				gone = filepath.Join(dir, "pkg07", "f00007.go")
			}
			if err := os.Remove(gone); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := tr.AfterCall(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full_scan", func(b *testing.B) {
		for b.Loop() {
			if err := tr.Refresh(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

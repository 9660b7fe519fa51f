package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/tools/workspace"
)

// scanFixture builds a workspace of n tracked files in 100 directories,
// plus a gitignored build directory of n/10 files the scan must skip.
func scanFixture(tb testing.TB, n int) *workspace.Workspace {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n*.log\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%100))
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		name := fmt.Sprintf("f%05d.go", i)
		if i%50 == 0 {
			name = fmt.Sprintf("f%05d.log", i)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(fmt.Sprintf("package p%d\n", i)), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := range n / 10 {
		if err := os.WriteFile(filepath.Join(dir, "build", fmt.Sprintf("o%05d", i)), []byte("x"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ws.Close() })
	return ws
}

func BenchmarkScanWorkspaceRaw(b *testing.B) {
	ws := scanFixture(b, 10000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := ScanWorkspace(ctx, ws, 0, func(string, FileStat) { n++ }); err != nil {
			b.Fatal(err)
		}
		if n != 9801 {
			b.Fatalf("scanned %d files, want 9801", n)
		}
	}
}

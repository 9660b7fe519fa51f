package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kaizen-code/kz/internal/testfs"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestScanWorkspaceSkipsWhatGitIgnores: the scan lists regular files
// only, skipping .git at any depth, symbolic links and ignored paths
// (nested .gitignore files and negations included), and stops at the cap.
func TestScanWorkspaceSkipsWhatGitIgnores(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		".gitignore": "*.log\nbuild/\n!keep.log\n", "a.go": "a", "keep.log": "k", "x.log": "x",
		"build/out": "o", "sub/.gitignore": "secret.txt\n", "sub/secret.txt": "s", "sub/b.go": "b",
		"sub/deep/c.go": "c", ".git/config": "g", "vendor/x/.git/HEAD": "h", "vendor/x/y.go": "y",
	}
	writeTree(t, dir, files)
	if err := os.Symlink("a.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	ws := openTree(t, dir)
	var got []string
	sizes := map[string]int64{}
	if err := ScanWorkspace(context.Background(), ws, 0, func(rel string, st FileStat) {
		got = append(got, rel)
		sizes[rel] = st.Size
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{".gitignore", "a.go", "keep.log", "sub/.gitignore", "sub/b.go", "sub/deep/c.go", "vendor/x/y.go"}
	if !slices.Equal(got, want) {
		t.Fatalf("scanned %q, want %q", got, want)
	}
	if sizes["a.go"] != 1 {
		t.Errorf("size of a.go = %d", sizes["a.go"])
	}
	n := 0
	err := ScanWorkspace(context.Background(), ws, 3, func(string, FileStat) { n++ })
	if !errors.Is(err, ErrScanTruncated) || n != 3 {
		t.Fatalf("capped scan: %d files, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ScanWorkspace(ctx, ws, 0, func(string, FileStat) {}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled scan: %v", err)
	}
}

// TestScanWorkspaceSkips: a skipped directory is not entered (not even
// for a .gitignore in it), a skipped file is not visited, at any depth,
// and a name that only begins like a skipped one is scanned.
func TestScanWorkspaceSkips(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.go": "a", "data/kz.db": "d", "data/sub/x": "x", "data-old/y": "y",
		"sub/kz.log": "l", "sub/kz.log.1": "l1", "sub/deep/own/z": "z", "sub/deep/keep": "k"})
	ws := openTree(t, dir)
	var got []string
	opt := ScanOptions{Skip: []string{"data", "sub/kz.log", "sub/deep/own", "nowhere"}}
	if err := ScanWorkspaceWith(context.Background(), ws, opt, func(rel string, _ FileStat) { got = append(got, rel) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"a.go", "data-old/y", "sub/deep/keep", "sub/kz.log.1"}; !slices.Equal(got, want) {
		t.Fatalf("scanned %q, want %q", got, want)
	}
}

// writeTree writes files (relative path: content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfs.Write(t, dir, files)
}

// openTree opens dir as a workspace, closed with the test.
func openTree(t *testing.T, dir string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// marksOf returns the marks of a search as "kind:relative path" strings.
func marksOf(t *testing.T, tr *tree) []string {
	t.Helper()
	f, err := tr.search(context.Background(), maxDirs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range f.marks {
		rel, _ := filepath.Rel(tr.root, m.path)
		out = append(out, fmt.Sprintf("%d:%s", m.kind, rel))
	}
	slices.Sort(out)
	return out
}

// age sets every directory's times an hour back, out of the racy window,
// as a tree that was not touched for a while.
func age(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
}

// TestSearchFindsWhatProfilesNeed: protected names, git directories
// (including one a .git file names and a bare repository), hard links and
// credentials are found at any depth, node_modules and vendor included;
// symlinks are not followed (a loop does not hang the search).
func TestSearchFindsWhatProfilesNeed(t *testing.T) {
	root := realDir(t, t.TempDir())
	gitDirLayout(t, filepath.Join(root, ".git"))
	gitDirLayout(t, filepath.Join(root, "node_modules/dep/.git"))
	gitDirLayout(t, filepath.Join(root, "a/b/c/d/e/f/g/.git"))
	gitDirLayout(t, filepath.Join(root, "data/mirror.git"))
	writeFile(t, filepath.Join(root, "wt/.git"), "gitdir: ../admin\n")
	writeFile(t, filepath.Join(root, "admin/HEAD"), "x")
	writeFile(t, filepath.Join(root, "vendor/x/.claude/settings.json"), "{}")
	writeFile(t, filepath.Join(root, ".env"), "S=1")
	writeFile(t, filepath.Join(root, "deep/er/id_rsa"), "k")
	writeFile(t, filepath.Join(root, "pkg/.mcp.json"), "{}")
	writeFile(t, filepath.Join(root, "linked"), "x")
	if err := os.Link(filepath.Join(root, "linked"), filepath.Join(root, "vendor/linked2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(root, "a/loop")); err != nil {
		t.Fatal(err)
	}
	got := marksOf(t, newTestTree(t, root))
	want := []string{
		"0:data/mirror.git", "0:pkg/.mcp.json", "0:vendor/x/.claude", "0:wt/.git",
		"1:.git", "1:a/b/c/d/e/f/g/.git", "1:admin", "1:node_modules/dep/.git",
		"2:linked", "2:vendor/linked2",
		"3:.env", "3:deep/er/id_rsa",
	}
	if !slices.Equal(got, want) {
		t.Errorf("marks:\n got %q\nwant %q", got, want)
	}
}

// newTestTree is newTree, closed at the end of the test.
func newTestTree(t *testing.T, root string) *tree {
	tr := newTree(root)
	t.Cleanup(tr.close)
	return tr
}

// TestSearchCache: an unchanged tree is not read again; a directory whose
// entries change is, so a .git created in it is found next time; a
// directory changed within the racy window is read again even when its
// mtime looks unchanged; deleted directories leave the cache. With inotify
// an unchanged tree costs not even an lstat per directory; without it
// (a file system inotify cannot follow) the mtimes decide.
func TestSearchCache(t *testing.T) {
	for _, useInotify := range []bool{true, false} {
		t.Run(fmt.Sprintf("inotify=%v", useInotify), func(t *testing.T) {
			root := realDir(t, t.TempDir())
			for i := range 20 {
				writeFile(t, filepath.Join(root, fmt.Sprintf("d%d/sub/f", i)), "x")
			}
			age(t, root)
			tr := newTestTree(t, root)
			if !useInotify {
				tr.close()
			} else if tr.inotify < 0 {
				t.Skip("no inotify here")
			}
			marksOf(t, tr)
			if tr.reads != 41 {
				t.Fatalf("first search read %d directories, want 41", tr.reads)
			}
			checks := tr.checks
			marksOf(t, tr)
			if tr.reads != 41 {
				t.Errorf("an unchanged tree was read again: %d", tr.reads)
			}
			if useInotify && tr.checks != checks {
				t.Errorf("an unchanged watched tree was checked again: %d lstats", tr.checks-checks)
			}
			if !useInotify && tr.checks != 2*checks {
				t.Errorf("checks %d, want %d", tr.checks, 2*checks)
			}
			gitDirLayout(t, filepath.Join(root, "d7/sub/.git"))
			if got := marksOf(t, tr); !slices.Contains(got, "1:d7/sub/.git") {
				t.Errorf("new .git not found: %q", got)
			}
			if tr.reads != 42 {
				t.Errorf("reads after one change: %d, want 42", tr.reads)
			}
			// A change within the same clock tick as the last read leaves
			// the mtime as it was; the directory was read within the racy
			// window, so it is read again anyway.
			d := filepath.Join(root, "d3")
			fi, _ := os.Stat(d)
			marksOf(t, tr)
			writeFile(t, filepath.Join(d, ".env"), "S=1")
			_ = os.Chtimes(d, fi.ModTime(), fi.ModTime())
			if got := marksOf(t, tr); !slices.Contains(got, "3:d3/.env") {
				t.Errorf("racy change missed: %q", got)
			}
			// Renaming, deleting and recreating directories.
			if err := os.Rename(filepath.Join(root, "d2"), filepath.Join(root, "d2moved")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "d2moved/sub/.mcp.json"), "{}")
			if err := os.RemoveAll(filepath.Join(root, "d5")); err != nil {
				t.Fatal(err)
			}
			got := marksOf(t, tr)
			if !slices.Contains(got, "0:d2moved/sub/.mcp.json") {
				t.Errorf("file in a moved directory missed: %q", got)
			}
			for rel := range tr.dirs {
				if strings.HasPrefix(rel, "d5") || strings.HasPrefix(rel, "d2/") || rel == "d2" {
					t.Errorf("gone %s still cached", rel)
				}
			}
			gitDirLayout(t, filepath.Join(root, "d5/.git"))
			if got := marksOf(t, tr); !slices.Contains(got, "1:d5/.git") {
				t.Errorf("recreated directory missed: %q", got)
			}
			// Unchanged again: the cached answer is the same.
			if a, b := marksOf(t, tr), marksOf(t, tr); !slices.Equal(a, b) {
				t.Errorf("cached answer differs: %q %q", a, b)
			}
		})
	}
}

// TestManyHardLinksKeepTheDirectory: past manyLinks hard-linked files in
// one directory, the directory is one read-only mark instead of a mount
// per file.
func TestManyHardLinksKeepTheDirectory(t *testing.T) {
	root := realDir(t, t.TempDir())
	store := realDir(t, t.TempDir())
	for i := range manyLinks + 1 {
		src := filepath.Join(store, fmt.Sprintf("s%d", i))
		writeFile(t, src, "x")
		mkdir(t, filepath.Join(root, "pnpm"))
		if err := os.Link(src, filepath.Join(root, "pnpm", fmt.Sprintf("f%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := marksOf(t, newTestTree(t, root)); !slices.Equal(got, []string{"2:pnpm"}) {
		t.Errorf("marks %q", got)
	}
}

// TestSearchBounds: past maxDirs a command that needs the search is not
// run, in either profile, and the error says why; past maxMounts
// likewise. A smaller tree runs.
func TestSearchBounds(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	for i := range 12 {
		mkdir(t, filepath.Join(f.ws, fmt.Sprintf("d%d", i)))
	}
	defer func(d, m int) { maxDirs, maxMounts = d, m }(maxDirs, maxMounts)
	maxDirs = 10
	for _, conf := range []struct {
		c    engine.Confinement
		what string
	}{{readOnly, "credential"}, {wsWrite, ".git"}} {
		_, err := f.sb.Command(context.Background(), conf.c, Spec{Argv: []string{"true"}})
		if err == nil || !strings.Contains(err.Error(), "more than 10 directories") || !strings.Contains(err.Error(), conf.what) {
			t.Errorf("%s: %v", conf.c, err)
		}
	}
	maxDirs = 100
	for i := range 6 {
		writeFile(t, filepath.Join(f.ws, fmt.Sprintf("d%d/.claude/x", i)), "{}")
	}
	maxMounts = 5
	if _, err := f.sb.Command(context.Background(), wsWrite, Spec{Argv: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "more than 5") {
		t.Errorf("mount bound: %v", err)
	}
	maxMounts = MaxMounts
	if r := f.run(t, wsWrite, "true"); r.code != 0 || r.setupErr != nil {
		t.Errorf("%+v", r)
	}
	// A cancelled context stops the search.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tr := range f.sb.trees {
		tr.close()
	}
	f.sb.trees = map[string]*tree{}
	if _, err := f.sb.Command(ctx, wsWrite, Spec{Argv: []string{"true"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

// TestParallelSearchFindsWhatASequentialOneFinds: the reads of a level run
// on several threads, and the findings come out in the order a search of
// one directory at a time gives, with nothing lost, on a tree with marks
// at every depth and many directories per level.
func TestParallelSearchFindsWhatASequentialOneFinds(t *testing.T) {
	root := realDir(t, t.TempDir())
	for i := range 40 {
		d := filepath.Join(root, fmt.Sprintf("pkg%02d", i))
		writeFile(t, filepath.Join(d, "main.go"), "package main\n")
		switch i % 4 {
		case 0:
			gitDirLayout(t, filepath.Join(d, "sub", ".git"))
		case 1:
			writeFile(t, filepath.Join(d, "deep", ".env"), "S=1")
		case 2:
			writeFile(t, filepath.Join(d, ".claude", "settings.json"), "{}")
		case 3:
			writeFile(t, filepath.Join(d, "a", "b", "linked"), "x")
			if err := os.Link(filepath.Join(d, "a", "b", "linked"), filepath.Join(d, "linked2")); err != nil {
				t.Fatal(err)
			}
		}
	}
	search := func(procs int) []mark {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		f, err := newTestTree(t, root).search(context.Background(), maxDirs)
		if err != nil {
			t.Fatal(err)
		}
		return f.marks
	}
	one, many := search(1), search(4)
	if len(one) != 50 || !slices.Equal(one, many) {
		t.Errorf("%d marks one directory at a time, %d in parallel; equal %v", len(one), len(many), slices.Equal(one, many))
	}
}

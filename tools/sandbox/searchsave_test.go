//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// savedFixture is a tree of 10 directories with something of each kind
// the search marks, aged out of the racy window, and a directory to save
// its search in.
func savedFixture(t *testing.T) (root, saveDir string) {
	t.Helper()
	root = realDir(t, t.TempDir())
	for i := range 10 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%d/sub/f", i)), "x")
	}
	gitDirLayout(t, filepath.Join(root, ".git"))
	writeFile(t, filepath.Join(root, "d1/.env"), "S=1")
	writeFile(t, filepath.Join(root, "d2/sub/.mcp.json"), "{}")
	if err := os.Link(filepath.Join(root, "d0/sub/f"), filepath.Join(root, "d0/linked")); err != nil {
		t.Fatal(err)
	}
	age(t, root)
	return root, filepath.Join(t.TempDir(), "sandbox")
}

// oneShot is a sandbox of f's workspace as kz -p makes it: kz's config
// and data directories below f's home hidden, the search kept in the data
// directory for the next kz, no directory watched.
func (f *fixture) oneShot(t *testing.T) *Sandbox {
	t.Helper()
	data := filepath.Join(f.home, ".local", "share", "kz")
	sb, err := New(Policy{Workspace: f.ws, Home: f.home, Hidden: []string{filepath.Join(f.home, ".config", "kz"), data},
		SearchCache: filepath.Join(data, "sandbox"), Mechanism: KindBubblewrap, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// savedSandbox is the part of a Sandbox that keeps searches: a later kz's
// when given the same directory.
func savedSandbox(saveDir string) *Sandbox {
	return &Sandbox{saveDir: saveDir, pol: Policy{NoWatch: true}}
}

// searchAndSave searches root as one kz would, and saves the search at
// its end.
func searchAndSave(t *testing.T, root, saveDir string) []string {
	t.Helper()
	s := savedSandbox(saveDir)
	tr := s.newTree(root)
	defer tr.close()
	got := marksOf(t, tr)
	s.saveTree(tr)
	return got
}

// savedOnce makes the fixture, searches and saves it as one kz would, and
// returns its root, a sandbox for the next kz, the saved file's path and
// contents, and the marks the search found.
func savedOnce(t *testing.T) (root string, s *Sandbox, path string, st savedTree, want []string) {
	t.Helper()
	root, saveDir := savedFixture(t)
	want = searchAndSave(t, root, saveDir)
	s = savedSandbox(saveDir)
	path = s.savePath(root)
	st, ok := readSaved(path)
	if !ok {
		t.Fatal("no saved search")
	}
	return root, s, path, st, want
}

// TestSavedSearchIsCheckedLikeTheCache: a later kz takes the saved search
// of the directories that did not change (no directory is read again)
// and reads again every one that did: whatever was created, linked,
// replaced, moved or removed in the workspace since, it finds it as the
// cache of a kz that had searched the tree itself does, also when the
// directory's mtime was set back. (Like that cache, it does not see the
// link count of a file in an unchanged directory grow: the new link is
// what is marked.)
func TestSavedSearchIsCheckedLikeTheCache(t *testing.T) {
	root, saveDir := savedFixture(t)
	want := searchAndSave(t, root, saveDir)
	if len(want) != 5 {
		t.Fatalf("first search marks %q", want)
	}

	s := savedSandbox(saveDir)
	tr := s.newTree(root)
	defer tr.close()
	if got := marksOf(t, tr); !slices.Equal(got, want) || tr.reads != 0 {
		t.Fatalf("unchanged tree from the saved search: %d read, marks %q, want %q", tr.reads, got, want)
	}
	// The cache of a kz that searched the tree itself before each
	// change, which a saved search must answer like.
	cache := newTreeWatching(root, false)
	defer cache.close()
	marksOf(t, cache)

	changes := []struct {
		name   string
		change func(t *testing.T)
		mark   string
	}{
		{"a new git directory", func(t *testing.T) { gitDirLayout(t, filepath.Join(root, "d7/sub/.git")) }, "1:d7/sub/.git"},
		{"a new hard link", func(t *testing.T) {
			if err := os.Link(filepath.Join(root, "d4/sub/f"), filepath.Join(root, "d3/sub/g")); err != nil {
				t.Fatal(err)
			}
		}, "2:d3/sub/g"},
		{"a directory replaced", func(t *testing.T) {
			if err := os.RemoveAll(filepath.Join(root, "d5")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "d5/sub/.claude/settings.json"), "{}")
		}, "0:d5/sub/.claude"},
		{"a directory moved", func(t *testing.T) {
			if err := os.Rename(filepath.Join(root, "d6"), filepath.Join(root, "d6moved")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "d6moved/sub/id_rsa"), "k")
		}, "3:d6moved/sub/id_rsa"},
		{"an entry added with the mtime set back", func(t *testing.T) {
			d := filepath.Join(root, "d8/sub")
			fi, err := os.Stat(d)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(d, ".envrc"), "x")
			if err := os.Chtimes(d, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, "0:d8/sub/.envrc"},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			searchAndSave(t, root, saveDir)
			c.change(t)
			// Out of the racy window, so that only the saved stat can
			// tell the directory changed.
			time.Sleep(fineRacy)
			s := savedSandbox(saveDir)
			tr := s.newTree(root)
			defer tr.close()
			got := marksOf(t, tr)
			if !slices.Contains(got, c.mark) {
				t.Errorf("%s missed: marks %q", c.mark, got)
			}
			if cached := marksOf(t, cache); !slices.Equal(got, cached) {
				t.Errorf("marks from the saved search %q, from the process's cache %q", got, cached)
			}
			if tr.reads == 0 || tr.reads > 6 {
				t.Errorf("%d directories read again, want the changed ones only", tr.reads)
			}
		})
	}
	// A directory removed is gone from the next save.
	if err := os.RemoveAll(filepath.Join(root, "d9")); err != nil {
		t.Fatal(err)
	}
	searchAndSave(t, root, saveDir)
	st, ok := readSaved(savedSandbox(saveDir).savePath(root))
	if !ok {
		t.Fatal("no saved search")
	}
	for rel := range st.Dirs {
		if strings.HasPrefix(rel, "d9") {
			t.Errorf("removed %s still saved", rel)
		}
	}
}

// TestSavedSearchNotTrusted: a saved search that may not be kz's own or
// may be out of date is not used: the search reads every directory, as a
// first one does, and finds what a first one finds.
func TestSavedSearchNotTrusted(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, path string, st savedTree)
	}{
		{"writable by others", func(t *testing.T, path string, _ savedTree) {
			if err := os.Chmod(path, 0o622); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlink", func(t *testing.T, path string, _ savedTree) {
			other := path + ".real"
			if err := os.Rename(path, other); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a FIFO", func(t *testing.T, path string, _ savedTree) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"too large", func(t *testing.T, path string, st savedTree) {
			// Valid JSON, made larger than the bound by trailing spaces.
			raw, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			rewrite(t, path, append(raw, strings.Repeat(" ", maxSavedSize)...))
		}},
		{"not JSON", func(t *testing.T, path string, _ savedTree) { rewrite(t, path, []byte("{\"f\":1,\"d\":{")) }},
		{"another format", func(t *testing.T, path string, st savedTree) {
			st.Format++
			rewriteSaved(t, path, st)
		}},
		{"another root", func(t *testing.T, path string, st savedTree) {
			st.Root += "x"
			rewriteSaved(t, path, st)
		}},
		{"read too long ago", func(t *testing.T, path string, st savedTree) {
			for rel, d := range st.Dirs {
				d.Read = time.Now().Add(-maxSavedAge - time.Minute).UnixNano()
				st.Dirs[rel] = d
			}
			rewriteSaved(t, path, st)
		}},
		{"from the future", func(t *testing.T, path string, st savedTree) {
			st.Saved = time.Now().Add(time.Hour).UnixNano()
			rewriteSaved(t, path, st)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, s, path, st, want := savedOnce(t)
			// The saved search says there is nothing to protect: used, it
			// would leave the .git and the rest writable.
			for rel, d := range st.Dirs {
				d.Marks = nil
				st.Dirs[rel] = d
			}
			rewriteSaved(t, path, st)
			c.spoil(t, path, st)
			tr := s.newTree(root)
			defer tr.close()
			if got := marksOf(t, tr); !slices.Equal(got, want) {
				t.Errorf("marks %q, want %q", got, want)
			}
			if tr.reads != 21 {
				t.Errorf("%d directories read, want all 21", tr.reads)
			}
		})
	}
}

// TestSearchCacheOnlyWhereHidden: the search is saved only below a
// directory every command has hidden, which no command can write.
func TestSearchCacheOnlyWhereHidden(t *testing.T) {
	hidden := []string{"/home/u/.config/kz", "/home/u/.local/share/kz"}
	for dir, want := range map[string]string{
		"/home/u/.local/share/kz/sandbox":        "/home/u/.local/share/kz/sandbox",
		"/home/u/.local/share/kz":                "/home/u/.local/share/kz",
		"/home/u/.local/share/kz/../kz2/sandbox": "",
		"/home/u/.local/share/kzx/sandbox":       "",
		"/home/u/.cache/kz/sandbox":              "",
		"relative/sandbox":                       "",
		"":                                       "",
	} {
		if got := hiddenDir(dir, hidden); got != want {
			t.Errorf("hiddenDir(%q) = %q, want %q", dir, got, want)
		}
	}
	ws := realDir(t, t.TempDir())
	data := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		hidden []string
		want   string
	}{{[]string{data}, filepath.Join(data, "sandbox")}, {nil, ""}} {
		sb, err := newWith(Status{Kind: KindNone}, Policy{Workspace: ws, Hidden: c.hidden, SearchCache: filepath.Join(data, "sandbox")})
		if err != nil {
			t.Fatal(err)
		}
		if sb.saveDir != c.want {
			t.Errorf("hidden %q: search kept in %q, want %q", c.hidden, sb.saveDir, c.want)
		}
		_ = sb.Close()
	}
}

// TestSavedSearchStillProtects: under bubblewrap, a kz that finds an
// earlier kz's saved search still protects what was added to the
// workspace since (a nested repository, a hard link to a file outside)
// and what was there before; the earlier kz saved its search on Close.
func TestSavedSearchStillProtects(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	data := filepath.Join(f.home, ".local", "share", "kz")
	writeFile(t, filepath.Join(f.ws, "src/main.go"), "package main\n")
	for _, p := range []string{"lib/a/x.go", "lib/b/y.go", "docs/z.md"} {
		writeFile(t, filepath.Join(f.ws, p), "x\n")
	}
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	age(t, f.ws)
	f.sb = f.oneShot(t)
	if r := f.run(t, wsWrite, "echo ok > src/new.go"); r.code != 0 || r.setupErr != nil {
		t.Fatalf("first command: %d %v %s", r.code, r.setupErr, r.out)
	}
	if err := f.sb.Close(); err != nil {
		t.Fatal(err)
	}
	saved, err := filepath.Glob(filepath.Join(data, "sandbox", "search-*.json"))
	if err != nil || len(saved) != 1 {
		t.Fatalf("saved searches %q, %v", saved, err)
	}

	gitDirLayout(t, filepath.Join(f.ws, "vendor/dep/.git"))
	target := filepath.Join(f.outside, "target")
	writeFile(t, target, "outside\n")
	if err := os.Link(target, filepath.Join(f.ws, "src/linked")); err != nil {
		t.Fatal(err)
	}
	f.sb = f.oneShot(t)
	t.Cleanup(func() { _ = f.sb.Close() })
	script := "echo x > vendor/dep/.git/config; echo x > .git/config; echo x >> src/linked; echo y > src/other.go"
	r := f.run(t, wsWrite, script)
	if r.setupErr != nil {
		t.Fatalf("setup: %v", r.setupErr)
	}
	for p, want := range map[string]string{
		filepath.Join(f.ws, "vendor/dep/.git/config"): "[core]\n\trepositoryformatversion = 0\n",
		filepath.Join(f.ws, ".git/config"):            "[core]\n\trepositoryformatversion = 0\n",
		target:                                        "outside\n",
		filepath.Join(f.ws, "src/other.go"):           "y\n",
	} {
		if got := readFile(t, p); got != want {
			t.Errorf("%s = %q, want %q (output %s)", p, got, want, r.out)
		}
	}
	f.sb.mu.Lock()
	tr := f.sb.trees[f.ws]
	f.sb.mu.Unlock()
	if tr == nil || tr.reads == 0 || tr.reads >= len(tr.dirs) {
		t.Errorf("the saved search was not used for the unchanged directories: %+v", tr)
	}
}

// rewriteSaved writes st to path as saveTree would.
func rewriteSaved(t *testing.T, path string, st savedTree) {
	t.Helper()
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, raw)
}

// rewrite replaces path's content, keeping its mode.
func rewrite(t *testing.T, path string, raw []byte) {
	t.Helper()
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSavedDirectoryAgesByItsRead: a directory is trusted for maxSavedAge
// after it was read, not after the file was last written. A kz that reads
// one changed directory saves the file anew, but carries the others
// forward with the time they were read, so the next kz reads each old one
// again, unchanged or not.
func TestSavedDirectoryAgesByItsRead(t *testing.T) {
	root, s, path, st, want := savedOnce(t)
	d := st.Dirs["d4/sub"]
	d.Read = time.Now().Add(-maxSavedAge - time.Minute).UnixNano()
	st.Dirs["d4/sub"] = d
	rewriteSaved(t, path, st)

	// Another directory changes: the next kz reads it and saves.
	writeFile(t, filepath.Join(root, "d9/sub/g"), "x")
	time.Sleep(fineRacy)
	tr := s.newTree(root)
	defer tr.close()
	if got := marksOf(t, tr); !slices.Equal(got, want) {
		t.Errorf("marks %q, want %q", got, want)
	}
	// d9/sub changed; d4/sub was read too long ago.
	if tr.reads != 2 {
		t.Errorf("%d directories read, want 2", tr.reads)
	}
	s.saveTree(tr)
	st, ok := readSaved(path)
	if !ok {
		t.Fatal("no saved search")
	}
	if old := st.Dirs["d0/sub"].Read; time.Since(time.Unix(0, old)) < fineRacy {
		t.Errorf("an unchanged directory's read time moved to the new save")
	}
	if fresh := st.Dirs["d4/sub"].Read; time.Since(time.Unix(0, fresh)) > time.Minute {
		t.Errorf("the directory read again kept its old read time")
	}
}

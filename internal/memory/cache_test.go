package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// aged sets the modification time of every path to an hour ago, out of
// the racy window, so that a cache may trust them.
func aged(t testing.TB, paths ...string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// rewrite replaces the content of p with text of the same length and
// gives it back its modification time: only a reader of the file can
// tell, so a cache that gives the old text again did not read it.
func rewrite(t *testing.T, p, text string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(text)) != fi.Size() {
		t.Fatalf("rewrite %s: %d bytes for %d", p, len(text), fi.Size())
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func contents(r Result) string {
	var b []string
	for _, f := range r.Files {
		b = append(b, strings.TrimSpace(f.Content))
	}
	return strings.Join(b, "|")
}

// A cached load gives the same files without reading them while nothing
// it looked at changed, and sees every kind of change at the next load:
// an edit, a new file, a removed file, a replaced file, an edited import,
// a new import, a new user directory and a repository root further up.
func TestCacheReloadsOnlyWhatChanged(t *testing.T) {
	top := repo(t)
	ws := filepath.Join(top, "sub")
	user := filepath.Join(t.TempDir(), "kz")
	tree(t, top, map[string]string{"AGENTS.md": "root @docs/a.md", "docs/a.md": "imported A", "sub/CLAUDE.md": "sub one"})
	all := []string{filepath.Join(top, "AGENTS.md"), filepath.Join(top, "docs/a.md"), filepath.Join(ws, "CLAUDE.md")}
	aged(t, all...)
	o := Options{Workspace: ws, UserDir: user}
	var c Cache
	ctx := context.Background()
	check := func(step, want string) {
		t.Helper()
		got := contents(c.Load(ctx, o))
		if got != want {
			t.Fatalf("%s: loaded %q, want %q", step, got, want)
		}
		if plain := contents(Load(ctx, o)); plain != want && !strings.HasPrefix(step, "unchanged") {
			t.Fatalf("%s: an uncached load gives %q, the cache %q", step, plain, got)
		}
	}
	check("first", "root @docs/a.md|imported A|sub one")
	rewrite(t, filepath.Join(ws, "CLAUDE.md"), "sub ONE")
	rewrite(t, filepath.Join(top, "docs/a.md"), "IMPORTED a")
	check("unchanged: nothing is read again", "root @docs/a.md|imported A|sub one")

	tree(t, ws, map[string]string{"CLAUDE.md": "sub two, longer"})
	aged(t, filepath.Join(ws, "CLAUDE.md"))
	check("an edited file", "root @docs/a.md|IMPORTED a|sub two, longer")

	tree(t, top, map[string]string{"docs/a.md": "imported A, edited"})
	aged(t, filepath.Join(top, "docs/a.md"))
	check("an edited import", "root @docs/a.md|imported A, edited|sub two, longer")

	tree(t, top, map[string]string{"AGENTS.md": "root @docs/a.md @docs/b.md", "docs/b.md": "imported B"})
	aged(t, filepath.Join(top, "AGENTS.md"), filepath.Join(top, "docs/b.md"))
	check("a new import", "root @docs/a.md @docs/b.md|imported A, edited|imported B|sub two, longer")

	tree(t, ws, map[string]string{".kz/GEMINI.md": "kz gemini"})
	aged(t, filepath.Join(ws, ".kz/GEMINI.md"))
	check("a new file", "root @docs/a.md @docs/b.md|imported A, edited|imported B|sub two, longer|kz gemini")

	if err := os.Remove(filepath.Join(ws, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	check("a removed file", "root @docs/a.md @docs/b.md|imported A, edited|imported B|kz gemini")

	// Same size, same time, another file: renamed over the old one.
	p := filepath.Join(top, "docs/b.md")
	fi, _ := os.Stat(p)
	tree(t, top, map[string]string{"docs/b.tmp": "imported C"})
	_ = os.Chtimes(filepath.Join(top, "docs/b.tmp"), fi.ModTime(), fi.ModTime())
	if err := os.Rename(filepath.Join(top, "docs/b.tmp"), p); err != nil {
		t.Fatal(err)
	}
	check("a replaced file", "root @docs/a.md @docs/b.md|imported A, edited|imported C|kz gemini")

	tree(t, user, map[string]string{"AGENTS.md": "user rules"})
	aged(t, filepath.Join(user, "AGENTS.md"))
	check("a new user directory", "user rules|root @docs/a.md @docs/b.md|imported A, edited|imported C|kz gemini")

	// An empty .git (a sandbox's mount point left behind) is no
	// repository: nothing changes.
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("an empty .git", "user rules|root @docs/a.md @docs/b.md|imported A, edited|imported C|kz gemini")
	// A repository root further down: a repository appears in the
	// workspace, which becomes the root, so the files above it are no
	// longer the project's.
	tree(t, ws, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	check("a new repository root", "user rules|kz gemini")
}

// A file written within the file system's clock tick of a load is not
// trusted: the next load reads it again, so a second write of the same
// size in the same tick is not lost.
func TestCacheDoesNotTrustARacyFile(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{"AGENTS.md": "version 1"})
	var c Cache
	o := Options{Workspace: top}
	if got := contents(c.Load(context.Background(), o)); got != "version 1" {
		t.Fatalf("first load %q", got)
	}
	rewrite(t, filepath.Join(top, "AGENTS.md"), "version 2")
	if got := contents(c.Load(context.Background(), o)); got != "version 2" {
		t.Fatalf("a racy file was trusted: %q", got)
	}
}

// A caller that changes the result it got does not change the cache's.
func TestCacheResultIsTheCallers(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{"AGENTS.md": "rules"})
	aged(t, filepath.Join(top, "AGENTS.md"))
	var c Cache
	o := Options{Workspace: top}
	r := c.Load(context.Background(), o)
	r.Files[0].Content = "tampered"
	if got := contents(c.Load(context.Background(), o)); got != "rules" {
		t.Fatalf("the cache gave %q", got)
	}
}

// gitRepo makes a repository whose index and HEAD are an hour old (a
// worktree's .git file when worktree is set), and returns its top and
// git directory.
func gitRepo(t *testing.T, worktree bool) (string, string) {
	t.Helper()
	top := t.TempDir()
	gitDir := filepath.Join(top, ".git")
	if worktree {
		gitDir = filepath.Join(t.TempDir(), "worktrees", "w")
		tree(t, top, map[string]string{".git": "gitdir: " + gitDir + "\n"})
	}
	tree(t, gitDir, map[string]string{"HEAD": "ref: refs/heads/main\n", "index": "index v1"})
	aged(t, filepath.Join(gitDir, "HEAD"), filepath.Join(gitDir, "index"))
	return top, gitDir
}

// The git status runs again only when the index or HEAD changed, or the
// session counted a change to the workspace; an unchanged repository
// costs no run. A failed run, a racy index or a repository without an
// index is not kept.
func TestStatusCacheRunsGitOnlyAfterAChange(t *testing.T) {
	for _, worktree := range []bool{false, true} {
		top, gitDir := gitRepo(t, worktree)
		var runs atomic.Int32
		var fail atomic.Bool
		status := func(context.Context, string) ([]byte, error) {
			runs.Add(1)
			if fail.Load() {
				return nil, errors.New("git failed")
			}
			return []byte(" M a.go\n"), nil
		}
		var changes atomic.Uint64
		var c StatusCache
		st := c.Wrap(status, changes.Load)
		step := func(what string, want int32) {
			t.Helper()
			out, err := st(context.Background(), top)
			if fail.Load() != (err != nil) || err == nil && string(out) != " M a.go\n" {
				t.Fatalf("%s: %q, %v", what, out, err)
			}
			if n := runs.Load(); n != want {
				t.Fatalf("worktree %v, %s: git ran %d times, want %d", worktree, what, n, want)
			}
		}
		step("first", 1)
		step("unchanged", 1)
		tree(t, gitDir, map[string]string{"index": "index v2, longer"})
		aged(t, filepath.Join(gitDir, "index"))
		step("a new index", 2)
		step("unchanged again", 2)
		tree(t, gitDir, map[string]string{"HEAD": "0123456789abcdef0123456789abcdef01234567\n"})
		aged(t, filepath.Join(gitDir, "HEAD"))
		step("a new HEAD", 3)
		changes.Add(1)
		step("a change kz saw", 4)
		step("unchanged after it", 4)
		changes.Add(1)
		fail.Store(true)
		step("a failing run", 5)
		fail.Store(false)
		step("after a failure", 6)
		tree(t, gitDir, map[string]string{"index": "index v3 now"})
		step("a racy index", 7)
		step("not trusted", 8)
	}
	noIndex := t.TempDir()
	tree(t, noIndex, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	aged(t, filepath.Join(noIndex, ".git/HEAD"))
	var runs atomic.Int32
	var c StatusCache
	st := c.Wrap(func(context.Context, string) ([]byte, error) { runs.Add(1); return nil, nil }, nil)
	_, _ = st(context.Background(), noIndex)
	_, _ = st(context.Background(), noIndex)
	if runs.Load() != 2 {
		t.Errorf("a repository without an index: git ran %d times, want 2", runs.Load())
	}
}

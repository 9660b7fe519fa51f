package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pinFixture is setup plus a .git/hooks directory, a credential file and
// a directory d with a file, the usual targets of a swap.
func pinFixture(t *testing.T) (*Workspace, string) {
	t.Helper()
	w, base := setup(t)
	for rel, content := range map[string]string{
		".git/hooks/pre-commit.sample": "sample",
		".env":                         "API_KEY=hunter2",
		"d/x":                          "inside",
		"notes":                        "plain notes",
		"secrets/notes":                "SECRET NOTES",
	} {
		p := filepath.Join(w.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w, base
}

// replaceWithLink replaces the workspace entry rel (file or directory)
// with a symbolic link to target.
func replaceWithLink(t *testing.T, w *Workspace, rel, target string) {
	t.Helper()
	p := filepath.Join(w.Dir(), rel)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestPinnedSwapBetweenCheckAndUse is the class "no gap between verdict
// and action" at the workspace level: a path is pinned (what the gate
// judges), then something is swapped in, then the pinned path is used.
// Every use must fail, and nothing may be written or read elsewhere.
func TestPinnedSwapBetweenCheckAndUse(t *testing.T) {
	t.Parallel()
	type op string
	const (
		opRead  op = "read"
		opWrite op = "write"
		opList  op = "list"
	)
	cases := []struct {
		name string
		path string
		op   op
		swap func(t *testing.T, w *Workspace, base string)
		want error
	}{
		{"dir to link to .git/hooks, write", "d/pre-commit", opWrite, func(t *testing.T, w *Workspace, _ string) {
			replaceWithLink(t, w, "d", ".git/hooks")
		}, ErrChanged},
		{"dir to absolute link to .git/hooks, write", "d/pre-commit", opWrite, func(t *testing.T, w *Workspace, _ string) {
			replaceWithLink(t, w, "d", filepath.Join(w.Dir(), ".git", "hooks"))
		}, ErrChanged},
		{"dir to link outside, overwrite", "d/x", opWrite, func(t *testing.T, w *Workspace, base string) {
			replaceWithLink(t, w, "d", filepath.Join(base, "outside"))
		}, ErrChanged},
		{"dir to link outside, create", "d/new", opWrite, func(t *testing.T, w *Workspace, base string) {
			replaceWithLink(t, w, "d", filepath.Join(base, "outside"))
		}, ErrChanged},
		{"dir to link outside, read", "d/x", opRead, func(t *testing.T, w *Workspace, base string) {
			replaceWithLink(t, w, "d", filepath.Join(base, "outside"))
		}, ErrChanged},
		{"dir to link to a secrets dir, read", "d/notes", opRead, func(t *testing.T, w *Workspace, _ string) {
			if err := os.WriteFile(filepath.Join(w.Dir(), "d", "notes"), []byte("harmless"), 0o644); err != nil {
				t.Fatal(err)
			}
			replaceWithLink(t, w, "d", "secrets")
		}, ErrChanged},
		{"file to link to .env, read", "notes", opRead, func(t *testing.T, w *Workspace, _ string) {
			replaceWithLink(t, w, "notes", ".env")
		}, ErrChanged},
		{"file to link outside, read", "notes", opRead, func(t *testing.T, w *Workspace, base string) {
			replaceWithLink(t, w, "notes", filepath.Join(base, "outside", "x"))
		}, ErrChanged},
		{"file to link to .git/config, write", "notes", opWrite, func(t *testing.T, w *Workspace, _ string) {
			replaceWithLink(t, w, "notes", ".git/hooks/pre-commit.sample")
		}, ErrChanged},
		{"missing dir appears as a link to .git/hooks", "new/pre-commit", opWrite, func(t *testing.T, w *Workspace, _ string) {
			replaceWithLink(t, w, "new", ".git/hooks")
		}, ErrChanged},
		{"missing nested dir appears as a link outside", "a/b/c", opWrite, func(t *testing.T, w *Workspace, base string) {
			if err := os.Mkdir(filepath.Join(w.Dir(), "a"), 0o755); err != nil {
				t.Fatal(err)
			}
			replaceWithLink(t, w, "a/b", filepath.Join(base, "outside"))
		}, ErrChanged},
		{"dir replaced by another dir", "d/x", opWrite, func(t *testing.T, w *Workspace, _ string) {
			if err := os.Rename(filepath.Join(w.Dir(), "d"), filepath.Join(w.Dir(), "d.old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(w.Dir(), "d"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, ErrChanged},
		{"dir removed", "d/x", opWrite, func(t *testing.T, w *Workspace, _ string) {
			if err := os.RemoveAll(filepath.Join(w.Dir(), "d")); err != nil {
				t.Fatal(err)
			}
		}, ErrChanged},
		{"dir to link, list", "d", opList, func(t *testing.T, w *Workspace, base string) {
			replaceWithLink(t, w, "d", filepath.Join(base, "outside"))
		}, ErrChanged},
		{"dir to link in the workspace, list", "d", opList, func(t *testing.T, w *Workspace, _ string) {
			replaceWithLink(t, w, "d", "secrets")
		}, ErrChanged},
		{"file to FIFO, read", "notes", opRead, func(t *testing.T, w *Workspace, _ string) {
			p := filepath.Join(w.Dir(), "notes")
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, ErrNotRegular},
		{"file to FIFO, write", "notes", opWrite, func(t *testing.T, w *Workspace, _ string) {
			p := filepath.Join(w.Dir(), "notes")
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, ErrNotRegular},
		{"file to hard link outside, write", "notes", opWrite, func(t *testing.T, w *Workspace, base string) {
			p := filepath.Join(w.Dir(), "notes")
			_ = os.Remove(p)
			if err := os.Link(filepath.Join(base, "outside", "x"), p); err != nil {
				t.Skip("link:", err)
			}
		}, ErrHardLink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, base := pinFixture(t)
			p, err := w.Pin(c.path)
			if err != nil {
				t.Fatal(err)
			}
			c.swap(t, w, base)
			done := make(chan error, 1)
			var got []byte
			go func() {
				switch c.op {
				case opRead:
					var err error
					got, _, err = w.ReadPinned(p, 1<<20)
					done <- err
				case opWrite:
					done <- w.WritePinned(p, []byte("#!/bin/sh\necho pwned\n"), 0o755)
				case opList:
					ents, err := w.ReadDirPinned(p)
					for _, e := range ents {
						got = append(got, e.Name()+"\n"...)
					}
					done <- err
				}
			}()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the operation hung")
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("%s %s after the swap: %v (read %q), want %v", c.op, c.path, err, got, c.want)
			}
			if len(got) > 0 {
				t.Errorf("returned data after the swap: %q", got)
			}
			assertNothingEscaped(t, w, base)
		})
	}
}

// assertNothingEscaped checks that .git/hooks holds only its sample, the
// credential and the secrets are as they were, and nothing changed
// outside.
func assertNothingEscaped(t *testing.T, w *Workspace, base string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(w.Dir(), ".git", "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "pre-commit.sample" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf(".git/hooks holds %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), ".git", "hooks", "pre-commit.sample")); string(b) != "sample" {
		t.Errorf("hook sample changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), ".env")); string(b) != "API_KEY=hunter2" {
		t.Errorf(".env changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), "secrets", "notes")); string(b) != "SECRET NOTES" {
		t.Errorf("secrets/notes changed: %q", b)
	}
	assertOutsideUnchanged(t, base)
}

// TestPinnedUseWithoutSwapWorks checks the pinned operations do what the
// unpinned ones do when nothing changes, through in-root links too.
func TestPinnedUseWithoutSwapWorks(t *testing.T) {
	t.Parallel()
	w, _ := pinFixture(t)
	if err := os.Symlink("d", filepath.Join(w.Dir(), "alias")); err != nil {
		t.Fatal(err)
	}
	p, err := w.Pin("alias/x")
	if err != nil {
		t.Fatal(err)
	}
	if p.Rel() != "alias/x" || p.Resolved() != "d/x" {
		t.Fatalf("pinned %q -> %q", p.Rel(), p.Resolved())
	}
	if err := w.WritePinned(p, []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if b, _, err := w.ReadPinned(p, 100); err != nil || string(b) != "new" {
		t.Fatalf("read back %q %v", b, err)
	}
	n, err := w.Pin("fresh/deep/file")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WritePinned(n, []byte("f"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(w.Dir(), "fresh/deep/file")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created %v %v", fi, err)
	}
	if _, _, err := w.ReadPinned(mustPin(t, w, "nothing/here"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read of a missing file: %v", err)
	}
}

func mustPin(t *testing.T, w *Workspace, p string) Pinned {
	t.Helper()
	pin, err := w.Pin(p)
	if err != nil {
		t.Fatal(err)
	}
	return pin
}

// TestWriteDropsSetuidKeepsMode: a replaced file keeps its permission
// bits but loses setuid and setgid, as a write(2) by a non-owner would;
// otherwise a model could rewrite a setuid program's content and keep its
// privilege.
func TestWriteDropsSetuidKeepsMode(t *testing.T) {
	t.Parallel()
	w, _ := setup(t)
	p := filepath.Join(w.Dir(), "tool")
	if err := os.WriteFile(p, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("tool", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode after write = %v, want 0755 without setuid/setgid", fi.Mode())
	}
	if err := w.WriteFile("new-tool", []byte("x"), 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(w.Dir(), "new-tool")); fi.Mode()&os.ModeSetuid != 0 {
		t.Fatalf("a new file got setuid: %v", fi.Mode())
	}
}

// TestRemoveRenameMkdirNeverFollowTheLastName: Remove and Rename act on a
// link itself, MkdirAll does not create through a link that leaves the
// workspace, and none of them leaves the workspace through `..` after a
// link.
func TestRemoveRenameMkdirNeverFollowTheLastName(t *testing.T) {
	t.Parallel()
	w, base := pinFixture(t)
	if err := os.Symlink(filepath.Join(base, "outside", "x"), filepath.Join(w.Dir(), "out-file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(w.Dir(), "out-dir")); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("out-file"); err != nil {
		t.Fatalf("remove the link itself: %v", err)
	}
	if err := w.Rename("out-dir", "moved-link"); err != nil {
		t.Fatalf("rename the link itself: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(w.Dir(), "moved-link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("moved-link: %v %v", fi, err)
	}
	if err := w.MkdirAll("moved-link/sub", 0o755); !errors.Is(err, ErrOutside) {
		t.Errorf("mkdir through a link outside: %v", err)
	}
	if err := w.Remove("moved-link/x"); !errors.Is(err, ErrOutside) {
		t.Errorf("remove through a link outside: %v", err)
	}
	if err := w.Rename("notes", "moved-link/notes"); !errors.Is(err, ErrOutside) {
		t.Errorf("rename into a link outside: %v", err)
	}
	if err := w.Remove("."); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("remove the workspace: %v", err)
	}
	if err := w.Remove("d"); err == nil {
		t.Error("removed a non-empty directory")
	}
	if err := w.Remove("d/x"); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("d"); err != nil {
		t.Fatalf("remove an empty directory: %v", err)
	}
	assertNothingEscaped(t, w, base)
}

// TestRacingSwapsAgainstPinnedOperations races a goroutine that flips a
// directory between a real directory and links to .git/hooks, to outside
// and to a credential directory, against pin-then-use writes, reads and
// listings, a fixed number of times. Nothing may be written through any
// link, and nothing but the inside file's content may be read.
func TestRacingSwapsAgainstPinnedOperations(t *testing.T) {
	t.Parallel()
	w, base := pinFixture(t)
	flip := filepath.Join(w.Dir(), "flip")
	targets := []string{".git/hooks", filepath.Join(base, "outside"), "secrets", filepath.Join(w.Dir(), ".git", "hooks")}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			_ = os.RemoveAll(flip)
			if os.Mkdir(flip, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(flip, "notes"), []byte("inside"), 0o644)
			}
			_ = os.RemoveAll(flip)
			_ = os.Symlink(targets[i%len(targets)], flip)
		}
	}()
	// judged stands in for the gate: it allows only a path that resolved
	// into the real directory, as the gate would deny .git/hooks/x and
	// outside paths.
	judged := func(name string) (Pinned, bool) {
		p, err := w.Pin(name)
		return p, err == nil && (p.Resolved() == "flip" || strings.HasPrefix(p.Resolved(), "flip/"))
	}
	const rounds = 1000
	var wrote, read int
	for i := range rounds {
		for _, name := range []string{"flip/notes", fmt.Sprintf("flip/n%d", i), "flip/pre-commit"} {
			if p, ok := judged(name); ok && w.WritePinned(p, []byte("pwned"), 0o755) == nil {
				wrote++
			}
		}
		if p, ok := judged("flip/notes"); ok {
			if b, _, err := w.ReadPinned(p, 100); err == nil {
				read++
				if s := string(b); s != "inside" && s != "pwned" && s != "" {
					stop.Store(true)
					wg.Wait()
					t.Fatalf("read %q through a swapped link", b)
				}
			}
		}
		if p, ok := judged("flip"); ok {
			ents, _ := w.ReadDirPinned(p)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "pre-commit.sample") || e.Name() == "x" {
					stop.Store(true)
					wg.Wait()
					t.Fatalf("listed %s through a swapped link", e.Name())
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d rounds: %d writes and %d reads landed inside", rounds, wrote, read)
	assertNothingEscaped(t, w, base)
}

package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setup makes <tmp>/proj (the workspace), <tmp>/proj-evil and <tmp>/outside
// with a file each.
func setup(t *testing.T) (w *Workspace, base string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proj", "proj-evil", "outside"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, d, "x"), []byte("secret "+d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err = Open(filepath.Join(base, "proj"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, base
}

func TestRel(t *testing.T) {
	t.Parallel()
	w, base := setup(t)
	cases := []struct {
		in   string
		want string
		err  error
	}{
		{"a/b.go", "a/b.go", nil},
		{"./a/../b", "b", nil},
		{".", ".", nil},
		{filepath.Join(base, "proj", "sub", "f.txt"), "sub/f.txt", nil},
		{filepath.Join(base, "proj"), ".", nil},
		{"../outside/x", "", ErrOutside},
		{"sub/../../x", "", ErrOutside},
		{"..", "", ErrOutside},
		{filepath.Join(base, "proj-evil", "x"), "", ErrOutside},
		{filepath.Join(base, "proj", "..", "proj-evil", "x"), "", ErrOutside},
		{"/etc/passwd", "", ErrOutside},
		{"", "", ErrInvalidPath},
		{"a\x00b", "", ErrInvalidPath},
		{"a\nb", "", ErrInvalidPath},
		{"a\x1b[31mb", "", ErrInvalidPath},
		{"a\rb", "", ErrInvalidPath},
		{"a\x7fb", "", ErrInvalidPath},
		{"a\u0085b", "", ErrInvalidPath},
		{"a\xffb", "", ErrInvalidPath},
	}
	for _, c := range cases {
		got, err := w.Rel(c.in)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("Rel(%q) = %q, %v; want %v", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != filepath.FromSlash(c.want) {
			t.Errorf("Rel(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestInvalidNamesNeverReachTheFilesystem checks that rejected names do not
// create anything: a file named with NUL/newline/ESC cannot exist afterwards.
func TestInvalidNamesNeverReachTheFilesystem(t *testing.T) {
	t.Parallel()
	w, _ := setup(t)
	for _, name := range []string{"a\x00b", "evil\nname", "esc\x1b]0;title\x07", "tab\there"} {
		if err := w.WriteFile(name, []byte("x"), 0o644); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("WriteFile(%q) = %v, want ErrInvalidPath", name, err)
		}
		if _, _, err := w.ReadFile(name, 10); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ReadFile(%q) = %v, want ErrInvalidPath", name, err)
		}
	}
	ents, err := os.ReadDir(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "x" {
		t.Fatalf("workspace changed: %v", ents)
	}
}

func TestSymlinkOutboxDenied(t *testing.T) {
	t.Parallel()
	w, base := setup(t)
	outside := filepath.Join(base, "outside")
	if err := os.Symlink(outside, filepath.Join(w.Dir(), "outbox")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/x", filepath.Join(w.Dir(), "rel-out")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.ReadFile("outbox/x", 1<<20); !errors.Is(err, ErrOutside) {
		t.Errorf("read through outbox: %v", err)
	}
	if _, _, err := w.ReadFile("rel-out", 1<<20); !errors.Is(err, ErrOutside) {
		t.Errorf("read through relative link: %v", err)
	}
	if err := w.WriteFile("outbox/x", []byte("pwned"), 0o644); !errors.Is(err, ErrOutside) {
		t.Errorf("write through outbox: %v", err)
	}
	if err := w.WriteFile("outbox/new", []byte("pwned"), 0o644); !errors.Is(err, ErrOutside) {
		t.Errorf("create through outbox: %v", err)
	}
	if err := w.WriteFile("rel-out", []byte("pwned"), 0o644); !errors.Is(err, ErrOutside) {
		t.Errorf("write through relative link: %v", err)
	}
	if _, err := w.Resolve("outbox/x"); !errors.Is(err, ErrOutside) {
		t.Errorf("resolve outbox: %v", err)
	}
	if _, err := w.ReadDir("outbox"); !errors.Is(err, ErrOutside) {
		t.Errorf("list outbox: %v", err)
	}
	assertOutsideUnchanged(t, base)
}

func assertOutsideUnchanged(t *testing.T, base string) {
	t.Helper()
	for _, d := range []string{"outside", "proj-evil"} {
		ents, err := os.ReadDir(filepath.Join(base, d))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 {
			t.Errorf("%s has %d entries, want 1", d, len(ents))
		}
		b, err := os.ReadFile(filepath.Join(base, d, "x"))
		if err != nil || string(b) != "secret "+d {
			t.Errorf("%s/x changed: %q %v", d, b, err)
		}
	}
	ents, _ := os.ReadDir(base)
	if len(ents) != 3 {
		t.Errorf("base has %d entries, want 3", len(ents))
	}
}

func TestInRootSymlinkResolves(t *testing.T) {
	t.Parallel()
	w, _ := setup(t)
	if err := os.MkdirAll(filepath.Join(w.Dir(), ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(w.Dir(), "notgit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(w.Dir(), ".git", "hooks"), filepath.Join(w.Dir(), "abs-hooks")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"notgit/hooks/pre-commit": ".git/hooks/pre-commit",
		"abs-hooks/x":             ".git/hooks/x",
		"new/dir/file":            "new/dir/file",
	} {
		got, err := w.Resolve(in)
		if err != nil || got != filepath.FromSlash(want) {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if err := os.Symlink("loop", filepath.Join(w.Dir(), "loop")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Resolve("loop/x"); err == nil {
		t.Error("symlink loop resolved")
	}
	// Writing through an in-root link writes its target and keeps the link.
	if err := os.WriteFile(filepath.Join(w.Dir(), "real"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(w.Dir(), "alias")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("alias", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), "real")); string(b) != "new" {
		t.Errorf("target = %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(w.Dir(), "alias")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("alias is no longer a symlink")
	}
}

func TestHardLinkRefused(t *testing.T) {
	t.Parallel()
	w, base := setup(t)
	if err := os.Link(filepath.Join(base, "outside", "x"), filepath.Join(w.Dir(), "hl")); err != nil {
		t.Skip("hard links not supported:", err)
	}
	if err := w.WriteFile("hl", []byte("pwned"), 0o644); !errors.Is(err, ErrHardLink) {
		t.Errorf("write hard link: %v", err)
	}
	assertOutsideUnchanged(t, base)
}

func TestFIFORefusedWithoutHanging(t *testing.T) {
	t.Parallel()
	w, _ := setup(t)
	if err := syscall.Mkfifo(filepath.Join(w.Dir(), "fifo"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := w.ReadFile("fifo", 100)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("read fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO hung")
	}
	if err := w.WriteFile("fifo", []byte("x"), 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("write fifo: %v", err)
	}
	if _, _, err := w.ReadFile(".", 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("read dir: %v", err)
	}
}

func TestWriteKeepsModeAndIsAtomic(t *testing.T) {
	t.Parallel()
	w, _ := setup(t)
	p := filepath.Join(w.Dir(), "run.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("run.sh", []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode = %v, %v; want 0755", fi.Mode(), err)
	}
	if err := w.WriteFile("deep/new/file.txt", []byte("n"), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, err = os.Stat(filepath.Join(w.Dir(), "deep/new/file.txt"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("new mode = %v, %v", fi, err)
	}
	// No temp files are left behind.
	ents, _ := os.ReadDir(w.Dir())
	for _, e := range ents {
		if filepath.Ext(e.Name()) != "" && e.Name()[0] == '.' {
			t.Errorf("leftover %s", e.Name())
		}
	}
	data, _, err := w.ReadFile("run.sh", 1<<10)
	if err != nil || !bytes.Contains(data, []byte("echo hi")) {
		t.Fatalf("read back %q %v", data, err)
	}
	if _, _, err := w.ReadFile("run.sh", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size cap: %v", err)
	}
}

func TestRemoveRename(t *testing.T) {
	t.Parallel()
	w, base := setup(t)
	if err := w.Rename("x", "moved/y"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(w.Dir(), "moved", "y")); err != nil {
		t.Fatal(err)
	}
	if err := w.Rename("moved/y", "../outside/y"); !errors.Is(err, ErrOutside) {
		t.Errorf("rename outside: %v", err)
	}
	if err := w.Remove("../outside/x"); !errors.Is(err, ErrOutside) {
		t.Errorf("remove outside: %v", err)
	}
	if err := w.Remove("moved/y"); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("."); err == nil {
		t.Error("removed the workspace")
	}
	assertOutsideUnchanged(t, base)
}

// TestRacingSymlinkFlip flips a directory between a real directory and a
// symlink to outside while another goroutine writes and reads through it in
// a loop. Nothing may ever appear outside.
func TestRacingSymlinkFlip(t *testing.T) {
	t.Parallel()
	w, base := setup(t)
	outside := filepath.Join(base, "outside")
	flip := filepath.Join(w.Dir(), "flip")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			_ = os.RemoveAll(flip)
			_ = os.Mkdir(flip, 0o755)
			_ = os.RemoveAll(flip)
			_ = os.Symlink(outside, flip)
		}
	}()
	var wrote, refused int
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := w.WriteFile("flip/x", []byte("pwned"), 0o644); err == nil {
			wrote++
		} else {
			refused++
		}
		_ = w.WriteFile("flip/new", []byte("pwned"), 0o644)
		_, _, _ = w.ReadFile("flip/x", 100)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("writes that landed inside: %d, refused: %d", wrote, refused)
	if b, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(b) != "secret outside" {
		t.Fatalf("outside/x changed: %q %v", b, err)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		names := []string{}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("files appeared outside: %v", names)
	}
}

// TestInvalidNamesRejectedBeforeAnySyscall closes the workspace's root
// first: an operation that reached the file system would fail with
// os.ErrClosed, so getting ErrInvalidPath instead proves the name was
// refused before any syscall. A valid name does reach the closed root, so
// the check is not vacuous.
func TestInvalidNamesRejectedBeforeAnySyscall(t *testing.T) {
	t.Parallel()
	w, _ := setup(t)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Lstat("x"); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("a valid name on the closed root: %v, want os.ErrClosed", err)
	}
	for _, name := range []string{"a\x00b", "x/\x00/../../outside/x", "evil\nname", "cr\rname", "esc\x1b[2J", "bell\x07",
		"del\x7f", "c1\u0085next", "bad\xffutf8", "", "/abs/\x00"} {
		ops := map[string]func() error{
			"Rel":       func() error { _, err := w.Rel(name); return err },
			"Abs":       func() error { _, err := w.Abs(name); return err },
			"Resolve":   func() error { _, err := w.Resolve(name); return err },
			"Lstat":     func() error { _, err := w.Lstat(name); return err },
			"Stat":      func() error { _, err := w.Stat(name); return err },
			"ReadFile":  func() error { _, _, err := w.ReadFile(name, 10); return err },
			"ReadDir":   func() error { _, err := w.ReadDir(name); return err },
			"Pin":       func() error { _, err := w.Pin(name); return err },
			"WriteFile": func() error { return w.WriteFile(name, []byte("x"), 0o644) },
			"MkdirAll":  func() error { return w.MkdirAll(name, 0o755) },
			"Remove":    func() error { return w.Remove(name) },
			"RenameOld": func() error { return w.Rename(name, "y") },
			"RenameNew": func() error { return w.Rename("x", name) },
		}
		for op, f := range ops {
			err := f()
			if !errors.Is(err, ErrInvalidPath) || errors.Is(err, os.ErrClosed) {
				t.Errorf("%s(%q) = %v, want ErrInvalidPath before any syscall", op, name, err)
			}
		}
	}
}

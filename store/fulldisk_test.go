package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// smallDisk mounts a tmpfs of the given size on a new folder (see the
// full-disk test of package main).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("KZ_REQUIRE_FULLDISK") != "" {
			t.Fatalf("mount a %s tmpfs on %s: %v (KZ_REQUIRE_FULLDISK is set)", size, dir, err)
		}
		t.Skipf("cannot mount a %s tmpfs to fill (%v): the full-disk test needs root; set KZ_REQUIRE_FULLDISK to make this a failure", size, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillUp writes a file in dir until the file system is full.
func fillUp(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	block := make([]byte, 16<<10)
	for {
		if _, err := f.Write(block); errors.Is(err, syscall.ENOSPC) {
			return path
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenOnAFullDisk: with the disk full, Open still opens the database
// for reading; the turn a dead kz left open, which it cannot close without
// space, stays open, and Recovered says why. Once there is space the next
// Open closes it.
func TestOpenOnAFullDisk(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(smallDisk(t, "2m"), "kz.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	if err := st.writeBatch(ctx, []engine.Event{ev("s", 1, engine.EventUserMessage, "go"), ev("s", 2, engine.EventTextDelta, "half\n")}); err != nil {
		t.Fatal(err)
	}
	// The turn's kz is dead.
	if _, err := st.db.Exec(`UPDATE turns SET pid = 999999999, pid_start = 1`); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	filler := fillUp(t, filepath.Dir(path))
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Logf("%s left by the last close", suffix)
		}
	}
	st, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	t.Logf("Recovered: %s", st.Recovered)
	list, err := st.ListSessions(ctx, "", 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list on a full disk: %v %v", list, err)
	}
	turns, err := st.Turns(ctx, "s")
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns: %v %v", turns, err)
	}
	if turns[0].Status == "" && !strings.Contains(st.Recovered, "is full") {
		t.Errorf("the turn stayed open without a word: %q", st.Recovered)
	}
	// A turn started anyway fails at its first write, saying why.
	w := st.NewWriter()
	_ = w.Append(ev("s", 3, engine.EventUserMessage, "again"))
	if err := w.Flush(ctx); err == nil || !strings.Contains(err.Error(), "is full") {
		t.Errorf("a write on a full disk: %v", err)
	}
	_ = w.Close()
	_ = st.Close()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if turns, _ := st.Turns(ctx, "s"); len(turns) != 1 || turns[0].Status != "interrupted" {
		t.Fatalf("after freeing space: %+v", turns)
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/testfs"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/workspace"
)

// storeApplier is the applier kz builds: the real workspace, and
// snapshots in a real SQLite store that record the workspace's folder.
func storeApplier(t *testing.T, st *store.Store, work, session string) *patch.Applier {
	t.Helper()
	ws, err := workspace.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return &patch.Applier{FS: ws, Snapshots: changeLog{st: st, sessionID: session, workspace: ws.Dir()},
		JournalDir: filepath.Join(t.TempDir(), "journal"), Root: ws.Dir()}
}

// undoLast is kz undo on the store: patch.UndoLast over the session's
// change log in the store.
func undoLast(ctx context.Context, a *patch.Applier, st *store.Store, session string) (string, error) {
	return patch.UndoLast(ctx, a, changeLog{st: st, sessionID: session}, session)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfs.Write(t, dir, files)
}

// sr is a search/replace proposal of one block.
func sr(path, s, r string) string {
	return fmt.Sprintf("%s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n", path, s, r)
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.CreateSession(context.Background(), "s1", "/first/folder", "scripted", "m", engine.ModePatchProposal); err != nil {
		t.Fatal(err)
	}
	return st
}

func applyPlanText(t *testing.T, a *patch.Applier, text string) {
	t.Helper()
	ctx := context.Background()
	p, err := patch.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.Validate(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
}

// TestUndoRemovesTheDirectoriesTheChangeCreated: undoing a change that
// created new/dir/file.txt and keep/x.txt removes new/dir and new (they
// did not exist and are empty again) but keeps keep/, which existed
// (empty) before the change, and a directory that holds a file written
// since.
func TestUndoRemovesTheDirectoriesTheChangeCreated(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := storeApplier(t, st, work, "s1")
	applyPlanText(t, a, "*** Begin Patch\n*** Add File: new/dir/file.txt\n+hello\n*** Add File: keep/x.txt\n+x\n*** Add File: other/sub/y.txt\n+y\n*** End Patch\n")
	if err := os.WriteFile(filepath.Join(work, "other", "since.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := undoLast(ctx, a, st, "s1"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"new", "keep/x.txt", "other/sub"} {
		if _, err := os.Lstat(filepath.Join(work, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after undo (%v)", gone, err)
		}
	}
	for _, kept := range []string{"keep", "other/since.txt"} {
		if _, err := os.Lstat(filepath.Join(work, kept)); err != nil {
			t.Errorf("undo removed %s, which the change did not create: %v", kept, err)
		}
	}
}

// TestUndoActsOnlyInTheFolderOfTheChange: a session resumed in another
// folder applies its change there; undo from the first folder is refused
// (naming the folder) and touches nothing; undo from the change's folder
// restores it.
func TestUndoActsOnlyInTheFolderOfTheChange(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	wa, wb := t.TempDir(), t.TempDir()
	for _, w := range []string{wa, wb} {
		writeFiles(t, w, map[string]string{"greeting.txt": "hello moon\n"})
	}
	applyPlanText(t, storeApplier(t, st, wb, "s1"), sr("greeting.txt", "hello moon", "hello world"))
	// The file in wa already holds what the change wrote in wb: only the
	// recorded folder can tell the two apart.
	writeFiles(t, wa, map[string]string{"greeting.txt": "hello world\n"})

	_, err := undoLast(ctx, storeApplier(t, st, wa, "s1"), st, "s1")
	var fm *patch.FolderMismatchError
	if !errors.As(err, &fm) || !strings.Contains(err.Error(), wb) || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("undo from the other folder: %v, want a refusal naming %s", err, wb)
	}
	for dir, want := range map[string]string{wa: "hello world\n", wb: "hello world\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, "greeting.txt")); string(b) != want {
			t.Fatalf("a refused undo changed %s: %q", dir, b)
		}
	}
	if _, err := undoLast(ctx, storeApplier(t, st, wb, "s1"), st, "s1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(wb, "greeting.txt")); string(b) != "hello moon\n" {
		t.Fatalf("undo in the change's folder: %q", b)
	}
	if _, err := undoLast(ctx, storeApplier(t, st, wb, "s1"), st, "s1"); !errors.Is(err, patch.ErrNothingToUndo) {
		t.Fatalf("second undo: %v", err)
	}
}

// TestUndoConflictIsOneReadableLine: the refusal names the files without
// Go syntax, says what to do, and does not repeat its prefix.
func TestUndoConflictIsOneReadableLine(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "one\n", "b.txt": "two\n"})
	a := storeApplier(t, st, work, "s1")
	applyPlanText(t, a, sr("a.txt", "one", "ONE")+sr("b.txt", "two", "TWO"))
	writeFiles(t, work, map[string]string{"a.txt": "mine\n", "b.txt": "mine too\n"})
	_, err := undoLast(ctx, a, st, "s1")
	if !errors.Is(err, patch.ErrUndoConflict) {
		t.Fatalf("undo after later edits: %v", err)
	}
	msg := err.Error()
	change, _ := st.LastChange(ctx, "s1")
	if strings.ContainsAny(msg, "[]\n") || strings.Count(msg, change.ID) != 1 || !strings.Contains(msg, "a.txt, b.txt") ||
		!strings.Contains(msg, "put them back") {
		t.Fatalf("message %q", msg)
	}
}

// TestUndoTakesTheNewestChangeOfTheSessionHere: a session applies a
// change in wa, then (resumed) one in wb. Undo from wa undoes wa's change
// although the session's newest change is in wb, and leaves wb alone; a
// second undo from wa is refused, naming wb with the flags to use there.
func TestUndoTakesTheNewestChangeOfTheSessionHere(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	wa, wb := t.TempDir(), t.TempDir()
	for _, w := range []string{wa, wb} {
		writeFiles(t, w, map[string]string{"greeting.txt": "hello moon\n"})
	}
	applyPlanText(t, storeApplier(t, st, wa, "s1"), sr("greeting.txt", "hello moon", "hello world"))
	applyPlanText(t, storeApplier(t, st, wb, "s1"), sr("greeting.txt", "hello moon", "hello sun"))
	if _, err := undoLast(ctx, storeApplier(t, st, wa, "s1"), st, "s1"); err != nil {
		t.Fatalf("undo in wa: %v", err)
	}
	for dir, want := range map[string]string{wa: "hello moon\n", wb: "hello sun\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, "greeting.txt")); string(b) != want {
			t.Fatalf("%s after undo in wa: %q, want %q", dir, b, want)
		}
	}
	_, err := undoLast(ctx, storeApplier(t, st, wa, "s1"), st, "s1")
	var fm *patch.FolderMismatchError
	if !errors.As(err, &fm) || len(fm.Folders) != 1 || fm.Folders[0] != wb {
		t.Fatalf("second undo in wa: %v, want a refusal naming %s", err, wb)
	}
	fm.Flags = "--data-dir '/my data'"
	if want := "cd " + wb + " && kz undo s1 --data-dir '/my data'"; !strings.HasSuffix(fm.Error(), want) {
		t.Fatalf("refusal %q does not end with %q", fm.Error(), want)
	}
	if _, err := undoLast(ctx, storeApplier(t, st, wb, "s1"), st, "s1"); err != nil {
		t.Fatalf("undo in wb: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(wb, "greeting.txt")); string(b) != "hello moon\n" {
		t.Fatalf("wb after its undo: %q", b)
	}
}

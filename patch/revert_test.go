package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// applyText prepares and applies a proposal, returning its applied diffs.
func applyText(t *testing.T, r *Reviewer, text string) []engine.FileChange {
	t.Helper()
	p, err := r.Prepare(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := p.Apply(context.Background(), engine.PatchSelection{})
	if err != nil {
		t.Fatal(err)
	}
	return fc
}

func TestRevertOlderChange(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	orig := twoHunkFile()
	writeFiles(t, work, map[string]string{"f.txt": orig})
	a, snaps := newTestApplier(t, work)
	r := &Reviewer{Applier: a}
	first := applyText(t, r, SR3("f.txt", "line 3\r", "line three\r"))
	// A later change elsewhere in the file, which also moves line 3 down.
	applyText(t, r, SR3("f.txt", "line 1\r", "header\r\nline 1\r")+SR3("f.txt", "line 28\r", "line twenty-eight\r"))

	id, err := RevertChange(ctx, a, first)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(work, "f.txt"))
	want := strings.Replace(strings.Replace(orig, "line 1\r\n", "header\r\nline 1\r\n", 1), "line 28\r\n", "line twenty-eight\r\n", 1)
	if string(got) != want {
		t.Fatalf("after revert:\n%q\nwant\n%q", got, want)
	}
	// The revert is a change of its own: undoing it brings the first
	// change back.
	if snaps.Last() != id {
		t.Fatalf("the revert %s is not the last change (%s)", id, snaps.Last())
	}
	if err := a.Undo(ctx, snaps, id); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(work, "f.txt"))
	if !strings.Contains(string(got), "line three\r\n") {
		t.Fatalf("undoing the revert did not restore the change:\n%q", got)
	}
}

func TestRevertOlderChangeRefusedWhenLinesTouchedAgain(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"f.txt": twoHunkFile()})
	a, snaps := newTestApplier(t, work)
	r := &Reviewer{Applier: a}
	first := applyText(t, r, SR3("f.txt", "line 3\r", "line three\r"))
	// A later change edits a context line of the first change's hunk.
	applyText(t, r, SR3("f.txt", "line 5\r", "line five\r"))
	before, _ := os.ReadFile(filepath.Join(work, "f.txt"))
	last := snaps.Last()
	_, err := RevertChange(ctx, a, first)
	if !errors.Is(err, ErrRevertConflict) || !strings.Contains(err.Error(), "f.txt: lines 1–6 were changed again") {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(work, "f.txt"))
	if string(after) != string(before) || snaps.Last() != last {
		t.Fatal("a refused revert wrote something")
	}
	// A file the change created is not reverted line by line.
	if _, err := RevertChange(ctx, a, []engine.FileChange{{Path: "n.txt", Operation: "add", Diff: "@@ -0,0 +1 @@\n+x\n"}}); err == nil ||
		!strings.Contains(err.Error(), "created can only be undone") {
		t.Fatalf("revert of an add: %v", err)
	}
}

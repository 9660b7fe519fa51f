package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/checkpoint"
	"github.com/kaizen-code/kz/tools/workspace"
)

// trackerIn opens ws over a fresh real store with a tracker whose size
// cap is maxSize bytes.
func trackerIn(t *testing.T, dir string, maxSize int64) (*Env, *checkpoint.Tracker, *workspace.Workspace, *store.Store) {
	t.Helper()
	st := openStore(t)
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	tr := checkpoint.New(checkpoint.Options{WS: ws, Store: checkpoint.SQLStore{St: st}, MaxFileSize: maxSize})
	t.Cleanup(func() { _ = tr.Close() })
	e := &Env{DataDir: t.TempDir()}
	return e, tr, ws, st
}

// TestCheckpointCapsAndIgnoredPredictions: a file over the size cap is
// recorded as changed and named as not restorable, the rest of the call
// is undone; a gitignored file the shell analysis predicted is
// restorable, one it did not predict is not tracked at all.
func TestCheckpointCapsAndIgnoredPredictions(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".gitignore": "build/\n", "small.txt": "s0\n", "big.bin": strings.Repeat("b", 64),
		"build/out": "o0\n", "build/other": "x0\n"})
	e, tr, ws, st := trackerIn(t, dir, 32)
	ctx := context.Background()
	call := engine.CheckpointCall{SessionID: "s1", TurnID: 1, ToolCallID: "c1", Tool: "bash", Runtime: "native",
		Command: "echo s1 > small.txt; echo o1 > build/out"}
	if err := tr.Refresh(ctx, call); err != nil {
		t.Fatal(err)
	}
	if err := tr.BeforeCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"small.txt": "s1\n", "big.bin": strings.Repeat("B", 80), "build/out": "o1\n", "build/other": "x1\n"})
	if err := tr.AfterCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	lc, ok, err := e.FindLastChange(ctx, st, ws, "s1")
	if err != nil || !ok {
		t.Fatalf("last change: %v %v", ok, err)
	}
	files := strings.Join(lc.Files, "|")
	if lc.Kind != KindToolCall || !strings.Contains(files, "small.txt") || !strings.Contains(files, "build/out") || strings.Contains(files, "other") ||
		len(lc.Unrestorable) != 1 || lc.Unrestorable[0].Path != "big.bin" || !strings.Contains(lc.Unrestorable[0].Reason, "size cap") {
		t.Fatalf("last change %+v", lc)
	}
	msg, err := e.UndoAny(ctx, st, ws, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "big.bin left as it is") {
		t.Fatalf("undo did not say what it left: %s", msg)
	}
	for rel, want := range map[string]string{"small.txt": "s0\n", "build/out": "o0\n", "build/other": "x1\n", "big.bin": strings.Repeat("B", 80)} {
		if b, _ := os.ReadFile(filepath.Join(dir, rel)); string(b) != want {
			t.Errorf("%s = %q, want %q", rel, b, want)
		}
	}
	// The checkpoint is undone: nothing is left to undo.
	if _, ok, err := e.FindLastChange(ctx, st, ws, "s1"); ok || err != nil {
		t.Fatalf("after undo: %v %v", ok, err)
	}
}

// TestCheckpointIgnoresTouchesAndRecordsModes: a file rewritten with the
// same bytes is no change; a chmod is one, and undo restores the mode.
func TestCheckpointIgnoresTouchesAndRecordsModes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"run.sh": "echo hi\n", "same.txt": "same\n"})
	e, tr, ws, st := trackerIn(t, dir, 0)
	ctx := context.Background()
	call := engine.CheckpointCall{SessionID: "s1", TurnID: 1, ToolCallID: "c1", Tool: "bash", Command: "chmod +x run.sh"}
	if err := tr.Refresh(ctx, call); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"same.txt": "same\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tr.AfterCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	lc, ok, err := e.FindLastChange(ctx, st, ws, "s1")
	if err != nil || !ok || strings.Join(lc.Files, "|") != "run.sh (restore its previous content)" {
		t.Fatalf("last change %+v %v %v", lc, ok, err)
	}
	if _, err := e.UndoAny(ctx, st, ws, "s1"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode after undo: %v %v", fi.Mode(), err)
	}
}

// TestCheckpointSkipsTheScanOfAReadOnlyCommand: a command the shell
// analysis proves read-only is not followed by a scan; what changed
// meanwhile is found by the next scan, the turn's end, under the turn.
func TestCheckpointSkipsTheScanOfAReadOnlyCommand(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a0\n"})
	e, tr, ws, st := trackerIn(t, dir, 0)
	ctx := context.Background()
	call := engine.CheckpointCall{SessionID: "s1", TurnID: 1, ToolCallID: "r1", Tool: "bash", Command: "cat a.txt | grep a"}
	if err := tr.Refresh(ctx, call); err != nil {
		t.Fatal(err)
	}
	if err := tr.BeforeCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "a1\n"})
	if err := tr.AfterCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.FindLastChange(ctx, st, ws, "s1"); ok || err != nil {
		t.Fatalf("a read-only command got a checkpoint: %v %v", ok, err)
	}
	if err := tr.AfterCall(ctx, engine.CheckpointCall{SessionID: "s1", TurnID: 1}); err != nil {
		t.Fatal(err)
	}
	lc, ok, err := e.FindLastChange(ctx, st, ws, "s1")
	if err != nil || !ok || lc.Kind != KindTurn || strings.Join(lc.Files, "|") != "a.txt (restore its previous content)" {
		t.Fatalf("the turn's end: %+v %v %v", lc, ok, err)
	}
}

// TestUndoLeavesOutKzsOwnFilesOfOlderCheckpoints: checkpoints an older kz
// recorded of its own files (its store inside the workspace) are not
// restored: undo sees only the project's files (as /rewind does: both
// read Env.records), a checkpoint of nothing else is not a change at
// all, and undo puts the project's file back without touching the store.
func TestUndoLeavesOutKzsOwnFilesOfOlderCheckpoints(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a0\n", "data/kz.db": "db0", "data/kz.db-wal": "wal0", "logs/kz.log": "l0\n"})
	// The older kz: a tracker that knows nothing of kz's own paths.
	_, tr, ws, st := trackerIn(t, dir, 0)
	e := &Env{DataDir: filepath.Join(dir, "data")}
	e.Paths.StateDir = filepath.Join(dir, "logs")
	ctx := context.Background()
	turn := engine.CheckpointCall{SessionID: "s1", TurnID: 1}
	if err := tr.Refresh(ctx, turn); err != nil {
		t.Fatal(err)
	}
	call := engine.CheckpointCall{SessionID: "s1", TurnID: 1, ToolCallID: "c1", Tool: "bash", Command: "echo a1 > a.txt"}
	writeFiles(t, dir, map[string]string{"a.txt": "a1\n", "data/kz.db": "db1", "data/kz.db-wal": "wal1"})
	if err := tr.AfterCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	// The turn's end found only kz's own files changed.
	writeFiles(t, dir, map[string]string{"data/kz.db": "db2", "logs/kz.log": "l1\n"})
	if err := tr.AfterCall(ctx, turn); err != nil {
		t.Fatal(err)
	}
	lc, ok, err := e.FindLastChange(ctx, st, ws, "s1")
	if err != nil || !ok || lc.Kind != KindToolCall || strings.Join(lc.Files, "|") != "a.txt (restore its previous content)" {
		t.Fatalf("last change %+v %v %v", lc, ok, err)
	}
	if _, err := e.UndoAny(ctx, st, ws, "s1"); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"a.txt": "a0\n", "data/kz.db": "db2", "data/kz.db-wal": "wal1", "logs/kz.log": "l1\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, rel)); string(b) != want {
			t.Errorf("%s = %q, want %q", rel, b, want)
		}
	}
}

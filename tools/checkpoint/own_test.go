package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/workspace"
)

// ownWorkspace is a workspace holding a file of the project and kz's own
// store and log, as when kz runs in the home directory or its data
// directory is put in the project.
func ownWorkspace(t *testing.T) (dir string, ws *workspace.Workspace) {
	t.Helper()
	dir = t.TempDir()
	put(t, dir, map[string]string{"main.go": "package main\n", "data/kz.db": "db0", "data/kz.db-wal": "wal0",
		"data/sandbox/search.json": "{}", "state/kz.log": "log0\n", "state/homes/s1/session.jsonl": "{}\n", "notes/state.txt": "n0\n", "notes/kz.log": "l0\n"})
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return dir, ws
}

// kz's own paths inside the workspace are never scanned, baselined or
// checkpointed, whichever scan sees them (a turn's full scans, a call's
// quick one through the watcher, a predicted path), while the rest of
// the workspace is checkpointed as before.
func TestOwnPathsAreNeverCheckpointed(t *testing.T) {
	for _, watch := range []bool{true, false} {
		name := "watched"
		if !watch {
			name = "full scans"
		}
		t.Run(name, func(t *testing.T) {
			dir, ws := ownWorkspace(t)
			st := &memStore{}
			outside := t.TempDir()
			tr := New(Options{WS: ws, Store: st, NoWatch: !watch,
				Own: []string{filepath.Join(dir, "data"), filepath.Join(dir, "state"), filepath.Join(dir, "notes", "kz.log"), outside, dir, filepath.Dir(dir), ""}})
			t.Cleanup(func() { _ = tr.Close() })
			ctx := context.Background()
			turn := engine.CheckpointCall{SessionID: "s", TurnID: 1, Runtime: "native"}
			if err := tr.Refresh(ctx, turn); err != nil {
				t.Fatal(err)
			}
			for p := range st.base {
				if p != "main.go" && p != "notes/state.txt" {
					t.Errorf("the baseline holds kz's own %s", p)
				}
			}
			// A call that names the store, and writes it and a file of
			// the project.
			call := engine.CheckpointCall{SessionID: "s", TurnID: 1, ToolCallID: "c1", Tool: "bash", Runtime: "native",
				Command: "rm data/kz.db-wal; echo x > main.go", Paths: []string{filepath.Join(dir, "data", "kz.db")}}
			if err := tr.BeforeCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			put(t, dir, map[string]string{"data/kz.db": "db1", "data/new.lock": "", "state/kz.log": "log1\n", "notes/kz.log": "l1\n", "main.go": "package main // 1\n"})
			if err := os.Remove(filepath.Join(dir, "data", "kz.db-wal")); err != nil {
				t.Fatal(err)
			}
			if err := tr.AfterCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			// The turn's end: kz writes its store again, and the project's
			// notes change.
			put(t, dir, map[string]string{"data/kz.db": "db2", "state/homes/s1/session.jsonl": "{}\n{}\n", "notes/state.txt": "n1\n"})
			if err := tr.AfterCall(ctx, turn); err != nil {
				t.Fatal(err)
			}
			if got, want := calls(st.cps), []string{"c1:~main.go", ":~notes/state.txt"}; !slices.Equal(got, want) {
				t.Errorf("checkpoints %q, want %q", got, want)
			}
			for p := range st.base {
				if p != "main.go" && p != "notes/state.txt" {
					t.Errorf("the baseline holds kz's own %s after the turn", p)
				}
			}
		})
	}
}

// A baseline an older kz stored with kz's own files in it loses them at
// the next scan, without a checkpoint saying they were deleted, even when
// that scan is a call's (which records what it finds gone).
func TestOwnPathsLeaveAnOlderBaseline(t *testing.T) {
	dir, ws := ownWorkspace(t)
	st := &memStore{}
	old := New(Options{WS: ws, Store: st, NoWatch: true})
	ctx := context.Background()
	turn := engine.CheckpointCall{SessionID: "s", TurnID: 1, Runtime: "native"}
	if err := old.Refresh(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.base["data/kz.db"]; !ok {
		t.Fatalf("the tracker without Own left the store out: %v", st.base)
	}
	tr := New(Options{WS: ws, Store: st, NoWatch: true, Own: []string{filepath.Join(dir, "data"), filepath.Join(dir, "state", "kz.log")}})
	put(t, dir, map[string]string{"data/kz.db": "db1"})
	turn.TurnID = 2
	if err := tr.AfterCall(ctx, turn); err != nil {
		t.Fatal(err)
	}
	var left []string
	for p := range st.base {
		left = append(left, p)
	}
	slices.Sort(left)
	if want := []string{"main.go", "notes/kz.log", "notes/state.txt", "state/homes/s1/session.jsonl"}; !slices.Equal(left, want) {
		t.Errorf("baseline %q, want %q", left, want)
	}
	if len(st.cps) != 0 {
		t.Errorf("the purge was checkpointed: %+v", st.cps)
	}
}

// OwnPaths keeps what lies strictly inside the workspace, also when named
// through a symbolic link, and Covers matches whole path components.
func TestOwnPathsInsideTheWorkspace(t *testing.T) {
	dir, ws := ownWorkspace(t)
	link := filepath.Join(t.TempDir(), "data-link")
	if err := os.Symlink(filepath.Join(dir, "data"), link); err != nil {
		t.Fatal(err)
	}
	own := OwnPaths(ws, []string{link, filepath.Join(dir, "state", "kz.log"), dir, t.TempDir(), "relative/path", ""})
	if want := (Own{"data", "state/kz.log"}); !slices.Equal(own, want) {
		t.Fatalf("OwnPaths = %q, want %q", own, want)
	}
	for rel, want := range map[string]bool{"data": true, "data/kz.db": true, "data/a/b": true, "database.go": false,
		"data-old/x": false, "state/kz.log": true, "state/kz.log.1": false, "state/homes/x": false, "main.go": false} {
		if got := own.Covers(rel); got != want {
			t.Errorf("Covers(%q) = %v, want %v", rel, got, want)
		}
	}
}

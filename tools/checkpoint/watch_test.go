package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/testfs"
	"github.com/kaizen-code/kz/tools/workspace"
)

// memStore keeps a tracker's commits in memory.
type memStore struct {
	mu   sync.Mutex
	base map[string]BaselineEntry
	cps  []Checkpoint
}

func (m *memStore) Baseline(context.Context, string) ([]BaselineEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []BaselineEntry
	for _, e := range m.base {
		out = append(out, e)
	}
	return out, nil
}

func (m *memStore) Commit(_ context.Context, c Commit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.base == nil {
		m.base = map[string]BaselineEntry{}
	}
	for _, u := range c.Upserts {
		m.base[u.Path] = u
	}
	for _, d := range slices.Concat(c.Deletes, c.Forget) {
		delete(m.base, d)
	}
	if c.Checkpoint != nil {
		m.cps = append(m.cps, *c.Checkpoint)
	}
	return nil
}

// calls is each checkpoint as "call id:summary".
func calls(cps []Checkpoint) []string {
	var out []string
	for _, cp := range cps {
		out = append(out, cp.ToolCallID+":"+summary(cp))
	}
	return out
}

// summary is a checkpoint's files as "path:before>after" (+ created,
// - deleted, ~ changed).
func summary(cp Checkpoint) string {
	var out []string
	for _, f := range cp.Files {
		op := "~"
		switch {
		case !f.BeforeExists:
			op = "+"
		case !f.AfterExists:
			op = "-"
		}
		out = append(out, op+f.Path)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func put(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfs.Write(t, dir, files)
}

// The scan after a call that the change watcher serves finds exactly what
// a full scan finds, for every kind of change a command makes: an edit,
// a new file, a deletion, a rename, a mode change, an ignored file, a new
// directory with files, a renamed directory, a changed .gitignore. Each
// case runs twice on identical workspaces, with the watcher and with
// full scans only, and the checkpoints must be equal; the watcher's run
// must have scanned the whole workspace only where a case needs it.
func TestWatchedScanFindsWhatAFullScanFinds(t *testing.T) {
	start := map[string]string{
		".gitignore": "*.log\nbuild/\n", "a.txt": "a\n", "gone.txt": "g\n", "src/main.go": "package main\n",
		"src/util.go": "package main // u\n", "run.sh": "echo\n", "old/x.txt": "x\n", "build/out.bin": "b\n",
	}
	cases := []struct {
		name string
		act  func(t *testing.T, dir string)
		want string
		// full says the case needs a full scan after the call.
		full bool
	}{
		{"edit in a subdirectory", func(t *testing.T, d string) {
			put(t, d, map[string]string{"src/main.go": "package main\n\nfunc main() {}\n"})
		}, "~src/main.go", false},
		{"new file", func(t *testing.T, d string) { put(t, d, map[string]string{"new.txt": "n\n"}) }, "+new.txt", false},
		{"deletion", func(t *testing.T, d string) { must(t, os.Remove(filepath.Join(d, "gone.txt"))) }, "-gone.txt", false},
		{"rename", func(t *testing.T, d string) { must(t, os.Rename(filepath.Join(d, "a.txt"), filepath.Join(d, "b.txt"))) }, "+b.txt -a.txt", false},
		{"mode", func(t *testing.T, d string) { must(t, os.Chmod(filepath.Join(d, "run.sh"), 0o755)) }, "~run.sh", false},
		{"ignored file", func(t *testing.T, d string) {
			put(t, d, map[string]string{"debug.log": "l\n", "build/more.bin": "m\n"})
		}, "", false},
		{"new directory", func(t *testing.T, d string) { put(t, d, map[string]string{"pkg/deep/f.go": "package deep\n"}) }, "+pkg/deep/f.go", true},
		{"renamed directory", func(t *testing.T, d string) { must(t, os.Rename(filepath.Join(d, "old"), filepath.Join(d, "new"))) }, "+new/x.txt -old/x.txt", true},
		{"gitignore", func(t *testing.T, d string) {
			put(t, d, map[string]string{".gitignore": "build/\n", "keep.log": "k\n"})
		}, "+keep.log ~.gitignore", true},
		{"same content rewritten", func(t *testing.T, d string) { put(t, d, map[string]string{"a.txt": "a\n"}) }, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[bool]string{}
			for _, watched := range []bool{true, false} {
				dir := t.TempDir()
				put(t, dir, start)
				// Only the watcher can name what changed.
				age(t, dir)
				ws, err := workspace.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = ws.Close() })
				st := &memStore{}
				tr := New(Options{WS: ws, Store: st, NoWatch: !watched})
				t.Cleanup(func() { _ = tr.Close() })
				if watched && tr.watch == nil {
					t.Skip("no change watcher on this system")
				}
				racy := 0
				must(t, tr.load(context.Background()))
				ctx := context.Background()
				call := engine.CheckpointCall{SessionID: "s", TurnID: 1, ToolCallID: "c1", Tool: "bash", Command: "x"}
				must(t, tr.Refresh(ctx, call))
				for _, e := range tr.base {
					if e.racy {
						racy++
					}
				}
				if racy != 0 {
					t.Fatalf("%d baseline entries are racy; the test needs none", racy)
				}
				full := tr.fullScans
				must(t, tr.BeforeCall(ctx, call))
				c.act(t, dir)
				must(t, tr.AfterCall(ctx, call))
				if len(st.cps) > 1 {
					t.Fatalf("%d checkpoints", len(st.cps))
				}
				if len(st.cps) == 1 {
					got[watched] = summary(st.cps[0])
				}
				if watched && (tr.fullScans > full) != c.full {
					t.Errorf("full scans after the call: %d, want a full scan %v", tr.fullScans-full, c.full)
				}
				// The next call's scan, with nothing changed, records
				// nothing and, after a full scan re-armed the watcher,
				// scans only what changed.
				next := engine.CheckpointCall{SessionID: "s", TurnID: 1, ToolCallID: "c2", Tool: "bash", Command: "y"}
				must(t, tr.BeforeCall(ctx, next))
				before := tr.fullScans
				must(t, tr.AfterCall(ctx, next))
				if len(st.cps) > 1 {
					t.Errorf("an idle call was recorded: %s", summary(st.cps[1]))
				}
				if watched && tr.fullScans != before {
					t.Errorf("an idle call after a re-armed watcher scanned the whole workspace")
				}
			}
			if got[true] != got[false] || got[false] != c.want {
				t.Errorf("watched %q, full %q, want %q", got[true], got[false], c.want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// inotifyFDs counts this process's inotify descriptors.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

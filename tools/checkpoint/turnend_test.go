package checkpoint

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/testfs"
	"github.com/kaizen-code/kz/tools/workspace"
)

// turnEnd is a tracker over a workspace of a few files, all older than
// the racy window, after its turn's first full scan; held is what its
// Options.WriteHeld answers (nil: no WriteHeld).
type turnEnd struct {
	dir   string
	st    *memStore
	tr    *Tracker
	inos  []uint64
	known bool
}

func newTurnEnd(t *testing.T, withHeld bool, prepare ...func(dir string)) *turnEnd {
	t.Helper()
	te := &turnEnd{dir: t.TempDir(), st: &memStore{}, known: true}
	put(t, te.dir, map[string]string{".gitignore": "build/\n", "a.txt": "a\n", "src/b.go": "package b\n", "build/out": "o\n", "map.bin": "0123456789\n"})
	for _, p := range prepare {
		p(te.dir)
	}
	age(t, te.dir)
	ws, err := workspace.Open(te.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	opt := Options{WS: ws, Store: te.st}
	if withHeld {
		opt.WriteHeld = func() ([]uint64, bool) { return te.inos, te.known }
	}
	te.tr = New(opt)
	t.Cleanup(func() { _ = te.tr.Close() })
	if te.tr.watch == nil {
		t.Skip("no change watcher on this system")
	}
	must(t, te.tr.Refresh(context.Background(), engine.CheckpointCall{SessionID: "s", TurnID: 1}))
	return te
}

// age makes every file of dir older than the racy window, so that the
// baseline trusts every stat and only the watcher, the holders or a link
// can make a scan look at a file.
func age(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	must(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

// end runs the turn's end and returns whether it scanned every file, and
// the turn's checkpoint ("" when none).
func (te *turnEnd) end(t *testing.T) (full bool, got string) {
	t.Helper()
	before, cps := te.tr.fullScans, len(te.st.cps)
	must(t, te.tr.AfterCall(context.Background(), engine.CheckpointCall{SessionID: "s", TurnID: 1}))
	if len(te.st.cps) > cps {
		got = summary(te.st.cps[len(te.st.cps)-1])
	}
	return te.tr.fullScans > before, got
}

// call runs one tool call that changes the workspace with act.
func (te *turnEnd) call(t *testing.T, id, command string, act func()) {
	t.Helper()
	ctx := context.Background()
	c := engine.CheckpointCall{SessionID: "s", TurnID: 1, ToolCallID: id, Tool: "bash", Command: command}
	must(t, te.tr.BeforeCall(ctx, c))
	act()
	must(t, te.tr.AfterCall(ctx, c))
}

// mapWrite writes b at the start of the file through a shared mapping,
// which inotify does not report, and returns the open file, which keeps
// the close event (the only one such a write gets) from coming.
func mapWrite(t *testing.T, path string, b []byte) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, len(b), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		_ = f.Close()
		t.Skipf("no shared mapping here: %v", err)
	}
	copy(m, b)
	must(t, syscall.Munmap(m))
	return f
}

// A turn's end that WriteHeld answers looks only at what the watcher saw
// and at the files a live process holds for writing: an edit and a new
// file are recorded without a full scan, and so is a write through a
// mapping that inotify never reported, when its file is held.
func TestTurnEndRelyingOnTheWatcher(t *testing.T) {
	cases := []struct {
		name string
		// act changes the workspace during the turn; it may set the
		// holders.
		act  func(t *testing.T, te *turnEnd)
		full bool
		want string
	}{
		{"nothing", func(*testing.T, *turnEnd) {}, false, ""},
		{"an edit and a new file", func(t *testing.T, te *turnEnd) {
			put(t, te.dir, map[string]string{"src/b.go": "package b // changed\n", "c.txt": "c\n"})
		}, false, "+c.txt ~src/b.go"},
		{"a write through a mapping still held", func(t *testing.T, te *turnEnd) {
			f := mapWrite(t, filepath.Join(te.dir, "map.bin"), []byte("ABC"))
			t.Cleanup(func() { _ = f.Close() })
			te.inos = []uint64{12345678901, testfs.Ino(t, filepath.Join(te.dir, "map.bin"))}
		}, false, "~map.bin"},
		{"a write through a mapping closed before the end", func(t *testing.T, te *turnEnd) {
			must(t, mapWrite(t, filepath.Join(te.dir, "map.bin"), []byte("XYZ")).Close())
		}, false, "~map.bin"},
		{"holders that cannot be listed", func(t *testing.T, te *turnEnd) {
			put(t, te.dir, map[string]string{"a.txt": "changed\n"})
			te.known = false
		}, true, "~a.txt"},
		{"a new directory", func(t *testing.T, te *turnEnd) {
			put(t, te.dir, map[string]string{"pkg/new.go": "package pkg\n"})
		}, true, "+pkg/new.go"},
		{"a file with a second name", func(t *testing.T, te *turnEnd) {
			must(t, os.Link(filepath.Join(te.dir, "a.txt"), filepath.Join(te.dir, "a2.txt")))
		}, true, "+a2.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			te := newTurnEnd(t, true)
			c.act(t, te)
			full, got := te.end(t)
			if full != c.full || got != c.want {
				t.Errorf("full scan %v, recorded %q; want %v, %q", full, got, c.full, c.want)
			}
		})
	}
}

// Without WriteHeld (no sandbox keeping every process in kz's tree), the
// turn's end scans every file, and so finds a write through a mapping
// that no holder list names.
func TestTurnEndWithoutWriteHeldScansEverything(t *testing.T) {
	te := newTurnEnd(t, false)
	f := mapWrite(t, filepath.Join(te.dir, "map.bin"), []byte("ABC"))
	defer func() { _ = f.Close() }()
	if full, got := te.end(t); !full || got != "~map.bin" {
		t.Errorf("full scan %v, recorded %q; want a full scan that finds ~map.bin", full, got)
	}
}

// A command the shell analysis does not prove read-only may have linked
// a workspace file from an ignored directory and written through that
// name, which no watch sees: from then on every turn's end of the
// session scans every file. A read-only command changes nothing of that.
func TestTurnEndAfterACommandScansEverything(t *testing.T) {
	te := newTurnEnd(t, true)
	te.call(t, "r1", "cat a.txt", func() {})
	if full, _ := te.end(t); full {
		t.Error("a read-only command made the turn's end scan every file")
	}
	te.call(t, "w1", "ln a.txt build/link && echo x >> build/link", func() {
		must(t, os.Link(filepath.Join(te.dir, "a.txt"), filepath.Join(te.dir, "build", "link")))
		f, err := os.OpenFile(filepath.Join(te.dir, "build", "link"), os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.WriteString("x\n")
		must(t, err)
		must(t, f.Close())
	})
	if full, got := te.end(t); !full || got != "~a.txt" {
		t.Errorf("full scan %v, recorded %q; want a full scan that finds ~a.txt", full, got)
	}
	// The link stays: every scan is a full one while a.txt has two names.
	must(t, os.Remove(filepath.Join(te.dir, "build", "link")))
	put(t, te.dir, map[string]string{"src/b.go": "package b // next turn\n"})
	if full, got := te.end(t); !full || got != "~src/b.go" {
		t.Errorf("next turn: full scan %v, recorded %q; want a full scan that finds ~src/b.go", full, got)
	}
}

// A file that already has a second name at the turn's start can change
// through it unseen: the turn's end scans every file.
func TestTurnEndWithALinkedFileScansEverything(t *testing.T) {
	te := newTurnEnd(t, true, func(dir string) {
		must(t, os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "build", "a")))
	})
	for e := range maps.Values(te.tr.base) {
		if e.racy {
			t.Fatal("a racy baseline entry: only the link may make the end look at a.txt")
		}
	}
	must(t, os.WriteFile(filepath.Join(te.dir, "build", "a"), []byte("through the other name\n"), 0o644))
	if full, got := te.end(t); !full || got != "~a.txt" {
		t.Errorf("full scan %v, recorded %q; want a full scan that finds ~a.txt", full, got)
	}
}

// Retire takes, at once, what the watcher saw and which files are held
// for the turn's end, and hands the watcher to closeLater: the end then
// stats only those files, or, when the holders cannot be listed, scans
// every file without adding watches. Scans after it go over every file
// and still record what a call changed.
func TestRetiredTrackerLetsGoOfItsWatcher(t *testing.T) {
	for _, quick := range []bool{true, false} {
		te := newTurnEnd(t, true)
		te.known = quick
		put(t, te.dir, map[string]string{"a.txt": "changed\n"})
		f := mapWrite(t, filepath.Join(te.dir, "map.bin"), []byte("ABC"))
		te.inos = []uint64{testfs.Ino(t, filepath.Join(te.dir, "map.bin"))}
		watching := inotifyFDs(t)
		var closes []func() error
		te.tr.Retire(func(close func() error) { closes = append(closes, close) })
		if len(closes) != 1 || te.tr.watch != nil {
			t.Fatalf("quick %v: %d closes handed over, watcher kept %v", quick, len(closes), te.tr.watch != nil)
		}
		if got := inotifyFDs(t); got != watching {
			t.Errorf("quick %v: the tracker closed its watcher itself (%d descriptors, %d before)", quick, got, watching)
		}
		must(t, closes[0]())
		if got := inotifyFDs(t); got != watching-1 {
			t.Errorf("quick %v: %d inotify descriptors after the close, %d before", quick, got, watching)
		}
		// Let go after Retire looked: the end still stats it, as held.
		must(t, f.Close())
		te.inos, te.known = nil, false
		full, got := te.end(t)
		if full == quick || got != "~a.txt ~map.bin" {
			t.Errorf("quick %v: full scan %v, recorded %q", quick, full, got)
		}
		te.call(t, "c1", "x", func() { put(t, te.dir, map[string]string{"src/b.go": "package b // changed\n", "new.txt": "n\n"}) })
		if last := summary(te.st.cps[len(te.st.cps)-1]); last != "+new.txt ~src/b.go" {
			t.Errorf("quick %v: after retiring, the call recorded %q", quick, last)
		}
		if full, _ := te.end(t); !full {
			t.Errorf("quick %v: a turn's end without a watcher did not scan every file", quick)
		}
	}
}

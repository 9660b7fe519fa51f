package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

func TestReadFileRangesAndBinary(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var sb strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	f.write(t, "a.txt", sb.String())
	res := f.call(t, "read_file", map[string]any{"path": "a.txt", "offset": 10, "limit": 3})
	want := "    10\tline 10\n    11\tline 11\n    12\tline 12\n(38 more lines; continue with offset 13)\n"
	if res.IsError || res.Output != want {
		t.Fatalf("got %q, want %q", res.Output, want)
	}
	res = f.call(t, "read_file", map[string]any{"path": "a.txt", "offset": 51})
	if !res.IsError || !strings.Contains(res.Output, "past the end") {
		t.Fatalf("offset past end: %+v", res)
	}
	f.write(t, "bin.dat", "ab\x00cd")
	res = f.call(t, "read_file", map[string]any{"path": "bin.dat"})
	if res.IsError || !strings.Contains(res.Output, "binary file") || strings.Contains(res.Output, "ab") {
		t.Fatalf("binary: %+v", res)
	}
	f.write(t, "latin1.txt", "caf\xe9 au lait, cr\xe8me br\xfbl\xe9e")
	if res = f.call(t, "read_file", map[string]any{"path": "latin1.txt"}); !strings.Contains(res.Output, "binary file") {
		t.Fatalf("invalid UTF-8 not treated as binary: %+v", res)
	}
	f.write(t, "empty", "")
	if res = f.call(t, "read_file", map[string]any{"path": "empty"}); res.IsError || !strings.Contains(res.Output, "empty") {
		t.Fatalf("empty: %+v", res)
	}
	long := strings.Repeat("é", MaxLineChars)
	f.write(t, "long.txt", long+"\n")
	if res = f.call(t, "read_file", map[string]any{"path": "long.txt"}); !strings.Contains(res.Output, "line truncated") {
		t.Fatalf("long line not truncated: %d bytes", len(res.Output))
	}
	if err := syscall.Mkfifo(filepath.Join(f.ws.Dir(), "fifo"), 0o644); err == nil {
		done := make(chan ToolResult, 1)
		go func() { done <- f.call(t, "read_file", map[string]any{"path": "fifo"}) }()
		select {
		case r := <-done:
			if !r.IsError || !strings.Contains(r.Output, "not a regular file") {
				t.Fatalf("fifo: %+v", r)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("read_file hung on a FIFO")
		}
	}
}

func TestWriteFileSnapshotsAndEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "run.sh", "#!/bin/sh\necho old\n")
	if err := os.Chmod(filepath.Join(f.ws.Dir(), "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := f.callID(t, "w1", "write_file", map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho new\n"})
	if res.IsError {
		t.Fatal(res.Output)
	}
	fi, _ := os.Stat(filepath.Join(f.ws.Dir(), "run.sh"))
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755", fi.Mode().Perm())
	}
	res = f.callID(t, "w2", "write_file", map[string]any{"path": "new/file.go", "content": "package x\n"})
	if res.IsError || !strings.HasPrefix(res.Output, "Created new/file.go") {
		t.Fatal(res.Output)
	}
	snaps := f.snaps.all()
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	if s := snaps[0]; !s.Existed || string(s.Content) != "#!/bin/sh\necho old\n" || s.Mode != 0o755 || s.Path != "run.sh" ||
		s.ToolCallID != "w1" || s.SessionID != "sess1" {
		t.Errorf("snapshot 1 = %+v", s)
	}
	if s := snaps[1]; s.Existed || s.Content != nil || s.Path != "new/file.go" {
		t.Errorf("snapshot 2 = %+v", s)
	}
	edits := f.rec.ofType(engine.EventFileEdited)
	if len(edits) != 2 || edits[0].Path != "run.sh" || !strings.Contains(edits[0].Diff, "-echo old\n+echo new\n") {
		t.Fatalf("file_edited = %+v", edits)
	}
	if !strings.Contains(edits[1].Diff, "--- /dev/null") {
		t.Errorf("new file diff = %q", edits[1].Diff)
	}
	reqs := f.perm.requests()
	if len(reqs) != 2 || !reqs[0].Write || !strings.Contains(reqs[0].Diff, "+echo new") {
		t.Errorf("requests = %+v", reqs)
	}
}

// failingSnapshots refuses every snapshot.
type failingSnapshots struct{}

func (failingSnapshots) SaveSnapshot(_ context.Context, _ Snapshot) error {
	return errors.New("disk full")
}

func TestNoWriteWithoutSnapshot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "a.txt", "old")
	f.env.Snapshots = failingSnapshots{}
	res := f.call(t, "write_file", map[string]any{"path": "a.txt", "content": "new"})
	if !res.IsError || !strings.Contains(res.Output, "disk full") {
		t.Fatalf("got %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), "a.txt")); string(b) != "old" {
		t.Fatalf("written without a snapshot: %q", b)
	}
	f.env.Snapshots = nil
	if res = f.call(t, "write_file", map[string]any{"path": "a.txt", "content": "new"}); !res.IsError {
		t.Fatal("written without a snapshot store")
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "main.go", "package main\n\nfunc a() {}\nfunc b() {}\n// TODO\n// TODO\n")
	edit := func(in map[string]any) ToolResult {
		in["path"] = "main.go"
		return f.call(t, "edit_file", in)
	}
	// Not read yet.
	if r := edit(map[string]any{"old_string": "func a() {}", "new_string": "func a() { return }"}); !r.IsError ||
		!strings.Contains(r.Output, ErrNotRead.Error()) {
		t.Fatalf("unread edit: %+v", r)
	}
	if r := f.call(t, "read_file", map[string]any{"path": "main.go"}); r.IsError {
		t.Fatal(r.Output)
	}
	cases := []struct {
		in   map[string]any
		want error
	}{
		{map[string]any{"old_string": "func c() {}", "new_string": "x"}, ErrNoMatch},
		{map[string]any{"old_string": "// TODO", "new_string": "// DONE"}, ErrAmbiguous},
		{map[string]any{"old_string": "x", "new_string": "x"}, ErrNoChange},
		{map[string]any{"old_string": "", "new_string": "x"}, ErrEmptyOldText},
	}
	for _, c := range cases {
		if r := edit(c.in); !r.IsError || !strings.Contains(r.Output, c.want.Error()) {
			t.Errorf("%v: got %+v, want %v", c.in, r, c.want)
		}
	}
	if r := edit(map[string]any{"old_string": "func a() {}", "new_string": "func a() { return }"}); r.IsError {
		t.Fatal(r.Output)
	}
	// The session's own write keeps the file fresh: a second edit works.
	if r := edit(map[string]any{"old_string": "// TODO", "new_string": "// DONE", "replace_all": true}); r.IsError {
		t.Fatal(r.Output)
	}
	b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), "main.go"))
	if string(b) != "package main\n\nfunc a() { return }\nfunc b() {}\n// DONE\n// DONE\n" {
		t.Fatalf("content = %q", b)
	}
	// Changed on disk behind the session's back: refused until read again.
	f.write(t, "main.go", string(b)+"// external\n")
	if r := edit(map[string]any{"old_string": "func b() {}", "new_string": "func b() { return }"}); !r.IsError ||
		!strings.Contains(r.Output, ErrStale.Error()) {
		t.Fatalf("stale edit: %+v", r)
	}
	if b2, _ := os.ReadFile(filepath.Join(f.ws.Dir(), "main.go")); !strings.HasSuffix(string(b2), "// external\n") {
		t.Fatal("stale edit overwrote the external change")
	}
	f.call(t, "read_file", map[string]any{"path": "main.go"})
	if r := edit(map[string]any{"old_string": "func b() {}", "new_string": "func b() { return }"}); r.IsError {
		t.Fatal(r.Output)
	}
	if len(f.snaps.all()) != 3 {
		t.Errorf("%d snapshots, want 3", len(f.snaps.all()))
	}
}

// TestEditFileChangedWhileAsking changes the file between the permission
// request and the write: the edit must not clobber the change.
func TestEditFileChangedWhileAsking(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "a.txt", "one\ntwo\n")
	f.call(t, "read_file", map[string]any{"path": "a.txt"})
	f.perm.answer = func(r engine.PermissionRequest) engine.Answer {
		if r.Write {
			f.write(t, "a.txt", "one\ntwo\nthree\n")
		}
		return engine.Answer{Decision: engine.DecisionAllow}
	}
	r := f.call(t, "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "2"})
	if !r.IsError || !strings.Contains(r.Output, ErrStale.Error()) {
		t.Fatalf("got %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("content = %q", b)
	}
}

func TestListDir(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, "sub/a.go", "")
	if err := os.Symlink("sub", filepath.Join(f.ws.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	r := f.call(t, "list_dir", map[string]any{})
	if r.Output != "link@\nsub/\nx\n" {
		t.Fatalf("got %q", r.Output)
	}
	if r = f.call(t, "list_dir", map[string]any{"path": "link"}); r.Output != "a.go\n" {
		t.Fatalf("through in-root link: %q", r.Output)
	}
}

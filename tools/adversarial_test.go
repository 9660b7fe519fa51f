package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAdversarialPaths attacks the file tools with paths that leave the
// workspace. Each case must fail, must not reach the gate (the input is
// rejected while it is decoded and validated), and must leave everything
// outside the workspace as it was.
func TestAdversarialPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := os.Symlink(filepath.Join(f.base, "outside"), filepath.Join(f.ws.Dir(), "outbox")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/x", filepath.Join(f.ws.Dir(), "relout")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.base, "outside", "created"), filepath.Join(f.ws.Dir(), "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/created", filepath.Join(f.ws.Dir(), "dangling-rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/../../outside", filepath.Join(f.ws.Dir(), "sneaky")); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(f.base, "proj-evil", "x")
	cases := []struct {
		name  string
		tool  string
		input map[string]any
		want  string
	}{
		{"read dotdot", "read_file", map[string]any{"path": "../outside/x"}, "outside the workspace"},
		{"write sub dotdot", "write_file", map[string]any{"path": "sub/../../x", "content": "pwned"}, "outside the workspace"},
		{"write dotdot outside", "write_file", map[string]any{"path": "../outside/new", "content": "pwned"}, "outside the workspace"},
		{"read sibling prefix", "read_file", map[string]any{"path": evil}, "outside the workspace"},
		{"write sibling prefix", "write_file", map[string]any{"path": evil, "content": "pwned"}, "outside the workspace"},
		{"write absolute etc", "write_file", map[string]any{"path": "/etc/kz-test", "content": "pwned"}, "outside the workspace"},
		{"read outbox", "read_file", map[string]any{"path": "outbox/x"}, "outside the workspace"},
		{"write outbox", "write_file", map[string]any{"path": "outbox/x", "content": "pwned"}, "outside the workspace"},
		{"create in outbox", "write_file", map[string]any{"path": "outbox/new", "content": "pwned"}, "outside the workspace"},
		{"edit outbox", "edit_file", map[string]any{"path": "outbox/x", "old_string": "secret", "new_string": "pwned"}, "outside the workspace"},
		{"write relative link out", "write_file", map[string]any{"path": "relout", "content": "pwned"}, "outside the workspace"},
		{"write dangling absolute link", "write_file", map[string]any{"path": "dangling", "content": "pwned"}, "outside the workspace"},
		{"write dangling relative link", "write_file", map[string]any{"path": "dangling-rel", "content": "pwned"}, "outside the workspace"},
		{"write through sneaky link", "write_file", map[string]any{"path": "sneaky/x", "content": "pwned"}, "outside the workspace"},
		{"read through sneaky link", "read_file", map[string]any{"path": "sneaky/x"}, "outside the workspace"},
		{"write workspace root", "write_file", map[string]any{"path": ".", "content": "pwned"}, "not a regular file"},
		{"write absolute dotdot", "write_file", map[string]any{"path": filepath.Join(f.base, "proj", "..", "outside", "x"), "content": "pwned"}, "outside the workspace"},
		{"grep sibling", "grep", map[string]any{"pattern": "secret", "path": filepath.Join(f.base, "proj-evil")}, "outside the workspace"},
		{"list outbox", "list_dir", map[string]any{"path": "outbox"}, "outside the workspace"},
		{"grep outbox", "grep", map[string]any{"pattern": "secret", "path": "outbox"}, "outside the workspace"},
		{"glob outside", "glob", map[string]any{"pattern": "*", "path": ".."}, "outside the workspace"},
		{"glob dotdot pattern", "glob", map[string]any{"pattern": "../outside/*"}, "may not contain .."},
		{"read NUL", "read_file", map[string]any{"path": "x\x00/../../outside/x"}, "invalid path"},
		{"write NUL", "write_file", map[string]any{"path": "a\x00b", "content": "x"}, "invalid path"},
		{"write newline", "write_file", map[string]any{"path": "a\nb", "content": "x"}, "invalid path"},
		{"write ESC", "write_file", map[string]any{"path": "a\x1b[2Jb", "content": "x"}, "invalid path"},
		{"read CR", "read_file", map[string]any{"path": "a\rb"}, "invalid path"},
		{"empty path", "read_file", map[string]any{"path": ""}, "invalid path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.perm.requests())
			res := f.call(t, c.tool, c.input)
			if !res.IsError || !strings.Contains(res.Output, c.want) {
				t.Fatalf("%s: got %+v, want an error containing %q", c.name, res, c.want)
			}
			if n := len(f.perm.requests()); n != before {
				t.Errorf("the gate was asked about an invalid call")
			}
			f.assertOutsideUntouched(t)
			if len(f.snaps.all()) != 0 {
				t.Errorf("a snapshot was taken for a refused write")
			}
		})
	}
	// Nothing with a control character exists in the workspace.
	ents, _ := os.ReadDir(f.ws.Dir())
	for _, e := range ents {
		if strings.ContainsAny(e.Name(), "\x00\n\x1b\r") {
			t.Errorf("created %q", e.Name())
		}
	}
}

func TestAbsolutePathInsideWorks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	abs := filepath.Join(f.ws.Dir(), "sub", "a.txt")
	res := f.call(t, "write_file", map[string]any{"path": abs, "content": "hello\n"})
	if res.IsError {
		t.Fatal(res.Output)
	}
	reqs := f.perm.requests()
	if len(reqs) != 1 || len(reqs[0].Paths) != 1 || reqs[0].Paths[0] != "sub/a.txt" || !reqs[0].Write {
		t.Fatalf("request = %+v, want workspace-relative sub/a.txt with Write", reqs)
	}
	res = f.call(t, "read_file", map[string]any{"path": abs})
	if res.IsError || !strings.Contains(res.Output, "1\thello") {
		t.Fatalf("read: %+v", res)
	}
}

// TestInRootLinkReportsResolvedPath checks that the gate sees the resolved
// path of an in-root link, so notgit -> .git is judged as .git.
func TestInRootLinkReportsResolvedPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(t, ".git/config", "[core]\n")
	if err := os.Symlink(".git", filepath.Join(f.ws.Dir(), "notgit")); err != nil {
		t.Fatal(err)
	}
	f.perm.answer = denyAll("protected")
	res := f.call(t, "write_file", map[string]any{"path": "notgit/config", "content": "pwned"})
	if !res.IsError {
		t.Fatal("write allowed")
	}
	reqs := f.perm.requests()
	if len(reqs) != 1 || !containsStr(reqs[0].Paths, ".git/config") {
		t.Fatalf("gate saw %+v, want .git/config among the paths", reqs)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), ".git/config")); string(b) != "[core]\n" {
		t.Fatalf("config changed: %q", b)
	}
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestHardLinkToOutsideUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := os.Link(filepath.Join(f.base, "outside", "x"), filepath.Join(f.ws.Dir(), "hl")); err != nil {
		t.Skip("no hard links here:", err)
	}
	res := f.call(t, "write_file", map[string]any{"path": "hl", "content": "pwned"})
	if !res.IsError || !strings.Contains(res.Output, "hard link") {
		t.Fatalf("got %+v", res)
	}
	// edit_file too, after reading it.
	if r := f.call(t, "read_file", map[string]any{"path": "hl"}); r.IsError {
		t.Fatal(r.Output)
	}
	res = f.call(t, "edit_file", map[string]any{"path": "hl", "old_string": "secret", "new_string": "pwned"})
	if !res.IsError || !strings.Contains(res.Output, "hard link") {
		t.Fatalf("edit got %+v", res)
	}
	f.assertOutsideUntouched(t)
}

// TestRacingFlipThroughWriteTool flips a directory between a real directory
// and a symlink to outside while write_file writes into it in a loop.
func TestRacingFlipThroughWriteTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	flip := filepath.Join(f.ws.Dir(), "flip")
	outside := filepath.Join(f.base, "outside")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			_ = os.RemoveAll(flip)
			_ = os.Mkdir(flip, 0o755)
			time.Sleep(time.Microsecond)
			_ = os.RemoveAll(flip)
			_ = os.Symlink(outside, flip)
		}
	}()
	landed := 0
	deadline := time.Now().Add(time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		name := "flip/x"
		if i%2 == 1 {
			name = fmt.Sprintf("flip/n%d", i)
		}
		if r := f.call(t, "write_file", map[string]any{"path": name, "content": "pwned"}); !r.IsError {
			landed++
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("writes that landed inside the workspace: %d", landed)
	f.assertOutsideUntouched(t)
}

// TestRacingFlipThroughGrep flips a directory between a real one and a
// symlink to outside while grep and read_file search it: the outside
// file's content must never be returned.
func TestRacingFlipThroughGrep(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	flip := filepath.Join(f.ws.Dir(), "flip")
	outside := filepath.Join(f.base, "outside")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			_ = os.RemoveAll(flip)
			_ = os.Mkdir(flip, 0o755)
			_ = os.WriteFile(filepath.Join(flip, "x"), []byte("inside\n"), 0o644)
			_ = os.RemoveAll(flip)
			_ = os.Symlink(outside, flip)
		}
	}()
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		for _, r := range []ToolResult{
			f.call(t, "grep", map[string]any{"pattern": "secret|inside"}),
			f.call(t, "grep", map[string]any{"pattern": "secret|inside", "path": "flip"}),
			f.call(t, "read_file", map[string]any{"path": "flip/x"}),
			f.call(t, "glob", map[string]any{"pattern": "flip/*"}),
		} {
			if strings.Contains(r.Output, "secret outside") {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("outside content leaked: %q", r.Output)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
}

package tools

// Class "no gap between verdict and action": a file tool acts on exactly
// the path the gate judged. The permitter's answer runs between Prepare
// (where the path is resolved and the request built) and Run, exactly
// where a person would be asked, so a swap injected there is the swap an
// attacker races for. Every swapped call must fail with a clear error and
// nothing may be written through the link or read from where it points.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// gapFixture is newFixture plus the usual targets of a swap: .git/hooks
// (holding a file with the same content as d/x, so an edit through a link
// would match), a credential, a secrets directory and d/.
func gapFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	for rel, content := range map[string]string{
		".git/hooks/pre-commit.sample": "sample\n",
		".git/hooks/x":                 "inside\n",
		".env":                         "API_KEY=hunter2\n",
		"d/x":                          "inside\n",
		"d/keep":                       "keep\n",
		"notes":                        "inside notes\n",
		"secrets/notes":                "SECRET NOTES\n",
	} {
		f.write(t, rel, content)
	}
	return f
}

// assertNoEscape checks that .git/hooks, the credential and the secrets
// are as gapFixture made them and nothing changed outside.
func (f *fixture) assertNoEscape(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(f.ws.Dir(), ".git", "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "pre-commit.sample,x" {
		t.Errorf(".git/hooks holds %v", names)
	}
	for rel, want := range map[string]string{
		".git/hooks/pre-commit.sample": "sample\n",
		".git/hooks/x":                 "inside\n",
		".env":                         "API_KEY=hunter2\n",
		"secrets/notes":                "SECRET NOTES\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), rel)); string(b) != want {
			t.Errorf("%s changed: %q", rel, b)
		}
	}
	f.assertOutsideUntouched(t)
}

// swapLink replaces the workspace entry rel with a link to target.
func (f *fixture) swapLink(t *testing.T, rel, target string) {
	t.Helper()
	p := filepath.Join(f.ws.Dir(), rel)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestSwapBetweenVerdictAndAction injects a swap between Prepare and Run
// of every file tool.
func TestSwapBetweenVerdictAndAction(t *testing.T) {
	t.Parallel()
	hooks := ".git/hooks"
	cases := []struct {
		name  string
		tool  string
		input map[string]any
		// before runs first (with every call allowed), e.g. the read an
		// edit needs.
		before []map[string]any
		swap   func(t *testing.T, f *fixture)
		want   string
		// leaks must not appear in the output.
		leaks []string
	}{
		{name: "write into dir swapped for a link to .git/hooks", tool: "write_file",
			input: map[string]any{"path": "d/pre-commit", "content": "#!/bin/sh\necho pwned\n"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", hooks) }, want: "changed after it was checked"},
		{name: "write into dir swapped for an absolute link to .git/hooks", tool: "write_file",
			input: map[string]any{"path": "d/pre-commit", "content": "pwned"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", filepath.Join(f.ws.Dir(), hooks)) }, want: "changed after it was checked"},
		{name: "overwrite in dir swapped for a link outside", tool: "write_file",
			input: map[string]any{"path": "d/x", "content": "pwned"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", filepath.Join(f.base, "outside")) }, want: "changed after it was checked"},
		{name: "create in dir swapped for a link outside", tool: "write_file",
			input: map[string]any{"path": "d/new", "content": "pwned"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", filepath.Join(f.base, "outside")) }, want: "changed after it was checked"},
		{name: "missing dir appears as a link to .git/hooks", tool: "write_file",
			input: map[string]any{"path": "new/pre-commit", "content": "pwned"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "new", hooks) }, want: "changed after it was checked"},
		{name: "missing nested dir appears as a link outside", tool: "write_file",
			input: map[string]any{"path": "a/b/c", "content": "pwned"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "a/b", filepath.Join(f.base, "outside")) }, want: "changed after it was checked"},
		{name: "file swapped for a link to a hook", tool: "write_file",
			input: map[string]any{"path": "notes", "content": "pwned"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "notes", hooks+"/x") }, want: "changed after it was checked"},
		{name: "file swapped for a hard link to outside", tool: "write_file",
			input: map[string]any{"path": "notes", "content": "pwned"},
			swap: func(t *testing.T, f *fixture) {
				p := filepath.Join(f.ws.Dir(), "notes")
				_ = os.Remove(p)
				if err := os.Link(filepath.Join(f.base, "outside", "x"), p); err != nil {
					t.Skip("link:", err)
				}
			}, want: "hard link", leaks: []string{"secret outside"}},
		{name: "file swapped for a FIFO", tool: "write_file",
			input: map[string]any{"path": "notes", "content": "pwned"},
			swap: func(t *testing.T, f *fixture) {
				p := filepath.Join(f.ws.Dir(), "notes")
				_ = os.Remove(p)
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Skip("mkfifo:", err)
				}
			}, want: "not a regular file"},
		{name: "dir replaced by another directory", tool: "write_file",
			input: map[string]any{"path": "d/x", "content": "pwned"},
			swap: func(t *testing.T, f *fixture) {
				d := filepath.Join(f.ws.Dir(), "d")
				if err := os.Rename(d, d+".old"); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}, want: "changed after it was checked"},
		{name: "edit in dir swapped for a link to .git/hooks", tool: "edit_file",
			input:  map[string]any{"path": "d/x", "old_string": "inside", "new_string": "pwned"},
			before: []map[string]any{{"tool": "read_file", "path": "d/x"}},
			swap:   func(t *testing.T, f *fixture) { f.swapLink(t, "d", hooks) }, want: "changed after it was checked"},
		{name: "edit of a file swapped for a link to an identical hook", tool: "edit_file",
			input:  map[string]any{"path": "d/x", "old_string": "inside", "new_string": "pwned"},
			before: []map[string]any{{"tool": "read_file", "path": "d/x"}},
			swap:   func(t *testing.T, f *fixture) { f.swapLink(t, "d/x", filepath.Join(f.ws.Dir(), hooks, "x")) }, want: "changed after it was checked"},
		{name: "read of a file swapped for a link to .env", tool: "read_file",
			input: map[string]any{"path": "notes"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "notes", ".env") }, want: "changed after it was checked",
			leaks: []string{"hunter2"}},
		{name: "read in dir swapped for a link to a secrets dir", tool: "read_file",
			input:  map[string]any{"path": "d/notes"},
			before: []map[string]any{{"tool": "write_file", "path": "d/notes", "content": "harmless\n"}},
			swap:   func(t *testing.T, f *fixture) { f.swapLink(t, "d", "secrets") }, want: "changed after it was checked",
			leaks: []string{"SECRET"}},
		{name: "read in dir swapped for a link outside", tool: "read_file",
			input: map[string]any{"path": "d/x"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", filepath.Join(f.base, "outside")) }, want: "changed after it was checked",
			leaks: []string{"secret outside"}},
		{name: "list of a dir swapped for a link to .git/hooks", tool: "list_dir",
			input: map[string]any{"path": "d"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", hooks) }, want: "changed after it was checked",
			leaks: []string{"pre-commit.sample"}},
		{name: "grep of a dir swapped for a link to a secrets dir", tool: "grep",
			input: map[string]any{"pattern": "SECRET|inside", "path": "d"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", "secrets") }, want: "changed after it was checked",
			leaks: []string{"SECRET"}},
		{name: "grep of a file swapped for a link to .env", tool: "grep",
			input: map[string]any{"pattern": "API|inside", "path": "notes"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "notes", ".env") }, want: "changed after it was checked",
			leaks: []string{"hunter2"}},
		{name: "grep of a dir swapped for a link outside", tool: "grep",
			input: map[string]any{"pattern": "secret", "path": "d"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", filepath.Join(f.base, "outside")) }, want: "changed after it was checked",
			leaks: []string{"secret outside"}},
		{name: "glob of a dir swapped for a link to .git/hooks", tool: "glob",
			input: map[string]any{"pattern": "*", "path": "d"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", hooks) }, want: "changed after it was checked",
			leaks: []string{"pre-commit"}},
		{name: "glob below a dir swapped for a link outside", tool: "glob",
			input: map[string]any{"pattern": "**/*", "path": "d"},
			swap:  func(t *testing.T, f *fixture) { f.swapLink(t, "d", filepath.Join(f.base, "outside")) }, want: "changed after it was checked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := gapFixture(t)
			for _, b := range c.before {
				in := map[string]any{}
				for k, v := range b {
					if k != "tool" {
						in[k] = v
					}
				}
				if r := f.call(t, b["tool"].(string), in); r.IsError {
					t.Fatalf("before: %s", r.Output)
				}
			}
			f.perm.answer = func(engine.PermissionRequest) engine.Answer {
				c.swap(t, f)
				return engine.Answer{Decision: engine.DecisionAllow}
			}
			done := make(chan ToolResult, 1)
			go func() { done <- f.call(t, c.tool, c.input) }()
			var r ToolResult
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the call hung")
			}
			if !r.IsError || !strings.Contains(r.Output, c.want) {
				t.Fatalf("after the swap: %+v, want an error containing %q", r, c.want)
			}
			for _, l := range c.leaks {
				if strings.Contains(r.Output, l) {
					t.Errorf("output leaks %q: %q", l, r.Output)
				}
			}
			for _, s := range f.snaps.all() {
				if strings.Contains(string(s.Content), "secret outside") || strings.Contains(string(s.Content), "hunter2") {
					t.Errorf("snapshot holds content from behind the link: %+v", s)
				}
			}
			f.assertNoEscape(t)
		})
	}
}

// TestRacingSwapperAgainstFileTools races a goroutine that flips a
// directory between a real one and links to .git/hooks, to outside and to
// a secrets directory, and a file between a regular file and a link to
// .env, against every file tool called through the executor and judged by
// the real gate (accept-edits: writes inside the workspace are allowed;
// protected and outside paths, .git and secrets/ reads are denied;
// questions are answered no), a fixed
// number of rounds. Nothing may ever be written through a link and no
// secret or outside content may be returned.
func TestRacingSwapperAgainstFileTools(t *testing.T) {
	t.Parallel()
	f := gapFixture(t)
	// The rules make every target of the swapper something the gate
	// refuses to read, so any of its content in a result came through a
	// link that appeared after the verdict.
	g, err := permission.New(permission.Options{Home: filepath.Join(f.base, "home"),
		User: permission.Rules{Deny: []string{"Read(secrets/**)", "Read(.git/**)"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := &gatePermitter{g: g, base: engine.GateQuery{Workspace: f.ws.Dir(), Mode: engine.ModeFullAutonomous,
		PermissionMode: engine.PermissionAcceptEdits}}
	flip := filepath.Join(f.ws.Dir(), "flip")
	fnotes := filepath.Join(f.ws.Dir(), "fnotes")
	dirTargets := []string{".git/hooks", filepath.Join(f.base, "outside"), "secrets", filepath.Join(f.ws.Dir(), ".git", "hooks")}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			_ = os.RemoveAll(flip)
			if os.Mkdir(flip, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(flip, "x"), []byte("inside\n"), 0o644)
			}
			_ = os.Remove(fnotes)
			_ = os.WriteFile(fnotes, []byte("inside notes\n"), 0o644)
			_ = os.RemoveAll(flip)
			_ = os.Symlink(dirTargets[i%len(dirTargets)], flip)
			_ = os.Remove(fnotes)
			_ = os.Symlink(".env", fnotes)
		}
	}()
	run := func(name string, in map[string]any) ToolResult {
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		return f.ex.Execute(context.Background(), p, f.rec, []ToolCall{{ID: fmt.Sprintf("race-%d", callSeq.Add(1)), Name: name, Input: raw}})[0]
	}
	leaked := func(r ToolResult) string {
		for _, l := range []string{"hunter2", "SECRET", "secret outside", "pre-commit.sample"} {
			if strings.Contains(r.Output, l) {
				return l
			}
		}
		return ""
	}
	const rounds = 300
	landed := 0
	for i := range rounds {
		results := []ToolResult{
			run("write_file", map[string]any{"path": "flip/x", "content": "inside\n"}),
			run("write_file", map[string]any{"path": fmt.Sprintf("flip/n%d", i), "content": "pwned"}),
			run("write_file", map[string]any{"path": "flip/pre-commit", "content": "pwned"}),
			run("read_file", map[string]any{"path": "flip/x"}),
			run("edit_file", map[string]any{"path": "flip/x", "old_string": "inside\n", "new_string": "inside\n\n"}),
			run("read_file", map[string]any{"path": "fnotes"}),
			run("write_file", map[string]any{"path": "fnotes", "content": "pwned"}),
			run("grep", map[string]any{"pattern": "SECRET|secret|inside|API", "path": "flip"}),
			run("grep", map[string]any{"pattern": "API|inside", "path": "fnotes"}),
			run("list_dir", map[string]any{"path": "flip"}),
			run("glob", map[string]any{"pattern": "*", "path": "flip"}),
		}
		for _, r := range results {
			if l := leaked(r); l != "" {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("%s returned %q: %q", r.Name, l, r.Output)
			}
			if !r.IsError && (r.Name == "write_file" || r.Name == "edit_file") {
				landed++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d rounds: %d writes landed inside", rounds, landed)
	f.assertNoEscape(t)
}

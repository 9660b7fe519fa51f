package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestToolsRejectControlCharactersBeforeAnySyscall prepares every file tool
// with bad names on a workspace whose root is already closed: a tool that
// touched the file system would get os.ErrClosed, so an invalid-path error
// proves the name never reached a syscall.
func TestToolsRejectControlCharactersBeforeAnySyscall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ws, err := workspace.Open(f.ws.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	env := NewEnv(ws, "s", &memSnapshots{})
	ctx := context.Background()
	if _, err := (ReadFile{}).Prepare(ctx, env, json.RawMessage(`{"path":"x"}`)); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("a valid name on the closed root: %v, want os.ErrClosed", err)
	}
	for _, name := range []string{"a\x00b", "x\x00/../../outside/x", "a\nb", "a\rb", "a\x1b]0;t\x07b", "a\x7fb", "a\u009bb"} {
		for _, c := range []struct {
			tool  Tool
			input map[string]any
		}{
			{ReadFile{}, map[string]any{"path": name}},
			{WriteFile{}, map[string]any{"path": name, "content": "x"}},
			{EditFile{}, map[string]any{"path": name, "old_string": "a", "new_string": "b"}},
			{ListDir{}, map[string]any{"path": name}},
			{Glob{}, map[string]any{"pattern": "*", "path": name}},
			{Grep{}, map[string]any{"pattern": "x", "path": name}},
		} {
			raw, _ := json.Marshal(c.input)
			_, err := c.tool.Prepare(ctx, env, raw)
			if !errors.Is(err, workspace.ErrInvalidPath) || errors.Is(err, os.ErrClosed) {
				t.Errorf("%s %q: %v, want an invalid path error before any syscall", c.tool.Spec().Name, name, err)
			}
		}
	}
	// bash refuses a NUL before anything runs.
	if _, err := (Bash{}).Prepare(ctx, env, json.RawMessage(`{"command":"touch a\u0000b"}`)); err == nil {
		t.Error("bash accepted a NUL")
	}
}

// TestSocketsAndDevicesRefused puts a Unix socket and a character device in
// the workspace: the file tools refuse both (no hang, no write through),
// and grep skips them.
func TestSocketsAndDevicesRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sock := filepath.Join(f.ws.Dir(), "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skip("unix socket:", err)
	}
	defer func() { _ = l.Close() }()
	names := []string{"sock"}
	if err := syscall.Mknod(filepath.Join(f.ws.Dir(), "null"), syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err == nil {
		names = append(names, "null")
	} else {
		t.Logf("mknod not permitted (%v): devices untested here", err)
	}
	for _, n := range names {
		for _, c := range []struct {
			tool  string
			input map[string]any
		}{
			{"read_file", map[string]any{"path": n}},
			{"write_file", map[string]any{"path": n, "content": "pwned"}},
			{"edit_file", map[string]any{"path": n, "old_string": "a", "new_string": "b"}},
		} {
			done := make(chan ToolResult, 1)
			go func() { done <- f.call(t, c.tool, c.input) }()
			select {
			case r := <-done:
				if !r.IsError || !strings.Contains(r.Output, "not a regular file") {
					t.Errorf("%s %s: %+v", c.tool, n, r)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s %s hung", c.tool, n)
			}
		}
		fi, err := os.Lstat(filepath.Join(f.ws.Dir(), n))
		if err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s was replaced: %v %v", n, fi, err)
		}
	}
	if r := f.call(t, "grep", map[string]any{"pattern": "."}); r.IsError {
		t.Errorf("grep over a socket and a device: %+v", r)
	}
	if len(f.snaps.all()) != 0 {
		t.Error("a snapshot was taken of a refused write")
	}
}

// TestParallelBatchIsBounded runs six read-only calls with MaxParallel 2:
// exactly two run at a time (more would break the bound, fewer would not
// be parallel).
func TestParallelBatchIsBounded(t *testing.T) {
	var active, peak atomic.Int32
	ro := &probe{name: "ro", parallel: true, run: func(ctx context.Context, in probeInput) (string, error) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(40 * time.Millisecond)
		return "ok", nil
	}}
	f := newFixture(t, ro)
	ex, err := NewExecutor(ExecutorConfig{Registry: f.ex.Registry(), Env: f.env, MaxParallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	res := ex.Execute(context.Background(), f.perm, f.rec, calls("ro", "ro", "ro", "ro", "ro", "ro"))
	for _, r := range res {
		if r.IsError || r.Output != "ok" {
			t.Fatalf("result %+v", r)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrency %d, want exactly 2", p)
	}
}

// TestAtMostOnceAcrossConcurrentExecutes sends the same tool-call id from
// two goroutines at once (a runtime replaying a call while the first is
// still running): it runs once and both get its result.
func TestAtMostOnceAcrossConcurrentExecutes(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	slow := &probe{name: "slow", run: func(context.Context, probeInput) (string, error) {
		runs.Add(1)
		time.Sleep(50 * time.Millisecond)
		return "done", nil
	}}
	f := newFixture(t, slow)
	var wg sync.WaitGroup
	out := make([]ToolResult, 4)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = f.ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{{ID: "dup", Name: "slow", Input: json.RawMessage(`{"n":1}`)}})[0]
		}()
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("ran %d times", runs.Load())
	}
	for _, r := range out {
		if r.Output != "done" || r.IsError {
			t.Errorf("result %+v", r)
		}
	}
}

// TestDescriptionsAreTheEmbeddedFiles checks that every built-in tool's
// description is its descriptions/<name>.md file, and that every file
// belongs to a tool.
func TestDescriptionsAreTheEmbeddedFiles(t *testing.T) {
	t.Parallel()
	files, err := descriptionFS.ReadDir("descriptions")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	// read_artifact is registered where a session stores artifacts,
	// web_search where a runtime's configuration enables it, task for
	// the native runtimes (which can spawn subagents).
	for _, tl := range append(Builtins(), ReadArtifact{}, WebSearch{}, Task{}) {
		s := tl.Spec()
		b, err := descriptionFS.ReadFile("descriptions/" + s.Name + ".md")
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if s.Description != strings.TrimSpace(string(b)) {
			t.Errorf("%s: description is not the embedded file", s.Name)
		}
		seen[s.Name+".md"] = true
	}
	for _, fe := range files {
		if !seen[fe.Name()] {
			t.Errorf("descriptions/%s belongs to no tool", fe.Name())
		}
	}
}

// TestDenyRulesRemoveTools builds the registry the way a session does,
// filtered by the gate's DeniesTool: a spec-less deny rule removes the tool
// from what the model sees and from what the executor runs; a deny rule
// with a spec (`Bash(rm:*)`) keeps the tool and judges each call.
func TestDenyRulesRemoveTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g, err := permission.New(permission.Options{User: permission.Rules{Deny: []string{"Bash", "Edit", "Read(./.env)", "WebFetch"}}})
	if err != nil {
		t.Fatal(err)
	}
	reg := NewBuiltinRegistry().Filter(g.DeniesTool)
	var names []string
	for _, s := range reg.List(engine.ModeFullAutonomous) {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "read_file,list_dir,glob,grep" {
		t.Fatalf("model sees %s", got)
	}
	ex, err := NewExecutor(ExecutorConfig{Registry: reg, Env: f.env})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []ToolCall{
		{ID: "b", Name: "bash", Input: json.RawMessage(`{"command":"touch made"}`)},
		{ID: "w", Name: "write_file", Input: json.RawMessage(`{"path":"made","content":"x"}`)},
	} {
		r := ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{c})[0]
		if !r.IsError || !strings.Contains(r.Output, "unknown tool") {
			t.Errorf("%s: %+v", c.Name, r)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.ws.Dir(), "made")); err == nil {
		t.Fatal("a removed tool ran")
	}
	if len(f.perm.requests()) != 0 {
		t.Error("the gate was asked about a removed tool")
	}
	g2, err := permission.New(permission.Options{User: permission.Rules{Deny: []string{"Bash(rm:*)"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := NewBuiltinRegistry().Filter(g2.DeniesTool).Lookup("bash"); !ok {
		t.Error("a deny rule with a spec removed the whole tool")
	}
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestMain lets the test binary play kz's part as the Landlock wrapper of
// sandboxed commands (the sandbox re-executes os.Executable()).
func TestMain(m *testing.M) {
	if sandbox.IsWrapperInvocation(os.Args) {
		os.Exit(sandbox.WrapperMain(os.Args))
	}
	goleak.VerifyTestMain(m)
}

// fakePermitter records requests and answers with answer (allow when nil).
type fakePermitter struct {
	mu     sync.Mutex
	reqs   []engine.PermissionRequest
	answer func(engine.PermissionRequest) engine.Answer
}

func (f *fakePermitter) RequestPermission(_ context.Context, r engine.PermissionRequest) engine.Answer {
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	ans := f.answer
	f.mu.Unlock()
	if ans == nil {
		return engine.Answer{Decision: engine.DecisionAllow}
	}
	return ans(r)
}

func (f *fakePermitter) requests() []engine.PermissionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// recorder records events.
type recorder struct {
	mu  sync.Mutex
	evs []engine.Event
}

func (r *recorder) Emit(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recorder) ofType(t engine.EventType) []engine.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []engine.Event
	for _, e := range r.evs {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// memSnapshots is an in-memory SnapshotSaver.
type memSnapshots struct {
	mu    sync.Mutex
	snaps []Snapshot
}

func (m *memSnapshots) SaveSnapshot(_ context.Context, s Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.Content = slices.Clone(s.Content)
	m.snaps = append(m.snaps, s)
	return nil
}

func (m *memSnapshots) all() []Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.snaps)
}

// memArtifacts is an in-memory ArtifactSaver.
type memArtifacts struct {
	mu  sync.Mutex
	got map[string][]byte
}

func (m *memArtifacts) SaveArtifact(_ context.Context, sessionID, callID string, content []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.got == nil {
		m.got = map[string][]byte{}
	}
	ref := "artifact:" + sessionID + "/" + callID
	m.got[ref] = slices.Clone(content)
	return ref, nil
}

// fixture is a workspace <base>/proj with siblings <base>/proj-evil and
// <base>/outside, and an executor over it.
type fixture struct {
	base  string
	ws    *workspace.Workspace
	env   *Env
	snaps *memSnapshots
	arts  *memArtifacts
	ex    *Executor
	perm  *fakePermitter
	rec   *recorder
}

func newFixture(t *testing.T, extra ...Tool) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proj", "proj-evil", "outside"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, d, "x"), []byte("secret "+d+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(filepath.Join(base, "proj"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	f := &fixture{base: base, ws: ws, snaps: &memSnapshots{}, arts: &memArtifacts{}, perm: &fakePermitter{}, rec: &recorder{}}
	f.env = NewEnv(ws, "sess1", f.snaps)
	reg := NewBuiltinRegistry()
	for _, x := range extra {
		if err := reg.Register(x); err != nil {
			t.Fatal(err)
		}
	}
	f.ex, err = NewExecutor(ExecutorConfig{Registry: reg, Env: f.env, Artifacts: f.arts})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// write creates a workspace file.
func (f *fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.ws.Dir(), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// callSeq numbers tool calls across tests, which run in parallel.
var callSeq atomic.Int64

// call runs one tool call with a fresh id.
func (f *fixture) call(t *testing.T, name string, input any) ToolResult {
	t.Helper()
	return f.callID(t, fmt.Sprintf("call-%d", callSeq.Add(1)), name, input)
}

func (f *fixture) callID(t *testing.T, id, name string, input any) ToolResult {
	t.Helper()
	var raw json.RawMessage
	switch v := input.(type) {
	case string:
		raw = json.RawMessage(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	res := f.ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{{ID: id, Name: name, Input: raw}})
	if len(res) != 1 {
		t.Fatalf("got %d results", len(res))
	}
	return res[0]
}

// assertOutsideUntouched checks the siblings of the workspace still hold
// exactly their one original file.
func (f *fixture) assertOutsideUntouched(t *testing.T) {
	t.Helper()
	for _, d := range []string{"outside", "proj-evil"} {
		ents, err := os.ReadDir(filepath.Join(f.base, d))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 {
			t.Errorf("%s has %d entries", d, len(ents))
		}
		b, err := os.ReadFile(filepath.Join(f.base, d, "x"))
		if err != nil || string(b) != "secret "+d+"\n" {
			t.Errorf("%s/x changed: %q %v", d, b, err)
		}
	}
	ents, _ := os.ReadDir(f.base)
	if len(ents) != 3 {
		t.Errorf("base dir has %d entries, want 3", len(ents))
	}
}

// denyAll answers every request with a denial carrying reason.
func denyAll(reason string) func(engine.PermissionRequest) engine.Answer {
	return func(engine.PermissionRequest) engine.Answer {
		return engine.Answer{Decision: engine.DecisionDeny, Stage: "test", Reason: reason}
	}
}

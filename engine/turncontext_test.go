package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// contextRuntime records the turn context each of its turns ran under;
// blindRuntime makes it an EnvironmentBlind one. fail makes its turns
// fail with a retryable error, so that the failover chain goes on.
type contextRuntime struct {
	name string
	fail bool
	mu   sync.Mutex
	seen []engine.TurnContext
}

func (r *contextRuntime) Name() string { return r.name }

func (r *contextRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion)}
}

func (r *contextRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	r.mu.Lock()
	r.seen = append(r.seen, t.Context)
	r.mu.Unlock()
	if r.fail {
		return engine.Result{}, &engine.RuntimeError{Kind: engine.ErrCrashed, Runtime: r.name, Message: "crashed"}
	}
	return engine.Result{Status: engine.StatusComplete, Output: "ok"}, nil
}

func (r *contextRuntime) contexts() []engine.TurnContext {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.TurnContext(nil), r.seen...)
}

// blindRuntime is a contextRuntime that declares it never shows the
// environment.
type blindRuntime struct{ *contextRuntime }

func (blindRuntime) IgnoresEnvironment() bool { return true }

// turnLoaders are a memory and an environment loader that count their
// calls, and the same two as the one Context callback that loads both
// one after the other, as sessions did before Config.Environment.
type turnLoaders struct {
	memCalls, envCalls atomic.Int32
}

var (
	loadedMemory = []engine.MemoryFile{{Path: "/ws/AGENTS.md", Name: "AGENTS.md", Scope: engine.MemoryProject, Content: "be brief"}}
	loadedEnv    = engine.Environment{OS: "linux/amd64", Workspace: "/ws", GitBranch: "main", GitStatus: "1 modified"}
)

func (l *turnLoaders) memory(context.Context, string) engine.TurnContext {
	l.memCalls.Add(1)
	return engine.TurnContext{Memory: loadedMemory, Problems: []string{"x.md: unreadable"}}
}

func (l *turnLoaders) env(context.Context, string) engine.Environment {
	l.envCalls.Add(1)
	return loadedEnv
}

func (l *turnLoaders) serial(ctx context.Context, ws string) engine.TurnContext {
	tc := l.memory(ctx, ws)
	tc.Env = l.env(ctx, ws)
	return tc
}

// TestTurnContextEnvironmentOnlyWhenShown: with Config.Environment, a turn
// whose runtimes all ignore the environment loads the memory only (no git
// status runs); a turn with one runtime that shows it, first or only in
// the failover chain, loads both, and every attempt gets what loading
// them one after the other gives.
func TestTurnContextEnvironmentOnlyWhenShown(t *testing.T) {
	cases := []struct {
		name     string
		runtimes func() (first, second *contextRuntime, entries []engine.RuntimeEntry, failover []engine.ChainLink)
		wantEnv  bool
	}{
		{"blind only", func() (*contextRuntime, *contextRuntime, []engine.RuntimeEntry, []engine.ChainLink) {
			a := &contextRuntime{name: "cli"}
			return a, nil, []engine.RuntimeEntry{entry(blindRuntime{a})}, nil
		}, false},
		{"shows it", func() (*contextRuntime, *contextRuntime, []engine.RuntimeEntry, []engine.ChainLink) {
			a := &contextRuntime{name: "native"}
			return a, nil, []engine.RuntimeEntry{entry(a)}, nil
		}, true},
		{"blind, failing over to one that shows it", func() (*contextRuntime, *contextRuntime, []engine.RuntimeEntry, []engine.ChainLink) {
			a := &contextRuntime{name: "cli", fail: true}
			b := &contextRuntime{name: "native"}
			return a, b, []engine.RuntimeEntry{entry(blindRuntime{a}), entry(b)}, []engine.ChainLink{{Runtime: "native"}}
		}, true},
		{"blind, failing over to another blind one", func() (*contextRuntime, *contextRuntime, []engine.RuntimeEntry, []engine.ChainLink) {
			a := &contextRuntime{name: "cli", fail: true}
			b := &contextRuntime{name: "cli2"}
			return a, b, []engine.RuntimeEntry{entry(blindRuntime{a}), entry(blindRuntime{b})}, []engine.ChainLink{{Runtime: "cli2"}}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first, second, entries, failover := c.runtimes()
			var split turnLoaders
			s, _ := newSession(t, engine.Config{Runtimes: entries, Runtime: first.name, Mode: engine.ModeAnalysisOnly, Workspace: "/ws",
				Failover: failover, Context: split.memory, Environment: split.env})
			if _, err := s.RunTurn(context.Background(), "hi"); err != nil {
				t.Fatal(err)
			}
			if got := split.memCalls.Load(); got != 1 {
				t.Errorf("memory loaded %d times, want once per turn", got)
			}
			wantCalls := int32(0)
			if c.wantEnv {
				wantCalls = 1
			}
			if got := split.envCalls.Load(); got != wantCalls {
				t.Errorf("environment loaded %d times, want %d", got, wantCalls)
			}
			var serial turnLoaders
			want := serial.serial(context.Background(), "/ws")
			if !c.wantEnv {
				want.Env = engine.Environment{}
			}
			all := first.contexts()
			if second != nil {
				all = append(all, second.contexts()...)
			}
			if len(all) == 0 {
				t.Fatal("no attempt ran")
			}
			for i, tc := range all {
				if tc.Env != want.Env || len(tc.Memory) != 1 || tc.Memory[0] != want.Memory[0] ||
					len(tc.Problems) != 1 || tc.Problems[0] != want.Problems[0] {
					t.Errorf("attempt %d ran under %+v, want %+v", i, tc, want)
				}
			}
		})
	}
}

// TestTurnContextWithoutEnvironmentLoader: a session without
// Config.Environment loads its whole context through Context, for every
// runtime, as before.
func TestTurnContextWithoutEnvironmentLoader(t *testing.T) {
	a := &contextRuntime{name: "cli"}
	var l turnLoaders
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(blindRuntime{a})}, Runtime: "cli",
		Mode: engine.ModeAnalysisOnly, Workspace: "/ws", Context: l.serial})
	if _, err := s.RunTurn(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	got := a.contexts()
	if len(got) != 1 || got[0].Env != loadedEnv || len(got[0].Memory) != 1 {
		t.Errorf("contexts %+v", got)
	}
}

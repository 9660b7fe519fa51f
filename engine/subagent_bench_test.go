package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// loopSpawner is a parent runtime that spawns its children one after the
// other, b.N of them, inside one turn, so the benchmark times the spawn
// and wait alone.
type loopSpawner struct{ b *testing.B }

func (*loopSpawner) Name() string { return "spawner" }
func (*loopSpawner) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scriptedFull()}
}

func (r *loopSpawner) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	r.b.ResetTimer()
	for i := 0; i < r.b.N; i++ {
		res, err := t.SpawnChild(ctx, engine.ChildRequest{Prompt: "hi", Runtime: "child", ToolCallID: "c"})
		if err != nil || res.Output != "child answer" {
			r.b.Fatalf("spawn: %v %+v", err, res)
		}
	}
	r.b.StopTimer()
	return engine.Result{Status: engine.StatusComplete}, nil
}

// BenchmarkSpawnChild compares a child turn spawned and waited for
// (spawn) with the same scripted turn run directly on a session
// (direct): the difference is what delegation costs. The target is at
// most 5 ms of overhead.
func BenchmarkSpawnChild(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		j := &memJournal{}
		s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{entry(benchScript(b))}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = s.Close(context.Background()) }()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if final, err := s.RunTurn(context.Background(), "hi"); err != nil || final.Output != "child answer" {
				b.Fatalf("turn: %v %+v", err, final)
			}
		}
	})
	b.Run("spawn", func(b *testing.B) {
		j := &memJournal{}
		sp := &loopSpawner{b: b}
		s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{entry(sp), entry(benchScript(b))}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = s.Close(context.Background()) }()
		b.ReportAllocs()
		if _, err := s.RunTurn(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
	})
}

func benchScript(b *testing.B) engine.Runtime {
	b.Helper()
	rt, err := scripted.Parse("child", "child.jsonl", strings.NewReader(childScript))
	if err != nil {
		b.Fatal(err)
	}
	return rt
}

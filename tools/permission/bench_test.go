package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

var (
	hugeCommand   = "echo " + strings.Repeat("a", 1<<20)
	nestedCommand = strings.Repeat("$(", 10000) + "x" + strings.Repeat(")", 10000)
)

// BenchmarkGateCompound is the figure "gate decision for a typical
// compound shell command" (target: at most 50 µs).
func BenchmarkGateCompound(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{User: allow("Bash(git status:*)", "Bash(go test:*)", "Bash(tee:*)", "Edit(out.log)")})
	q := bashQuery(f.ws, "git status && go test ./... | tee out.log")
	ctx := context.Background()
	if d := g.Check(ctx, q).Decision; d != engine.DecisionAllow {
		b.Fatalf("decision %s", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		g.Check(ctx, q)
	}
}

// BenchmarkGateHugeCommand: a 1 MB command line is asked (target: within
// 100 ms).
func BenchmarkGateHugeCommand(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{})
	q := bashQuery(f.ws, hugeCommand)
	ctx := context.Background()
	for b.Loop() {
		if d := g.Check(ctx, q).Decision; d != engine.DecisionAsk {
			b.Fatalf("decision %s", d)
		}
	}
}

// BenchmarkGateNested: 10,000 nested command substitutions are asked
// without a stack overflow (target: within 100 ms).
func BenchmarkGateNested(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{})
	q := bashQuery(f.ws, nestedCommand)
	ctx := context.Background()
	for b.Loop() {
		if d := g.Check(ctx, q).Decision; d != engine.DecisionAsk {
			b.Fatalf("decision %s", d)
		}
	}
}

func TestHugeAndNestedAreAsked(t *testing.T) {
	f := newFixture(t)
	g := f.gate(t, Options{User: allow("Bash(*)")})
	for name, cmd := range map[string]string{
		"1MB": hugeCommand, "nested $(": nestedCommand,
		"nested backticks": strings.Repeat("echo `", 300) + strings.Repeat("`", 300),
		"nested parens":    strings.Repeat("(", 10000) + "ls" + strings.Repeat(")", 10000),
		"nested if":        strings.Repeat("if true; then ", 5000) + "ls" + strings.Repeat("; fi", 5000),
		"nested bash -c":   strings.Repeat("bash -c ", 50) + "ls",
	} {
		if d := g.Check(context.Background(), bashQuery(f.ws, cmd)).Decision; d != engine.DecisionAsk {
			t.Errorf("%s: %s, want ask", name, d)
		}
	}
}

// FuzzGate checks that no command or path makes the gate panic, and that
// a command the analysis cannot prove is never allowed unless yolo.
func FuzzGate(f *testing.F) {
	fx := newFixture(f)
	g := fx.gate(f, Options{User: allow("Bash(git status:*)", "Bash(ls:*)", "Edit(src/**)")})
	for _, s := range []string{"git status && rm -rf build", "ls $(x)", "cd .git && ls > x", "a=rm; $a", "../x", "src/../../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ctx := context.Background()
		rep := g.Evaluate(ctx, bashQuery(fx.ws, s))
		if rep.Decision == engine.DecisionAllow && len(rep.Unprovable) > 0 {
			t.Fatalf("%q allowed although unprovable: %q", s, rep.Unprovable)
		}
		q := engine.GateQuery{Workspace: fx.ws, Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk,
			Request: engine.PermissionRequest{Tool: "write_file", Paths: []string{s}, Write: true}}
		_ = g.Check(ctx, q)
	})
}

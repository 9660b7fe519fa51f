package permission

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

var (
	hugeCommand   = "echo " + strings.Repeat("a", 1<<20)
	nestedCommand = strings.Repeat("$(", 10000) + "x" + strings.Repeat(")", 10000)
)

// medianCheck runs g.Check in the benchmark loop, timing every call, and
// reports the median in µs: the figures are stated as medians, and ns/op
// is a mean that one slow outlier (a GC pause) can move.
func medianCheck(b *testing.B, g *Gate, q engine.GateQuery, want engine.Decision) {
	b.Helper()
	ctx := context.Background()
	samples := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		start := time.Now()
		d := g.Check(ctx, q).Decision
		el := time.Since(start)
		if d != want {
			b.Fatalf("decision %s, want %s", d, want)
		}
		if len(samples) < cap(samples) {
			samples = append(samples, el)
		}
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds())/1e3, "median-µs")
}

// BenchmarkGateCompound is the figure "gate decision for a typical
// compound shell command" (target: median at most 50 µs).
func BenchmarkGateCompound(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{User: allow("Bash(git status:*)", "Bash(go test:*)", "Bash(tee:*)", "Edit(out.log)")})
	q := bashQuery(f.ws, "git status && go test ./... | tee out.log")
	b.ReportAllocs()
	medianCheck(b, g, q, engine.DecisionAllow)
}

// BenchmarkGateCompoundDenied is the same figure for a compound command a
// deny rule stops (`git status && rm -rf build`).
func BenchmarkGateCompoundDenied(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{User: rmRules})
	b.ReportAllocs()
	medianCheck(b, g, bashQuery(f.ws, "git status && rm -rf build"), engine.DecisionDeny)
}

// BenchmarkGateCompoundParsedRules is the compound figure with rules
// that are matched on parsed commands (flag order, global options): a
// deny rule, an ask rule, allow rules and a Read deny rule all apply.
func BenchmarkGateCompoundParsedRules(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{User: Rules{
		Deny:  []string{"Bash(rm -rf:*)", "Bash(git push:*)", "Read(./secret/**)"},
		Ask:   []string{"Bash(npm publish:*)"},
		Allow: []string{"Bash(git status:*)", "Bash(go test:*)", "Bash(tee:*)", "Edit(out.log)"},
	}})
	q := bashQuery(f.ws, "git status && go test -count=1 ./... | tee out.log && git -C . push origin main")
	b.ReportAllocs()
	medianCheck(b, g, q, engine.DecisionDeny)
}

// BenchmarkGateHugeCommand: a 1 MB command line is asked (target: within
// 100 ms).
func BenchmarkGateHugeCommand(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{})
	medianCheck(b, g, bashQuery(f.ws, hugeCommand), engine.DecisionAsk)
}

// BenchmarkGateNested: 10,000 nested command substitutions are asked
// without a stack overflow (target: within 100 ms).
func BenchmarkGateNested(b *testing.B) {
	f := newFixture(b)
	g := f.gate(b, Options{})
	medianCheck(b, g, bashQuery(f.ws, nestedCommand), engine.DecisionAsk)
}

func TestHugeAndNestedAreAsked(t *testing.T) {
	t.Parallel()
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

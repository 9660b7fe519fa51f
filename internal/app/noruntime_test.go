package app

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// TestNoRuntimeOnlyWhenNothingRuns: the error comes only when every
// entry is unavailable, its kind is runtime_missing, and each reason is
// cut to its first clause.
func TestNoRuntimeOnlyWhenNothingRuns(t *testing.T) {
	rt, err := scripted.Load("x", filepath.Join("..", "..", "testdata", "scripts", "hello.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	down := []engine.RuntimeEntry{
		{Runtime: rt, Unavailable: "no API key: set the environment variable ANTHROPIC_API_KEY"},
		{Runtime: rt, Unavailable: "claude is not on PATH (install it, or set command = \"/path/to/claude\")"},
		{Runtime: rt, Unavailable: "http://127.0.0.1:1/v1 is unreachable: dial tcp 127.0.0.1:1: connect: connection refused"},
		{Runtime: rt, Unavailable: strings.Repeat("long ", 40) + "\nsecond line"},
	}
	err = noRuntime(down)
	var nr *NoRuntimeError
	if !errors.As(err, &nr) || engine.KindOf(err) != engine.ErrRuntimeMissing {
		t.Fatalf("err %v (kind %s)", err, engine.KindOf(err))
	}
	want := []string{"x: ANTHROPIC_API_KEY not set", "x: claude is not on PATH", "x: http://127.0.0.1:1/v1 is unreachable"}
	for i, w := range want {
		if nr.Reasons[i] != w {
			t.Errorf("reason %d = %q, want %q", i, nr.Reasons[i], w)
		}
	}
	if last := nr.Reasons[3]; strings.Contains(last, "second") || !strings.HasSuffix(last, "…") || len([]rune(last)) > maxReason+3 {
		t.Errorf("long reason %q", last)
	}
	if noRuntime(append(down, engine.RuntimeEntry{Runtime: rt})) != nil {
		t.Error("an available runtime still gave no-runtime")
	}
	if err := noRuntime(nil); err == nil || !strings.Contains(err.Error(), "none is configured") {
		t.Errorf("no entries: %v", err)
	}
}

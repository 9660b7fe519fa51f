package cli

import (
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// gcPercent reads the collector's percent (SetGCPercent returns the one it
// replaces, which is put back at once).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestRaiseGCForStartEndsOnTime: the raised percent is in force at once and
// the previous one is back after the given time; GOGC in the environment,
// even empty, leaves the percent alone.
func TestRaiseGCForStartEndsOnTime(t *testing.T) {
	prev := debug.SetGCPercent(150)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	unset := func(string) (string, bool) { return "", false }
	done := raiseGCForStart(400, 50*time.Millisecond, unset)
	if done == nil {
		t.Fatal("no raise with GOGC unset")
	}
	if got := gcPercent(); got != 400 {
		t.Fatalf("percent during the start = %d, want 400", got)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the raise never ended")
	}
	if got := gcPercent(); got != 150 {
		t.Fatalf("percent after the start = %d, want the previous 150", got)
	}

	for _, v := range []string{"100", "off", ""} {
		set := func(k string) (string, bool) { return v, k == "GOGC" }
		if done := raiseGCForStart(400, time.Millisecond, set); done != nil {
			t.Errorf("GOGC=%q: raised anyway", v)
		}
		if got := gcPercent(); got != 150 {
			t.Errorf("GOGC=%q: percent = %d, want 150 untouched", v, got)
		}
	}
}

// TestOneShotStartCollectsLess runs kz -p as its own process with the
// collector's trace on. With GOGC unset, no cycle runs at the default 4 MB
// goal: the start's raise is in force from the first allocations that
// count. With GOGC=100 in the environment, the person's setting, the
// first cycle runs at that goal.
func TestOneShotStartCollectsLess(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	var env []string
	for _, kv := range sb.environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	run := func(extra ...string) []string {
		t.Helper()
		environ := append(append(append([]string{}, env...), extra...), "GODEBUG=gctrace=1")
		_, stderr, code := sb.kzProcessIn(environ, "-p", "hi", "--runtime", "scripted", "--script", script("hello.jsonl"))
		if code != 0 {
			t.Fatalf("kz -p exited %d: %s", code, stderr)
		}
		return regexp.MustCompile(`(?m)^gc \d+ @.*$`).FindAllString(stderr, -1)
	}
	for _, line := range run() {
		if strings.Contains(line, " 4 MB goal") {
			t.Errorf("GOGC unset: a cycle at the default goal: %s", line)
		}
	}
	lines := run("GOGC=100")
	if len(lines) == 0 || !strings.Contains(lines[0], " 4 MB goal") {
		t.Errorf("GOGC=100: want the first cycle at the default 4 MB goal, got %q", lines)
	}
}

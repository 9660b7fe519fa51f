package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/headless"
)

// fakePercent stands for debug.SetGCPercent: it records every percent set.
type fakePercent struct {
	mu      sync.Mutex
	current int
	history []int
}

func (f *fakePercent) set(v int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.current
	f.current = v
	f.history = append(f.history, v)
	return prev
}

func (f *fakePercent) now() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current
}

// log is every percent set so far.
func (f *fakePercent) log() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.history)
}

// waitSet waits until n percents have been set in all: the watcher
// handles a turn's events after the turn's caller has them.
func (f *fakePercent) waitSet(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.log()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: percents set %v, want %d in all", what, f.log(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func unsetEnv(string) (string, bool) { return "", false }

// TestGCPolicyTakesTheHighestRaise: the start's raise and the turns' raise
// each hold the percent while they are in force, the higher one wins, and
// the percent found at first comes back when none is; a turn that starts on
// a large heap raises nothing; GOGC in the environment, even empty, turns
// the policy off.
func TestGCPolicyTakesTheHighestRaise(t *testing.T) {
	f := &fakePercent{current: 150}
	p := newGCPolicy(unsetEnv, f.set)
	if p == nil || f.now() != 150 {
		t.Fatalf("policy %v, percent %d: want a policy that left the percent at 150", p, f.now())
	}
	started := p.raiseForStart(50 * time.Millisecond)
	if got := f.now(); got != startGCPercent {
		t.Fatalf("during the start: percent %d, want %d", got, startGCPercent)
	}
	first := p.holdTurn(1 << 20)
	second := p.holdTurn(2 << 20)
	if first == nil || second == nil {
		t.Fatal("a turn on a small heap raised nothing")
	}
	if got := f.now(); got != startGCPercent {
		t.Fatalf("a turn during the start: percent %d, want the start's %d", got, startGCPercent)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the start's raise never ended")
	}
	if got := f.now(); got != turnGCPercent {
		t.Fatalf("after the start, two turns on: percent %d, want %d", got, turnGCPercent)
	}
	first()
	first()
	if got := f.now(); got != turnGCPercent {
		t.Fatalf("one turn of two ended (its release called twice): percent %d, want %d", got, turnGCPercent)
	}
	second()
	if got := f.now(); got != 150 {
		t.Fatalf("no raise left: percent %d, want the first 150", got)
	}
	if release := p.holdTurn(turnGCMaxLive + 1); release != nil || f.now() != 150 {
		t.Fatalf("a turn on a large heap: release %v, percent %d; want none and 150", release != nil, f.now())
	}

	for _, v := range []string{"100", "off", ""} {
		set := func(k string) (string, bool) { return v, k == "GOGC" }
		g := &fakePercent{current: 100}
		p := newGCPolicy(set, g.set)
		if p != nil {
			t.Errorf("GOGC=%q: a policy", v)
		}
		// A nil policy does nothing.
		if p.raiseForStart(time.Millisecond) != nil || p.holdTurn(0) != nil {
			t.Errorf("GOGC=%q: the nil policy raised", v)
		}
		p.watchTurns(nil, nil)()
		if got := g.log(); len(got) != 0 {
			t.Errorf("GOGC=%q: percents set %v, want none", v, got)
		}
	}
}

// TestGCPolicyHoldsEachTurn runs turns of a real session (the scripted
// runtime, its store in a file) and watches the percent: raised by the
// person's message, back at the final result, and never raised for a turn
// whose heap is larger than turnGCMaxLive.
func TestGCPolicyHoldsEachTurn(t *testing.T) {
	newSandbox(t)
	a, err := app.Open(context.Background(), app.Options{OneShot: true, Script: script("hello.jsonl"), Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	f := &fakePercent{current: 100}
	p := newGCPolicy(unsetEnv, f.set)
	// The watcher reads the live heap once per turn, at its user message:
	// the second turn starts on a large heap, the others on a small one.
	var mu sync.Mutex
	heaps := []uint64{1 << 20, turnGCMaxLive + 1, 1 << 20}
	reads := 0
	live := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		reads++
		return heaps[min(reads, len(heaps))-1]
	}
	stop := p.watchTurns(a.Session, live)
	defer stop()

	for range heaps {
		if _, err := headless.RunMessage(context.Background(), a.Session, engine.UserMessage{Text: "hi"}, headless.FormatText, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	// The base read back, then the first turn's raise and end, nothing
	// for the second, the third's raise and end.
	want := []int{100, 100, turnGCPercent, 100, turnGCPercent, 100}
	f.waitSet(t, len(want), "after three turns")
	if got := f.log(); !slices.Equal(got, want) {
		t.Fatalf("percents set %v, want %v", got, want)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if reads != len(heaps) {
		t.Fatalf("the live heap was read %d times, want once per turn (%d)", reads, len(heaps))
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
	run := func(extra ...string) []string {
		t.Helper()
		environ := append(gcTraceEnv(sb), extra...)
		_, stderr, code := sb.kzProcessIn(environ, "-p", "hi", "--runtime", "scripted", "--script", script("hello.jsonl"))
		if code != 0 {
			t.Fatalf("kz -p exited %d: %s", code, stderr)
		}
		return gcAny.FindAllString(stderr, -1)
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

// gcAny is any line of GODEBUG=gctrace=1 about a cycle.
var gcAny = regexp.MustCompile(`(?m)^gc \d+ @.*$`)

// gcLine is one cycle of GODEBUG=gctrace=1: the live heap it left and the
// goal it ran at, in MB.
var gcLine = regexp.MustCompile(`(?m)^gc \d+ @([\d.]+)s .*?(\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// TestLongTurnCollectsAtTheTurnsPercent runs, as its own process, a kz -p
// turn that streams for longer than the start's raise: each cycle's goal
// stays above 2.5 times the heap the cycle before it left live, which the
// default percent (goal about twice the live heap) does not reach, so the
// turn's raise holds once the start's has ended.
func TestLongTurnCollectsAtTheTurnsPercent(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	var b strings.Builder
	line := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	line(map[string]any{"type": "session_started"})
	chunk := strings.Repeat("Some text that streams, with a `code span` and **bold**. ", 96) + "\n"
	// Deltas 1 ms apart on the script's timeline: the turn outlasts
	// startGCFor by more than a second.
	const streamFor = 3500 * time.Millisecond
	for range int(streamFor / time.Millisecond) {
		line(map[string]any{"type": "text_delta", "text": chunk, "delay_ms": 1})
	}
	line(map[string]any{"type": "assistant_message", "text": "done"})
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := sb.kzProcessIn(gcTraceEnv(sb), "-p", "hi", "--runtime", "scripted", "--script", path)
	if code != 0 {
		t.Fatalf("kz -p exited %d: %s", code, stderr)
	}
	late, prevLive := 0, 0
	for _, m := range gcLine.FindAllStringSubmatch(stderr, -1) {
		at, _ := strconv.ParseFloat(m[1], 64)
		live, _ := strconv.Atoi(m[4])
		goal, _ := strconv.Atoi(m[5])
		// Only cycles inside the stream: after the start's raise, and
		// well before the last delta is due (the turn cannot end sooner),
		// since the turn's end puts the default back.
		if at > startGCFor.Seconds()+0.1 && at < streamFor.Seconds()-0.3 && prevLive >= 2 {
			late++
			if float64(goal) < 2.5*float64(prevLive) {
				t.Errorf("cycle at %.2fs ran at a %d MB goal after %d MB live: the default percent, not the turn's", at, goal, prevLive)
			}
		}
		prevLive = live
	}
	t.Logf("%d cycles inside the stream after the start's raise", late)
	if late == 0 {
		t.Fatalf("no cycle after the start's raise to look at:\n%s", strings.Join(gcAny.FindAllString(stderr, -1), "\n"))
	}
}

// gcTraceEnv is the sandbox's environment for a kz process with the
// collector's trace on and no GOGC or GODEBUG of this process's.
func gcTraceEnv(sb *sandbox) []string {
	var env []string
	for _, kv := range sb.environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	return append(env, "GODEBUG=gctrace=1")
}

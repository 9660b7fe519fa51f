package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// probe is a test tool whose calls record when they run.
type probe struct {
	name     string
	parallel bool
	// run is called with the decoded input.
	run func(ctx context.Context, in probeInput) (string, error)
	max int
}

type probeInput struct {
	N    int    `json:"n"`
	Text string `json:"text,omitempty"`
}

func (p *probe) Spec() ToolSpec {
	return ToolSpec{Name: p.name, ReadOnly: p.parallel, ConcurrencySafe: p.parallel, Exposure: ExposureNative,
		MaxResultBytes: p.max, Schema: json.RawMessage(`{"type":"object"}`)}
}

func (p *probe) Prepare(_ context.Context, _ *Env, input json.RawMessage) (Call, error) {
	var in probeInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	return &probeCall{p: p, in: in}, nil
}

type probeCall struct {
	p  *probe
	in probeInput
}

func (c *probeCall) Request() engine.PermissionRequest { return engine.PermissionRequest{} }
func (c *probeCall) Run(ctx context.Context, _ *RunContext) (string, error) {
	return c.p.run(ctx, c.in)
}

func calls(specs ...string) []ToolCall {
	var out []ToolCall
	for i, s := range specs {
		out = append(out, ToolCall{ID: fmt.Sprintf("c%d", i), Name: s, Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	return out
}

// TestParallelBatchesRunConcurrently proves that a run of read-only calls
// runs at once: each waits on a barrier that only opens when all of them
// have arrived, which cannot happen serially.
func TestParallelBatchesRunConcurrently(t *testing.T) {
	t.Parallel()
	const n = 4
	var arrived sync.WaitGroup
	arrived.Add(n)
	barrier := make(chan struct{})
	go func() { arrived.Wait(); close(barrier) }()
	ro := &probe{name: "ro", parallel: true, run: func(ctx context.Context, in probeInput) (string, error) {
		arrived.Done()
		select {
		case <-barrier:
			return fmt.Sprintf("ro %d", in.N), nil
		case <-time.After(5 * time.Second):
			return "", fmt.Errorf("barrier never opened: calls did not run in parallel")
		}
	}}
	f := newFixture(t, ro)
	res := f.ex.Execute(context.Background(), f.perm, f.rec, calls("ro", "ro", "ro", "ro"))
	for i, r := range res {
		if r.IsError || r.Output != fmt.Sprintf("ro %d", i) || r.ID != fmt.Sprintf("c%d", i) {
			t.Errorf("result %d = %+v", i, r)
		}
	}
}

// TestSerialCallsNeverOverlap mixes serial and parallel calls and checks
// that a serial call never overlaps any other call, and results come back
// in call order.
func TestSerialCallsNeverOverlap(t *testing.T) {
	t.Parallel()
	var active, maxSerialOverlap atomic.Int32
	var mu sync.Mutex
	var order []string
	mk := func(name string, parallel bool) *probe {
		return &probe{name: name, parallel: parallel, run: func(ctx context.Context, in probeInput) (string, error) {
			now := active.Add(1)
			defer active.Add(-1)
			if !parallel && now > 1 {
				maxSerialOverlap.Store(now)
			}
			mu.Lock()
			order = append(order, fmt.Sprintf("%s%d", name, in.N))
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			if !parallel && active.Load() > 1 {
				maxSerialOverlap.Store(active.Load())
			}
			return fmt.Sprintf("%s %d", name, in.N), nil
		}}
	}
	f := newFixture(t, mk("w", false), mk("r", true))
	res := f.ex.Execute(context.Background(), f.perm, f.rec, calls("r", "r", "w", "w", "r", "r", "r", "w"))
	if v := maxSerialOverlap.Load(); v != 0 {
		t.Fatalf("a serial call overlapped another (%d active)", v)
	}
	for i, r := range res {
		want := []string{"r", "r", "w", "w", "r", "r", "r", "w"}[i]
		if r.Output != fmt.Sprintf("%s %d", want, i) {
			t.Errorf("result %d = %q", i, r.Output)
		}
	}
	// Serial calls start only after the batch before them, in order.
	mu.Lock()
	defer mu.Unlock()
	pos := map[string]int{}
	for i, o := range order {
		pos[o] = i
	}
	inOrder := pos["w2"] > pos["r0"] && pos["w2"] > pos["r1"] && pos["w3"] > pos["w2"] && pos["r4"] > pos["w3"] &&
		pos["w7"] > pos["r4"] && pos["w7"] > pos["r5"] && pos["w7"] > pos["r6"]
	if !inOrder {
		t.Errorf("order %v", order)
	}
}

func TestAtMostOncePerID(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	once := &probe{name: "once", run: func(context.Context, probeInput) (string, error) {
		n := runs.Add(1)
		return fmt.Sprintf("run %d", n), nil
	}}
	f := newFixture(t, once)
	in := json.RawMessage(`{"n":1}`)
	res := f.ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{{ID: "same", Name: "once", Input: in}, {ID: "same", Name: "once", Input: in}})
	res2 := f.ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{{ID: "same", Name: "once", Input: in}})
	if runs.Load() != 1 {
		t.Fatalf("ran %d times", runs.Load())
	}
	if res[0].Output != "run 1" || res[1] != res[0] || res2[0] != res[0] {
		t.Fatalf("results %+v %+v", res, res2)
	}
	if n := len(f.rec.ofType(engine.EventToolCallStarted)); n != 1 {
		t.Errorf("%d started events", n)
	}
	// The same for a real side effect: bash appends once.
	f.callID(t, "append", "bash", map[string]any{"command": "echo x >> log"})
	f.callID(t, "append", "bash", map[string]any{"command": "echo x >> log"})
	if b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), "log")); string(b) != "x\n" {
		t.Fatalf("log = %q", b)
	}
}

func TestArtifactAndEmptyMarker(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789", 1000)
	p := &probe{name: "big", max: 5000, run: func(_ context.Context, in probeInput) (string, error) {
		if in.N == 0 {
			return "", nil
		}
		return big, nil
	}}
	f := newFixture(t, p)
	res := f.ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{
		{ID: "e", Name: "big", Input: json.RawMessage(`{"n":0}`)},
		{ID: "b", Name: "big", Input: json.RawMessage(`{"n":1}`)},
	})
	if res[0].Output != EmptyMarker || res[0].IsError {
		t.Errorf("empty result = %+v", res[0])
	}
	r := res[1]
	if r.ArtifactRef != "artifact:sess1/b" || !strings.Contains(r.Output, r.ArtifactRef) || len(r.Output) > 5000 ||
		!strings.HasPrefix(r.Output, big[:1000]) {
		t.Fatalf("big result = %q (%d bytes), ref %q", r.Output[:50], len(r.Output), r.ArtifactRef)
	}
	if string(f.arts.got["artifact:sess1/b"]) != big {
		t.Fatal("artifact does not hold the full output")
	}
	fin := f.rec.ofType(engine.EventToolCallFinished)
	if len(fin) != 2 || fin[1].Output != r.Output || fin[0].Output != EmptyMarker {
		t.Errorf("finished events carry %+v", fin)
	}
}

func TestDenialAndInvalidCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.perm.answer = func(r engine.PermissionRequest) engine.Answer {
		return engine.Answer{Decision: engine.DecisionDeny, Stage: "rules", Rule: "Bash(rm:*)", Reason: "denied by rule",
			Feedback: "use git clean instead"}
	}
	r := f.call(t, "bash", map[string]any{"command": "touch made"})
	if !r.IsError || !strings.Contains(r.Output, "denied by rule") || !strings.Contains(r.Output, "use git clean instead") ||
		!strings.Contains(r.Output, "Bash(rm:*)") {
		t.Fatalf("denial = %q", r.Output)
	}
	if _, err := os.Stat(filepath.Join(f.ws.Dir(), "made")); err == nil {
		t.Fatal("denied command ran")
	}
	r = f.call(t, "write_file", map[string]any{"path": "w.txt", "content": "x"})
	if !r.IsError || len(f.snaps.all()) != 0 {
		t.Fatal("denied write ran")
	}
	before := len(f.perm.requests())
	for _, c := range []ToolCall{
		{ID: "u", Name: "no_such_tool", Input: json.RawMessage(`{}`)},
		{ID: "j", Name: "bash", Input: json.RawMessage(`{"command":`)},
		{ID: "k", Name: "bash", Input: json.RawMessage(`{"command":"touch made","cwd":"/"}`)},
		{ID: "d", Name: "bash", Input: json.RawMessage(`{"command":"true","command":"touch made"}`)},
	} {
		res := f.ex.Execute(context.Background(), f.perm, f.rec, []ToolCall{c})
		if !res[0].IsError || !strings.Contains(res[0].Output, "not executed") {
			t.Errorf("%s: %+v", c.ID, res[0])
		}
	}
	if len(f.perm.requests()) != before {
		t.Error("the gate was asked about an invalid call")
	}
	// Events stay valid JSON even for invalid input.
	for _, e := range f.rec.ofType(engine.EventToolCallStarted) {
		if !json.Valid(e.Input) {
			t.Errorf("invalid event input %s", e.Input)
		}
	}
}

func TestUpdatedInputIsRechecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.perm.answer = func(r engine.PermissionRequest) engine.Answer {
		if r.Command == "echo original > out" {
			return engine.Answer{Decision: engine.DecisionAllow, UpdatedInput: json.RawMessage(`{"command":"echo edited > out"}`)}
		}
		if r.Command == "echo edited > out" {
			return engine.Answer{Decision: engine.DecisionAllow}
		}
		return engine.Answer{Decision: engine.DecisionDeny, Reason: "unexpected"}
	}
	r := f.call(t, "bash", map[string]any{"command": "echo original > out"})
	if r.IsError {
		t.Fatal(r.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), "out")); string(b) != "edited\n" {
		t.Fatalf("out = %q", b)
	}
	if n := len(f.perm.requests()); n != 2 {
		t.Fatalf("%d requests, want the edited input checked too", n)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := f.ex.Execute(ctx, f.perm, f.rec, calls("bash", "read_file"))
	for _, r := range res {
		if r.Output != engine.InterruptedNotRerun || !r.IsError {
			t.Errorf("%+v", r)
		}
	}
	if len(f.perm.requests()) != 0 {
		t.Error("asked after cancel")
	}
}

func TestPanickingToolBecomesError(t *testing.T) {
	t.Parallel()
	boom := &probe{name: "boom", run: func(context.Context, probeInput) (string, error) { panic("kaboom") }}
	f := newFixture(t, boom)
	r := f.call(t, "boom", map[string]any{"n": 1})
	if !r.IsError || !strings.Contains(r.Output, "kaboom") {
		t.Fatalf("got %+v", r)
	}
	if fin := f.rec.ofType(engine.EventToolCallFinished); len(fin) != 1 || !fin[0].IsError {
		t.Fatalf("finished = %+v", fin)
	}
}

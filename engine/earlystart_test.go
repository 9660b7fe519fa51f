package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// readyRuntime notes its start, waits for Ready, notes it, and asks for
// one write.
type readyRuntime struct {
	cp  *enginetest.HeldCheckpointer
	ran chan struct{}
	// skipReady asks for the write without waiting for Ready, as a CLI
	// whose tool call came before its prompt would.
	skipReady bool
	// record calls Record and waits for the recording to begin before
	// Ready, as a CLI runtime does around its handshake.
	record bool
}

func (*readyRuntime) Name() string { return "steps" }
func (*readyRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *readyRuntime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	r.cp.Note("run")
	close(r.ran)
	if r.record {
		t.Record()
		select {
		case <-r.cp.Started():
			r.cp.Note("handshake")
		case <-time.After(3 * time.Second):
			return engine.Result{Status: engine.StatusError}, errors.New("Record did not start the recording")
		}
	}
	if !r.skipReady {
		if err := t.Ready(ctx); err != nil {
			return engine.Result{Status: engine.StatusInterrupted}, err
		}
		r.cp.Note("ready")
	}
	if a := t.RequestPermission(ctx, engine.PermissionRequest{ToolCallID: "w1", Tool: "Write", Write: true, Paths: []string{"f.txt"}}); !a.Allowed() {
		return engine.Result{Status: engine.StatusError}, errors.New("the write was denied: " + a.Reason)
	}
	return engine.Result{Output: "ok"}, nil
}

// earlyRuntime is readyRuntime starting early.
type earlyRuntime struct{ readyRuntime }

func (*earlyRuntime) StartsEarly() {}

// An EarlyStarter runs before the turn's starting state is recorded (it
// starts its process first); its Ready starts the recording, and Ready,
// and so the prompt and every tool call, waits for it.
func TestEarlyStarterRunsWhileTheStateIsRecorded(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	rt := &earlyRuntime{readyRuntime{cp: cp, ran: make(chan struct{})}}
	s, _ := newSession(t, engine.Config{Gate: allowAll{}, Checkpoints: cp, Runtime: "steps", Runtimes: []engine.RuntimeEntry{entry(rt)}})
	type out struct {
		final engine.Event
		err   error
	}
	done := make(chan out, 1)
	go func() {
		final, err := s.RunTurn(context.Background(), "go")
		done <- out{final, err}
	}()
	<-cp.Started()
	<-rt.ran
	if got := cp.Steps(); slices.Contains(got, "ready") || slices.Contains(got, "recorded") {
		t.Fatalf("steps %v before the state was recorded", got)
	}
	cp.Release()
	o := <-done
	if o.err != nil || o.final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v, %v", o.final, o.err)
	}
	if got := cp.Steps(); !slices.Equal(got, []string{"run", "refresh", "recorded", "ready", "before w1"}) {
		t.Errorf("steps %v: want the runtime started, the state recorded, then ready, then the write's checkpoint", got)
	}
}

// Any other runtime starts only once the state is recorded, as before.
func TestOtherRuntimesStartOnceTheStateIsRecorded(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	rt := &readyRuntime{cp: cp, ran: make(chan struct{})}
	s, _ := newSession(t, engine.Config{Gate: allowAll{}, Checkpoints: cp, Runtime: "steps", Runtimes: []engine.RuntimeEntry{entry(rt)}})
	go func() {
		<-cp.Started()
		// A runtime started too soon has time to show it.
		time.Sleep(50 * time.Millisecond)
		cp.Release()
	}()
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil || final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v, %v", final, err)
	}
	if got := cp.Steps(); !slices.Equal(got, []string{"refresh", "recorded", "run", "ready", "before w1"}) {
		t.Errorf("steps %v", got)
	}
}

// An interrupt while an EarlyStarter waits for the state ends the turn as
// interrupted, with no call decided and nothing left running.
func TestInterruptWhileTheStateIsRecorded(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	rt := &earlyRuntime{readyRuntime{cp: cp, ran: make(chan struct{})}}
	s, _ := newSession(t, engine.Config{Gate: allowAll{}, Checkpoints: cp, Runtime: "steps", Runtimes: []engine.RuntimeEntry{entry(rt)}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-rt.ran
		cancel()
	}()
	final, _ := s.RunTurn(ctx, "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("final %+v, want interrupted", final)
	}
	if got := cp.Steps(); slices.Contains(got, "ready") || slices.Contains(got, "before w1") {
		t.Errorf("steps %v after an interrupt before the state was recorded", got)
	}
}

// The gate decides no call before the state is recorded, even one that
// comes before the runtime waited for Ready: the call's checkpoint must
// have the state to go back to.
func TestNoCallIsDecidedBeforeTheStateIsRecorded(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	rt := &earlyRuntime{readyRuntime{cp: cp, ran: make(chan struct{}), skipReady: true}}
	s, j := newSession(t, engine.Config{Gate: allowAll{}, Checkpoints: cp, Runtime: "steps", Runtimes: []engine.RuntimeEntry{entry(rt)}})
	go func() {
		<-rt.ran
		// A call decided too soon has time to show it.
		time.Sleep(50 * time.Millisecond)
		cp.Release()
	}()
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil || final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v, %v", final, err)
	}
	got := cp.Steps()
	if i, k := slices.Index(got, "recorded"), slices.Index(got, "before w1"); i < 0 || k < i {
		t.Errorf("steps %v: the write was checkpointed before the state was recorded", got)
	}
	for _, ev := range j.all() {
		if ev.Type == engine.EventPermissionDecided && ev.Decision != engine.DecisionAllow {
			t.Errorf("decision %+v", ev)
		}
	}
}

// Record starts the recording without waiting for it: a CLI runtime's
// handshake runs while the state is recorded, and Ready then waits for
// what is left of it.
func TestRecordStartsTheRecordingWithoutWaiting(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	rt := &earlyRuntime{readyRuntime{cp: cp, ran: make(chan struct{}), record: true}}
	s, _ := newSession(t, engine.Config{Gate: allowAll{}, Checkpoints: cp, Runtime: "steps", Runtimes: []engine.RuntimeEntry{entry(rt)}})
	go func() {
		<-cp.Started()
		time.Sleep(20 * time.Millisecond)
		cp.Release()
	}()
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil || final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v, %v", final, err)
	}
	if got := cp.Steps(); !slices.Equal(got, []string{"run", "refresh", "handshake", "recorded", "ready", "before w1"}) {
		t.Errorf("steps %v", got)
	}
}

// spawningRuntime is an EarlyStarter that spawns a subagent at once, as a
// model whose first answer is a task call would, without waiting for
// Ready (kz's own loop does not: its calls pass the gate).
type spawningRuntime struct {
	cp  *enginetest.HeldCheckpointer
	ran chan struct{}
}

func (*spawningRuntime) Name() string { return "spawner" }
func (*spawningRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (*spawningRuntime) StartsEarly() {}
func (r *spawningRuntime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	t.Record()
	close(r.ran)
	res, err := t.SpawnChild(ctx, engine.ChildRequest{ToolCallID: "task1", Prompt: "write it", Runtime: "child"})
	if err != nil {
		return engine.Result{Status: engine.StatusError}, err
	}
	return engine.Result{Output: res.Output}, nil
}

// childRuntime notes that it ran: a child's changes are found by its
// parent's turn-end scan, so it must not run before the parent's
// starting state is recorded.
type childRuntime struct{ cp *enginetest.HeldCheckpointer }

func (*childRuntime) Name() string { return "child" }
func (*childRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *childRuntime) Run(context.Context, *engine.Turn) (engine.Result, error) {
	r.cp.Note("child")
	return engine.Result{Output: "written"}, nil
}

// A subagent an EarlyStarter spawns before the turn's starting state is
// recorded waits for it: its writes are the turn's, and the turn's undo
// goes back to that state.
func TestSubagentStartsOnceTheStateIsRecorded(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	rt := &spawningRuntime{cp: cp, ran: make(chan struct{})}
	s, _ := newSession(t, engine.Config{Gate: allowAll{}, Checkpoints: cp, Runtime: "spawner",
		Runtimes: []engine.RuntimeEntry{entry(rt), entry(&childRuntime{cp: cp})}})
	go func() {
		<-rt.ran
		// A child started too soon has time to show it.
		time.Sleep(50 * time.Millisecond)
		cp.Release()
	}()
	final, err := s.RunTurn(context.Background(), "delegate")
	if err != nil || final.Status != string(engine.StatusComplete) || final.Output != "written" {
		t.Fatalf("final %+v, %v", final, err)
	}
	if got := cp.Steps(); !slices.Equal(got, []string{"refresh", "recorded", "child"}) {
		t.Errorf("steps %v: want the state recorded before the child ran", got)
	}
}

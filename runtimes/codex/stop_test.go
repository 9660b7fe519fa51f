package codex

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// pendingPids returns the process ids of the CLIs still being stopped.
func pendingPids(rt *Runtime) []int {
	rt.stops.mu.Lock()
	defer rt.stops.mu.Unlock()
	var out []int
	for p := range rt.stops.pending {
		out = append(out, p.c.Pid())
	}
	return out
}

// A completed turn's result does not wait for the CLI to shut down: with
// a CLI that ignores the end of its stdin (it would keep a synchronous
// stop waiting the whole kill grace), the final result is there at once,
// the process still stopping; Close then waits for it, bounded by the
// grace, and no process or goroutine is left.
func TestTurnEndsBeforeShutdown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newFake(t, append(handshake("go"),
		clitest.CLI(`{"method":"item/completed","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"agentMessage","id":"m1","text":"hi"}}}`),
		clitest.CLI(turnDone), clitest.Op("hang")))
	const grace = 3 * time.Second
	f.rt.cfg.KillGrace = grace
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	start := time.Now()
	final := h.Run(t, context.Background(), "go")
	took := time.Since(start)
	if final.Status != string(engine.StatusComplete) || final.Output != "hi" {
		t.Fatalf("final %+v", final)
	}
	if took >= grace {
		t.Errorf("the turn took %v: it waited for the CLI's shutdown (grace %v)", took, grace)
	}
	pids := pendingPids(f.rt)
	if len(pids) != 1 || clitest.ProcessGone(pids[0]) {
		t.Fatalf("the CLI is not being stopped in the background: %v", pids)
	}
	h.Stop()
	closeStart := time.Now()
	if err := f.rt.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(closeStart); d > grace+2*time.Second {
		t.Errorf("Close took %v, more than the grace %v allows", d, grace)
	}
	clitest.CheckGone(t, 0, "Close", pids...)
	if n := len(pendingPids(f.rt)); n != 0 {
		t.Errorf("%d stops still pending after Close", n)
	}
}

// A turn that resumes a thread waits until the previous process of that
// thread is gone, so that two processes never write one thread at once;
// the first turn still ended without waiting.
func TestResumeWaitsForPreviousStop(t *testing.T) {
	first := append(handshake("go"), clitest.CLI(turnDone), clitest.Op("hang"))
	second := []clitest.Line{
		clitest.Host(`{"method":"initialize","params":{"capabilities":{"experimentalApi":true}}}`),
		clitest.CLI(`{"id":1,"result":{"userAgent":"kz/0.169.0 (x)"}}`),
		clitest.Host(`{"method":"initialized"}`),
		clitest.Host(`{"method":"thread/resume","params":{"threadId":"th-1"}}`),
		clitest.CLI(`{"id":2,"result":{"thread":{"id":"th-1","model":"m"}}}`),
		clitest.Host(`{"method":"turn/start","params":{"threadId":"th-1"}}`),
		clitest.CLI(`{"id":3,"result":{"turn":{"id":"tu-1","status":"inProgress"}}}`),
		clitest.CLI(turnDone),
	}
	f := newFake(t, first, second)
	f.rt.cfg.KillGrace = time.Second
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "go"); final.Status != string(engine.StatusComplete) || final.NativeID != "th-1" {
		t.Fatalf("first turn %+v", final)
	}
	pids := pendingPids(f.rt)
	if len(pids) != 1 {
		t.Fatalf("first CLI not stopping in the background: %v", pids)
	}
	if final := h.Run(t, ctx, "again"); final.Status != string(engine.StatusComplete) || final.NativeID != "th-1" {
		t.Fatalf("second turn %+v", final)
	}
	// The second process was started after the first was gone: it is
	// no longer among the stops, and it does not run.
	clitest.CheckGone(t, 0, "the resumed turn's start", pids...)
}

// A resume that waits for the previous stop still ends with its context.
func TestResumeWaitEndsWithContext(t *testing.T) {
	f := newFake(t, append(handshake("go"), clitest.CLI(turnDone), clitest.Op("hang")))
	f.rt.cfg.KillGrace = 5 * time.Second
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	if final := h.Run(t, context.Background(), "go"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("first turn %+v", final)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := f.rt.Run(ctx, &engine.Turn{Prompt: "again", NativeID: "th-1", Workspace: f.WS})
	if res.Status != engine.StatusInterrupted || err == nil {
		t.Errorf("status %q, err %v; want interrupted", res.Status, err)
	}
}

package claudecode

import (
	"context"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// The person's second esc on a CLI that does not stop at the first (it
// ignores both the interrupt request and SIGINT): the CLI and its tool's
// child are killed at once, not after the kill grace.
func TestSecondInterruptKillsTheCLIAtOnce(t *testing.T) {
	in := `{"command":"sleep 60"}`
	f := newFake(t, []clitest.Line{
		clitest.Op("ignore_sigint"),
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-2"}`),
		clitest.Op("child"),
		clitest.CLI(`{"type":"assistant","message":{"id":"m","model":"m","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":` + in + `}]},"parent_tool_use_id":null}`),
		clitest.Host(`{"type":"control_request","request":{"subtype":"interrupt"}}`),
		clitest.Op("hang"),
	})
	// A grace the test would notice: the hard kill must not wait for it.
	f.rt.cfg.KillGrace = 30 * time.Second
	hardAt := make(chan time.Time, 1)
	h := newHarness(t, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventCommandStarted {
			h.Session.Interrupt(false)
			go func() {
				// The CLI got the interrupt request and goes on.
				time.Sleep(300 * time.Millisecond)
				hardAt <- time.Now()
				h.Session.Interrupt(true)
			}()
		}
	}})
	final := h.Run(t, context.Background(), "go")
	took := time.Since(<-hardAt)
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q, want interrupted", final.Status)
	}
	if took > 3*time.Second {
		t.Errorf("the second interrupt took %s (grace %s)", took, f.rt.cfg.KillGrace)
	}
	if fin := h.Journal.OfType(engine.EventToolCallFinished); len(fin) != 1 || fin[0].Status != engine.ToolStatusInterrupted {
		t.Errorf("tool call %+v", fin)
	}
	if n := f.CheckReport(); n != 2 {
		t.Errorf("fake checked %d host lines, want 2 (prompt, interrupt)", n)
	}
	clitest.CheckGone(t, 3*time.Second, "the second interrupt", f.ChildPid())
}

package acp

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// An agent killed between turns while a background child of its still
// holds its output (so kz has not reaped it when the next turn starts) is
// replaced by that turn: the new agent loads the same session and the
// prompt goes on in it, without a crash and without priming.
func TestAgentKilledBetweenTurnsIsReplaced(t *testing.T) {
	first := append([]clitest.Line{clitest.Op("orphan")}, handshake("one")...)
	first = append(first,
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"first answer"}}`),
		clitest.CLI(promptDone))
	second := []clitest.Line{
		clitest.Host(`{"method":"initialize"}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`),
		clitest.Host(`{"method":"authenticate"}`), clitest.CLI(`{"jsonrpc":"2.0","id":2,"result":{}}`),
		clitest.Host(`{"method":"session/load","params":{"sessionId":"s-1","mcpServers":[]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"result":{}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"two"}]}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"second answer"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`),
	}
	f := newFake(t, first, second)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	id := h.Session.ID()
	if final := h.Run(t, context.Background(), "one"); final.Status != string(engine.StatusComplete) || final.NativeID != "s-1" {
		t.Fatalf("first turn %+v", final)
	}
	a := f.rt.slots[id].a
	pid := a.c.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !proc.Exited(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the killed agent still runs")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if a.c.Exited() {
		t.Fatal("the killed agent was reaped before the next turn: the test tests nothing")
	}
	final := h.Run(t, context.Background(), "two")
	if final.Status != string(engine.StatusComplete) || final.Output != "second answer" || final.NativeID != "s-1" {
		t.Fatalf("the turn after the kill: %s %q %s (native %q)", final.Status, final.Output, final.Text, final.NativeID)
	}
	if now := f.rt.PID(id); now == 0 || now == pid {
		t.Errorf("the turn ran on pid %d, the killed agent was %d", now, pid)
	}
	clitest.CheckGone(t, 3*time.Second, "the killed agent's replacement", f.ChildPid())
	if n := f.CheckReport(); n != 8 {
		t.Errorf("fake checked %d host lines, want 8 (two handshakes, a load, two prompts)", n)
	}
}

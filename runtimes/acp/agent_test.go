package acp

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// waitNoAgent waits until the session's agent process is gone.
func waitNoAgent(t *testing.T, rt *Runtime, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for rt.PID(id) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the agent process did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One agent process serves the turns of a kz session: a turn the person
// interrupts (esc: session/cancel, the prompt ends "cancelled") keeps it,
// and the next turns prompt the same session without an initialize, a
// session/new or the transcript again.
func TestOneProcessAcrossTurns(t *testing.T) {
	lines := append(handshake("one"),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"run_shell_command__1","status":"in_progress","title":"sleep 30","kind":"execute"}`),
		clitest.Host(`{"method":"session/cancel","params":{"sessionId":"s-1"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"cancelled"}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"two"}]}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"second"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"three"}]}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"third"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":6,"result":{"stopReason":"end_turn"}}`),
		// A late update between turns belongs to no turn.
		clitest.Line{Dir: "fake", Op: "sleep", MS: 30},
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"STALE"}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"four"}]}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"fourth"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`))
	f := newFake(t, lines)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventCommandStarted {
			h.Session.Interrupt(false)
		}
	}})
	id := h.Session.ID()
	if final := h.Run(t, context.Background(), "one"); final.Status != string(engine.StatusInterrupted) {
		t.Fatalf("first turn %+v", final)
	}
	pid := f.rt.PID(id)
	if pid == 0 {
		t.Fatal("the interrupted turn did not keep its agent")
	}
	for i, want := range []string{"second", "third", "fourth"} {
		prompt := []string{"two", "three", "four"}[i]
		final := h.Run(t, context.Background(), prompt)
		if final.Status != string(engine.StatusComplete) || final.Output != want || final.NativeID != "s-1" {
			t.Fatalf("turn %q: %+v", prompt, final)
		}
		if got := f.rt.PID(id); got != pid {
			t.Fatalf("turn %q ran on process %d, not %d", prompt, got, pid)
		}
		if want == "third" {
			// Let the late update arrive before the next turn.
			time.Sleep(100 * time.Millisecond)
		}
	}
	if n := f.CheckReport(); n != 8 {
		t.Errorf("fake checked %d host lines, want 8 (one handshake, four prompts, one cancel)", n)
	}
	for _, ev := range h.Journal.Events() {
		if strings.Contains(ev.Text, "STALE") {
			t.Errorf("an update sent between turns was taken for a turn's: %+v", ev)
		}
	}
	if err := f.rt.Close(); err != nil {
		t.Fatal(err)
	}
	if !clitest.ProcessGone(pid) {
		t.Errorf("the agent %d outlived the runtime's Close", pid)
	}
}

// An agent that dies between turns is restarted by the next turn, which
// loads the agent's session; when the load fails (as Gemini CLI 0.61's
// does within the minute of the last turn) a new session is primed with
// kz's transcript, so nothing is lost.
func TestDeadAgentRestartsAndPrimes(t *testing.T) {
	first := append(handshake("one"),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"first answer"}}`),
		clitest.CLI(promptDone),
		clitest.Line{Dir: "fake", Op: "exit", Code: 1, Stderr: "crashed between turns"})
	second := []clitest.Line{
		clitest.Host(`{"method":"initialize"}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`),
		clitest.Host(`{"method":"authenticate"}`), clitest.CLI(`{"jsonrpc":"2.0","id":2,"result":{}}`),
		clitest.Host(`{"method":"session/load","params":{"sessionId":"s-1","mcpServers":[]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Invalid session identifier"}}`),
		clitest.Host(`{"method":"session/new"}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s-2"}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-2","prompt":[{"type":"text","text":"~<kz-conversation>\n[user] one\n[assistant gemini] first answer\n</kz-conversation>\n\ntwo"}]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"second answer"}}}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}`),
	}
	f := newFake(t, first, second)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	id := h.Session.ID()
	if final := h.Run(t, context.Background(), "one"); final.Status != string(engine.StatusComplete) || final.NativeID != "s-1" {
		t.Fatalf("first turn %+v", final)
	}
	waitNoAgent(t, f.rt, id)
	final := h.Run(t, context.Background(), "two")
	if final.Status != string(engine.StatusComplete) || final.Output != "second answer" || final.NativeID != "s-2" {
		t.Fatalf("second turn %+v", final)
	}
	if f.rt.PID(id) == 0 {
		t.Error("the restarted agent was not kept")
	}
	if n := f.CheckReport(); n != 9 {
		t.Errorf("fake checked %d host lines, want 9 (two handshakes, a failed load, two prompts)", n)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 0 {
		t.Errorf("errors %+v", e)
	}
}

// Closing a kz session's agent (the session closed, or switched to
// another runtime) ends its process; the runtime's other sessions and a
// later turn are unaffected.
func TestCloseSessionEndsItsAgent(t *testing.T) {
	// The second process offers no session/load, so it starts anew.
	second := handshake("~two")
	second[1] = clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false}}}`)
	f := newFake(t, append(handshake("one"), clitest.CLI(promptDone)), append(second, clitest.CLI(promptDone)))
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	id := h.Session.ID()
	h.Run(t, context.Background(), "one")
	pid := f.rt.PID(id)
	if pid == 0 {
		t.Fatal("no agent after the first turn")
	}
	f.rt.CloseSession(id)
	if f.rt.PID(id) != 0 || !clitest.ProcessGone(pid) {
		t.Fatalf("the agent %d outlived CloseSession", pid)
	}
	if final := h.Run(t, context.Background(), "two"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("the turn after CloseSession %+v", final)
	}
	if p := f.rt.PID(id); p == 0 || p == pid {
		t.Errorf("the turn after CloseSession ran on process %d (first %d)", p, pid)
	}
	if n := f.CheckReport(); n != 8 {
		t.Errorf("fake checked %d host lines, want 8", n)
	}
}

// The kept overlay home of a kz session is named by its id under
// HomesDir, is the person's alone, and is the same for each of the
// session's processes; an id that is not a plain name cannot leave
// HomesDir.
func TestSessionHomeKept(t *testing.T) {
	dir := t.TempDir()
	if got := homeDir(dir, "0123abcd-ef"); got != dir+"/0123abcd-ef" {
		t.Errorf("homeDir = %s", got)
	}
	for _, bad := range []string{"../x", "a/b", "", ".hidden", strings.Repeat("a", 200)} {
		if got := homeDir(dir, bad); !strings.HasPrefix(got, dir+"/x-") || strings.Contains(got[len(dir):], "..") {
			t.Errorf("homeDir(%q) = %s", bad, got)
		}
	}
	home := t.TempDir()
	env := []string{"HOME=" + home}
	root := homeDir(dir, "sess-1")
	o, err := openGeminiHome(env, 2, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What Gemini creates in the overlay stays there for the next process.
	if err := os.WriteFile(root+"/.gemini/installation_id", []byte("id"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := openGeminiHome(env, 2, root, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(root + "/.gemini/installation_id"); err != nil || string(b) != "id" {
		t.Errorf("the overlay lost what Gemini created: %q %v", b, err)
	}
	if fi, err := os.Stat(root); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("overlay home mode %v, %v", fi.Mode(), err)
	}
	if _, err := os.Stat(home + "/.gemini/installation_id"); err == nil {
		t.Error("a kept overlay moved an entry into the person's directory")
	}
}

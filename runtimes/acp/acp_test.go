package acp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/permission"
)

func single(f *fake) []engine.RuntimeEntry { return []engine.RuntimeEntry{{Runtime: f.rt}} }

const (
	sampleSession = "280ef341-b9f7-4bb9-9a07-dd2bc4be4380"
	sampleCmd     = "echo hello-from-fake > hello.txt && cat hello.txt"
	sampleAnswer  = "Done: fake model final answer (step 2)."
)

// The recorded allow session replays through kz: the handshake is the one
// the real agent accepted, both permissions go through the person (the
// command from the title, the edit with its path and diff) and are answered
// with the offered allow-once option, and updates map to events.
func TestReplayApprovalAllow(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "gemini-acp.approval-allow.jsonl"))
	perms := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: perms.Answer})
	final := h.Run(t, context.Background(), "do the task")
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6 (initialize, authenticate, session/new, prompt, 2 answers)", n)
	}
	if final.Status != string(engine.StatusComplete) || final.NativeID != sampleSession || final.Output != sampleAnswer {
		t.Fatalf("final %+v", final)
	}
	if final.Usage == nil || final.Usage.InputTokens != 300 || final.Usage.OutputTokens != 60 {
		t.Errorf("final usage %+v", final.Usage)
	}
	st := h.Journal.OfType(engine.EventSessionStarted)
	if len(st) != 1 || st[0].NativeID != sampleSession || st[0].Version != "0.61.0" || st[0].Model != "gemini-2.5-flash" {
		t.Errorf("session_started %+v", st)
	}
	ps := perms.Seen()
	if len(ps) != 2 {
		t.Fatalf("permission requests %+v", ps)
	}
	if ps[0].Command != sampleCmd || ps[0].Tool != "run_shell_command" {
		t.Errorf("shell permission %+v", ps[0])
	}
	want := filepath.Join(f.WS, "written_by_fake.txt")
	if !slices.Equal(ps[1].Paths, []string{want}) || ps[1].Tool != "write_file" ||
		!strings.Contains(ps[1].Diff, "--- /dev/null\n+++ b/written_by_fake.txt\n@@ -0,0 +1,2 @@\n+line one\n+line two\n") {
		t.Errorf("edit permission %+v", ps[1])
	}
	cs := h.Journal.OfType(engine.EventCommandStarted)
	cf := h.Journal.OfType(engine.EventCommandFinished)
	if len(cs) != 1 || cs[0].Command != sampleCmd || len(cf) != 1 || cf[0].IsError || cf[0].ExitCode != nil {
		t.Errorf("command events %+v %+v", cs, cf)
	}
	fe := h.Journal.OfType(engine.EventFileEdited)
	if len(fe) != 1 || fe[0].Path != "written_by_fake.txt" || !strings.Contains(fe[0].Diff, "+line two") {
		t.Errorf("file_edited %+v", fe)
	}
	msgs := h.Journal.OfType(engine.EventAssistantMessage)
	if len(msgs) != 1 || msgs[0].Text != sampleAnswer {
		t.Errorf("assistant messages %+v", msgs)
	}
}

// Denials pick the offered reject option; the agent sends no update for a
// rejected call, so kz closes both calls as errors itself.
func TestReplayApprovalDeny(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "gemini-acp.approval-deny.jsonl"))
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: func(engine.Event) engine.Answer {
		return engine.Answer{Decision: engine.DecisionDeny, Feedback: "not now"}
	}})
	final := h.Run(t, context.Background(), "do the task")
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6", n)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	tf := h.Journal.OfType(engine.EventToolCallFinished)
	if len(tf) != 2 || !tf[0].IsError || !tf[1].IsError || tf[0].Output != "denied by kz: not now" {
		t.Errorf("tool_call_finished %+v", tf)
	}
	if fe := h.Journal.OfType(engine.EventFileEdited); len(fe) != 0 {
		t.Errorf("file_edited for a rejected write: %+v", fe)
	}
}

func handshake(prompt string) []clitest.Line {
	return []clitest.Line{
		clitest.Host(`{"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":true}}}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"fake","version":"9.9.9"},"agentCapabilities":{"loadSession":true}}}`),
		clitest.Host(`{"method":"authenticate","params":{"methodId":"gemini-api-key"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":2,"result":{}}`),
		clitest.Host(`{"method":"session/new","params":{"mcpServers":[]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s-1","modes":{"availableModes":[{"id":"default"},{"id":"plan"}],"currentModeId":"default"}}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":` + clitest.JSONString(prompt) + `}]}}`),
	}
}

func upd(u string) clitest.Line {
	return clitest.CLI(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":` + u + `}}`)
}

const promptDone = `{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`

// A write the person allowed as an edit is served through kz's workspace
// without a second question; a write nobody allowed is asked and, denied,
// refused; a write outside the workspace is refused without asking.
func TestFileWritesThroughKz(t *testing.T) {
	lines := append(handshake("write"),
		clitest.CLI(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s-1","options":[{"optionId":"always","kind":"allow_always"},{"optionId":"once","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}],"toolCall":{"toolCallId":"write_file__1","status":"pending","title":"Writing to a.txt","kind":"edit","content":[{"type":"diff","path":"<workdir>/a.txt","oldText":"","newText":"hello\n"}],"locations":[{"path":"<workdir>/a.txt"}]}}}`),
		clitest.Host(`{"id":0,"result":{"outcome":{"outcome":"selected","optionId":"once"}}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/a.txt","content":"hello\n"}}`),
		clitest.Host(`{"id":1,"result":null}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"write_file__1","status":"completed","content":[{"type":"diff","path":"<workdir>/a.txt","oldText":"","newText":"hello\n"}]}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":2,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/b.txt","content":"sneaky\n"}}`),
		clitest.Host(`{"id":2,"error":{"code":-32001,"message":"~kz denied the write to b.txt"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"/etc/kz-test-outside","content":"x"}}`),
		clitest.Host(`{"id":3,"error":{"code":-32001}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"sessionId":"s-1","path":"<workdir>/a.txt"}}`),
		clitest.Host(`{"id":4,"result":{"content":"hello\n"}}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	perms := &clitest.Person{Reply: func(ev engine.Event) engine.Answer {
		if slices.Contains(ev.Paths, filepath.Join(f.WS, "b.txt")) {
			return engine.Answer{Decision: engine.DecisionDeny}
		}
		return engine.Answer{Decision: engine.DecisionAllow}
	}}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: perms.Answer})
	final := h.Run(t, context.Background(), "write")
	if n := f.CheckReport(); n != 9 {
		t.Errorf("fake checked %d host lines, want 9", n)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	if b, err := os.ReadFile(filepath.Join(f.WS, "a.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("a.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(f.WS, "b.txt")); err == nil {
		t.Error("a denied write reached the disk")
	}
	ps := perms.Seen()
	if len(ps) != 2 || ps[1].Tool != "write_text_file" || !strings.Contains(ps[1].Diff, "+sneaky") {
		t.Errorf("permission requests %+v", ps)
	}
	// The read passed kz's gate too (allowed without asking).
	reads := 0
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		if ev.Tool == "read_file" && ev.Decision == engine.DecisionAllow {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("%d gate decisions about the read, want 1", reads)
	}
	if fe := h.Journal.OfType(engine.EventFileEdited); len(fe) != 1 || fe[0].Path != "a.txt" || fe[0].ToolCallID != "write_file__1" {
		t.Errorf("file_edited %+v", fe)
	}
	// The write is undoable: kz saved what a.txt was (nothing) first.
	if sn := f.snaps.all(); len(sn) != 1 || sn[0].Path != "a.txt" || sn[0].Existed || sn[0].ToolCallID != "write_file__1" {
		t.Errorf("snapshots %+v", sn)
	}
}

// Without a snapshot store kz writes nothing for the agent: a write it
// could not undo is refused.
func TestFileWriteWithoutSnapshotsRefused(t *testing.T) {
	lines := append(handshake("write"),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/a.txt","content":"hello\n"}}`),
		clitest.Host(`{"id":1,"error":{"code":-32603,"message":"~no snapshot store"}}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	f.rt.cfg.Snapshots = nil
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: clitest.AllowOnce})
	h.Run(t, context.Background(), "write")
	f.CheckReport()
	if _, err := os.Stat(filepath.Join(f.WS, "a.txt")); err == nil {
		t.Error("a write kz could not undo reached the disk")
	}
}

// A write replacing a file snapshots the old content and is atomic: the
// file holds the old or the new content, never a mix, and a symlink out
// of the workspace is not followed.
func TestFileWriteSnapshotsOldContent(t *testing.T) {
	lines := append(handshake("write"),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/old.txt","content":"new\n"}}`),
		clitest.Host(`{"id":1,"result":null}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":2,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/link/x.txt","content":"escape\n"}}`),
		clitest.Host(`{"id":2,"error":{"code":-32001}}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	if err := os.WriteFile(filepath.Join(f.WS, "old.txt"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.WS, "link")); err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: clitest.AllowOnce})
	h.Run(t, context.Background(), "write")
	f.CheckReport()
	if b, _ := os.ReadFile(filepath.Join(f.WS, "old.txt")); string(b) != "new\n" {
		t.Errorf("old.txt = %q", b)
	}
	if sn := f.snaps.all(); len(sn) != 1 || sn[0].Path != "old.txt" || !sn[0].Existed || string(sn[0].Content) != "old\n" {
		t.Errorf("snapshots %+v", sn)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("a write followed a symlink out of the workspace")
	}
}

// Cancelling the turn sends session/cancel, and the agent and a child
// that left its process group (as Gemini's shells do) are killed.
func TestImmediateCancelKillsChildren(t *testing.T) {
	lines := append(handshake("go"), clitest.Op("child"),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"run_shell_command__1","status":"in_progress","title":"sleep 30","kind":"execute"}`),
		clitest.Host(`{"method":"session/cancel","params":{"sessionId":"s-1"}}`),
		clitest.Op("hang"))
	f := newFake(t, lines)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventCommandStarted {
			cancel()
		}
	}})
	final := h.Run(t, ctx, "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q", final.Status)
	}
	if n := f.CheckReport(); n != 5 {
		t.Errorf("fake checked %d host lines, want 5", n)
	}
	clitest.CheckGone(t, time.Second, "the interrupt", f.ChildPid())
}

// The graceful interrupt sends session/cancel and waits for the prompt to
// end "cancelled"; a permission asked meanwhile is answered cancelled.
func TestGracefulCancel(t *testing.T) {
	lines := append(handshake("go"),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"run_shell_command__1","status":"in_progress","title":"sleep 30","kind":"execute"}`),
		clitest.Host(`{"method":"session/cancel","params":{"sessionId":"s-1"}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"run_shell_command__1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"Command cancelled by user."}}]}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"cancelled"}}`))
	f := newFake(t, lines)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventCommandStarted {
			h.Session.Interrupt(false)
		}
	}})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q", final.Status)
	}
	if n := f.CheckReport(); n != 5 {
		t.Errorf("fake checked %d host lines, want 5", n)
	}
	if tf := h.Journal.OfType(engine.EventToolCallFinished); len(tf) != 1 || tf[0].Status != engine.ToolStatusInterrupted {
		t.Errorf("tool_call_finished %+v", tf)
	}
}

// Unknown update kinds, notifications, requests and non-JSON lines are
// skipped; the mode echo is not taken for model text; thoughts and plans
// are reasoning.
func TestUnknownSkippedAndKinds(t *testing.T) {
	k := clitest.Kinds(t, "gemini-acp.kinds.jsonl")
	lines := append(handshake("go"),
		clitest.CLI(string(k["session/update available_commands_update"])),
		upd(`{"sessionUpdate":"future_kind","x":1}`),
		clitest.CLI(`{"jsonrpc":"2.0","method":"future/notice","params":{}}`),
		clitest.Line{Dir: "fake", Op: "raw", Text: "garbage {"},
		clitest.CLI(`{"jsonrpc":"2.0","id":9,"method":"terminal/create","params":{"command":"ls"}}`),
		clitest.Host(`{"id":9,"error":{"code":-32601}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"[MODE_UPDATE] yolo"}}`),
		upd(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"thinking"}}`),
		upd(`{"sessionUpdate":"plan","entries":[{"content":"step one","status":"pending","priority":"high"}]}`),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"read_file__1","status":"in_progress","title":"a.txt","kind":"read","locations":[{"path":"<workdir>/a.txt"}]}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"read_file__1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"no such file"}}]}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	f.CheckReport()
	if final.Status != string(engine.StatusComplete) || final.Output != "ok" {
		t.Errorf("final %+v", final)
	}
	var text, reasoning string
	for _, ev := range h.Journal.Events() {
		switch ev.Type {
		case engine.EventTextDelta:
			text += ev.Text
		case engine.EventReasoningDelta:
			reasoning += ev.Text
		case engine.EventError:
			t.Errorf("unexpected %+v", ev)
		}
	}
	if text != "ok" || !strings.Contains(reasoning, "thinking") || !strings.Contains(reasoning, "[pending] step one") {
		t.Errorf("text %q reasoning %q", text, reasoning)
	}
	tf := h.Journal.OfType(engine.EventToolCallFinished)
	ts := h.Journal.OfType(engine.EventToolCallStarted)
	if len(ts) != 1 || ts[0].Tool != "read_file" || !slices.Equal(ts[0].Paths, []string{filepath.Join(f.WS, "a.txt")}) ||
		len(tf) != 1 || !tf[0].IsError || tf[0].Output != "no such file" {
		t.Errorf("tool events %+v %+v", ts, tf)
	}
}

// A crash mid-turn is retryable and fails over; its stderr is in the error.
func TestCrashFailsOver(t *testing.T) {
	f := newFake(t, append(handshake("go"), clitest.Op("child"), clitest.Line{Dir: "fake", Op: "exit", Code: 3, Stderr: "FATAL heap out of memory"}))
	backup := newFake(t, append(handshake("go"),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"from backup"}}`), clitest.CLI(promptDone)))
	backup.rt.cfg.Name = "backup"
	h := clitest.NewHarness(t, f.WS, []engine.RuntimeEntry{{Runtime: f.rt}, {Runtime: backup.rt}},
		clitest.Options{Failover: []engine.ChainLink{{Runtime: "backup"}}})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusComplete) || final.Output != "from backup" || final.Runtime != "backup" {
		t.Errorf("final %+v", final)
	}
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed || !strings.Contains(errs[0].Text, "heap out of memory") {
		t.Errorf("errors %+v", errs)
	}
	// kz kills the crashed CLI's process group; the grandchild, which kz
	// cannot reap, takes a moment to die after its SIGKILL (longer on a
	// loaded machine), so it gets as long as after an interrupt.
	clitest.CheckGone(t, time.Second, "the crash", f.ChildPid())
}

// Without failover a crash mid-turn ends the turn interrupted, with the
// crash as a retryable error event and the partial message kept, however
// the reader's two signals (the failed prompt, the closed stream) race.
func TestCrashWithoutFailoverEndsInterrupted(t *testing.T) {
	for i := range 5 {
		f := newFake(t, append(handshake("go"),
			upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"half an ans"}}`),
			clitest.Line{Dir: "fake", Op: "exit", Code: 137, Stderr: "Killed"}))
		h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
		final := h.Run(t, context.Background(), "go")
		errs := h.Journal.OfType(engine.EventError)
		if final.Status != string(engine.StatusInterrupted) || len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed || !errs[0].Retryable {
			t.Fatalf("run %d: final %q errors %+v", i, final.Status, errs)
		}
		if am := h.Journal.OfType(engine.EventAssistantMessage); len(am) != 1 || am[0].Text != "half an ans" || !am[0].Partial {
			t.Errorf("run %d: assistant messages %+v", i, am)
		}
	}
}

// Authentication and provider failures are classified so that failover
// knows what to do.
func TestErrorsClassified(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"method":"initialize"}`), clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`),
		clitest.Host(`{"method":"authenticate"}`), clitest.CLI(`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`),
	})
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	h.Run(t, context.Background(), "go")
	f.CheckReport()
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrAuth {
		t.Errorf("auth errors %+v", e)
	}

	g := newFake(t, append(handshake("go"),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error","data":{"details":"[API Error: 429 Resource exhausted: quota]"}}}`)))
	h2 := clitest.NewHarness(t, g.WS, single(g), clitest.Options{})
	final := h2.Run(t, context.Background(), "go")
	g.CheckReport()
	if e := h2.Journal.OfType(engine.EventError); final.Status != string(engine.StatusError) || len(e) != 1 || e[0].ErrorKind != engine.ErrRateLimit {
		t.Errorf("prompt errors %+v", e)
	}
}

func TestMissingBinary(t *testing.T) {
	cfg := GeminiPreset()
	cfg.Command = "/nonexistent/gemini-kz-test"
	cfg.Workspace = t.TempDir()
	rt := New(cfg)
	if _, err := rt.Available(); engine.KindOf(err) != engine.ErrRuntimeMissing {
		t.Errorf("Available: %v", err)
	}
	h := clitest.NewHarness(t, cfg.Workspace, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if e := h.Journal.OfType(engine.EventError); final.Status != string(engine.StatusError) || len(e) != 1 || e[0].ErrorKind != engine.ErrRuntimeMissing {
		t.Errorf("status %q errors %+v", final.Status, e)
	}
}

// A stored session is loaded (its replayed history is not re-emitted); a
// failed load falls back to a new session primed with kz's transcript.
func TestLoadAndPriming(t *testing.T) {
	start := []clitest.Line{
		clitest.Host(`{"method":"initialize"}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`),
		clitest.Host(`{"method":"authenticate"}`), clitest.CLI(`{"jsonrpc":"2.0","id":2,"result":{}}`),
		clitest.Host(`{"method":"session/load","params":{"sessionId":"old-s","mcpServers":[]}}`),
	}
	f := newFake(t, append(append([]clitest.Line(nil), start...),
		clitest.CLI(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old-s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"OLD REPLAY"}}}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"result":{}}`),
		// Like Gemini CLI 0.61: more of the replay after the result.
		clitest.CLI(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old-s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"OLD REPLAY LATE"}}}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"old-s","prompt":[{"type":"text","text":"again"}]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old-s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"new"}}}}`),
		clitest.CLI(promptDone)))
	prior := &engine.Prior{LastTurn: 1, LastRuntime: "gemini", Natives: map[string]engine.NativeRef{"gemini": {ID: "old-s", TurnID: 1}},
		Transcript: []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "hi"}}}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Prior: prior})
	final := h.Run(t, context.Background(), "again")
	if n := f.CheckReport(); n != 4 {
		t.Errorf("fake checked %d host lines, want 4", n)
	}
	if final.NativeID != "old-s" || final.Output != "new" {
		t.Errorf("final %+v", final)
	}
	for _, ev := range h.Journal.Events() {
		if strings.Contains(ev.Text, "OLD REPLAY") {
			t.Errorf("replayed history re-emitted: %+v", ev)
		}
	}

	g := newFake(t, append(append([]clitest.Line(nil), start...),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"session not found"}}`),
		clitest.Host(`{"method":"session/new"}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s-2"}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-2","prompt":[{"type":"text","text":"~<kz-conversation>\n[user] hi\n</kz-conversation>\n\nagain"}]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}`)))
	h2 := clitest.NewHarness(t, g.WS, single(g), clitest.Options{Prior: prior})
	if final := h2.Run(t, context.Background(), "again"); final.NativeID != "s-2" || final.Status != string(engine.StatusComplete) {
		t.Errorf("primed final %+v", final)
	}
	if n := g.CheckReport(); n != 5 {
		t.Errorf("fake checked %d host lines, want 5", n)
	}
}

// Analysis-only mode puts the agent in its plan mode when offered.
func TestAnalysisOnlySetsPlanMode(t *testing.T) {
	lines := handshake("look")
	lines = append(lines[:len(lines)-1],
		clitest.Host(`{"method":"session/set_mode","params":{"sessionId":"s-1","modeId":"plan"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"[MODE_UPDATE] plan"}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"s-1"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}`))
	f := newFake(t, lines)
	j := &clitest.Journal{}
	s, err := engine.NewSession(engine.Config{Workspace: f.WS, Journal: j, Runtimes: single(f), Mode: engine.ModeAnalysisOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	if _, err := s.RunTurn(context.Background(), "look"); err != nil {
		t.Fatal(err)
	}
	if n := f.CheckReport(); n != 5 {
		t.Errorf("fake checked %d host lines, want 5", n)
	}
}

// TestUnifiedDiff: an ACP edit (old and new text) shows as kz's one
// unified diff, with its context lines like every other runtime's.
func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\n"
	for _, tc := range []struct {
		old  *string
		new  string
		want string
	}{
		{nil, "x\ny\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{&old, "a\nB\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{&old, "a\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"},
		{&old, "a\nb\nc", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+c\n\\ No newline at end of file\n"},
		{&old, old, ""},
	} {
		if got := unifiedDiff("f", tc.old, tc.new); got != tc.want {
			t.Errorf("unifiedDiff(%q) =\n%q\nwant\n%q", tc.new, got, tc.want)
		}
	}
}

// A permission pending when the turn is cancelled is answered with the
// cancelled outcome, then the prompt is cancelled and the agent stopped.
func TestCancelDuringPermission(t *testing.T) {
	lines := append(handshake("go"),
		clitest.CLI(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s-1","options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}],"toolCall":{"toolCallId":"run_shell_command__2","status":"pending","title":"rm -rf build","kind":"execute"}}}`),
		clitest.Host(`{"id":0,"result":{"outcome":{"outcome":"cancelled"}}}`),
		clitest.Host(`{"method":"session/cancel","params":{"sessionId":"s-1"}}`),
		clitest.Op("hang"))
	f := newFake(t, lines)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventPermissionRequested {
			cancel()
		}
	}})
	final := h.Run(t, ctx, "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q", final.Status)
	}
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6", n)
	}
}

// Only the offered kinds are used: an agent offering allow-always but no
// allow-once gets allow-always; one offering no reject gets cancelled.
func TestPickOptions(t *testing.T) {
	opts := []permissionOption{{OptionID: "a", Kind: "allow_always"}, {OptionID: "r", Kind: "reject_always"}}
	if got := pick(opts, "allow_once", "allow_always"); got != "a" {
		t.Errorf("allow picked %q", got)
	}
	if got := pick(opts, "reject_once", "reject_always"); got != "r" {
		t.Errorf("reject picked %q", got)
	}
	if got := pick(opts[:1], "reject_once", "reject_always"); got != "" {
		t.Errorf("reject without a reject option picked %q", got)
	}
}

// A delegated write into .git is refused by kz's safety check (real gate)
// even when the person would allow everything: nothing is written and no
// snapshot is taken.
func TestFileWriteIntoGitRefusedBySafety(t *testing.T) {
	lines := append(handshake("write"),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/.git/hooks/pre-commit","content":"#!/bin/sh\necho pwned\n"}}`),
		clitest.Host(`{"id":1,"error":{"code":-32001,"message":"~kz denied the write"}}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	if err := os.MkdirAll(filepath.Join(f.WS, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Gate: clitest.Gate(t, permission.Rules{}), Answer: clitest.AllowOnce})
	h.Run(t, context.Background(), "write")
	f.CheckReport()
	if _, err := os.Stat(filepath.Join(f.WS, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the hook was written")
	}
	dec := h.Journal.OfType(engine.EventPermissionDecided)
	if len(dec) != 1 || dec[0].Decision != engine.DecisionDeny || dec[0].Stage != string(permission.StageSafety) {
		t.Errorf("permission_decided %+v", dec)
	}
	if n := len(h.Journal.OfType(engine.EventPermissionRequested)); n != 0 {
		t.Errorf("the person was asked %d times", n)
	}
	if sn := f.snaps.all(); len(sn) != 0 {
		t.Errorf("snapshots %+v", sn)
	}
}

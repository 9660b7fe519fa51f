package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

func single(f *fake) []engine.RuntimeEntry { return []engine.RuntimeEntry{{Runtime: f.rt}} }

const (
	sampleThread = "01a202f1-fba3-7ff2-9876-410b148d8946"
	sampleCmd    = "echo hello-from-fake > hello.txt && cat hello.txt"
)

// The recorded allow session replays through kz: the handshake kz writes
// is the one the real CLI accepted (untrusted policy, read-only sandbox),
// both approvals go through the person with the command unwrapped and the
// diff taken from item/started, and every item maps to its event.
func TestReplayApprovalAllow(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "codex-app-server.approval-allow.jsonl"))
	perms := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: perms.Answer})
	final := h.Run(t, context.Background(), "do the task")
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6 (initialize, initialized, thread/start, turn/start, 2 accepts)", n)
	}
	if final.Status != string(engine.StatusComplete) || final.NativeID != sampleThread ||
		final.Output != "Done: fake model final answer (step 2)." {
		t.Fatalf("final %+v", final)
	}
	if final.Usage == nil || final.Usage.InputTokens != 300 || final.Usage.OutputTokens != 60 {
		t.Errorf("final usage %+v, want the three responses summed (300 in, 60 out)", final.Usage)
	}
	st := h.Journal.OfType(engine.EventSessionStarted)
	if len(st) != 1 || st[0].NativeID != sampleThread || st[0].Model != "fake-model" || st[0].Version != "0.169.0" {
		t.Errorf("session_started %+v", st)
	}
	ps := perms.Seen()
	if len(ps) != 2 {
		t.Fatalf("permission requests %+v", ps)
	}
	if ps[0].Command != sampleCmd || ps[0].ToolCallID != "call_3f2da018" {
		t.Errorf("command approval %+v", ps[0])
	}
	wantPath := f.WS + "/added_by_patch.txt"
	if !slices.Equal(ps[1].Paths, []string{wantPath}) || !strings.Contains(ps[1].Diff, "+line one\n+line two\n") {
		t.Errorf("file approval paths %q diff %q", ps[1].Paths, ps[1].Diff)
	}
	cs := h.Journal.OfType(engine.EventCommandStarted)
	cf := h.Journal.OfType(engine.EventCommandFinished)
	if len(cs) != 1 || cs[0].Command != sampleCmd || len(cf) != 1 || cf[0].ExitCode == nil || *cf[0].ExitCode != 0 ||
		cf[0].Output != "hello-from-fake\n" || cf[0].IsError {
		t.Errorf("command events %+v %+v", cs, cf)
	}
	fe := h.Journal.OfType(engine.EventFileEdited)
	if len(fe) != 1 || fe[0].Path != "added_by_patch.txt" || !strings.HasPrefix(fe[0].Diff, "--- /dev/null\n+++ b/added_by_patch.txt\n@@ -0,0 +1,2 @@\n+line one") {
		t.Errorf("file_edited %+v", fe)
	}
	var text string
	for _, d := range h.Journal.OfType(engine.EventTextDelta) {
		text += d.Text
	}
	msgs := h.Journal.OfType(engine.EventAssistantMessage)
	if text != final.Output || len(msgs) != 1 || msgs[0].Text != final.Output {
		t.Errorf("deltas %q messages %+v", text, msgs)
	}
	if u := h.Journal.OfType(engine.EventUsageUpdated); len(u) != 3 || u[0].Usage.InputTokens != 100 {
		t.Errorf("usage_updated %+v", u)
	}
	if tf := h.Journal.OfType(engine.EventToolCallFinished); len(tf) != 2 || tf[0].IsError || tf[1].IsError {
		t.Errorf("tool_call_finished %+v", tf)
	}
}

// Denied approvals are answered "decline" (the recorded deny session
// checks the exact lines); the declined items end as failed tool calls.
func TestReplayApprovalDeny(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "codex-app-server.approval-deny.jsonl"))
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: clitest.DenyOnce})
	final := h.Run(t, context.Background(), "do the task")
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6", n)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	tf := h.Journal.OfType(engine.EventToolCallFinished)
	if len(tf) != 2 || !tf[0].IsError || !tf[1].IsError {
		t.Errorf("tool_call_finished %+v", tf)
	}
	if fe := h.Journal.OfType(engine.EventFileEdited); len(fe) != 0 {
		t.Errorf("a declined change was reported as edited: %+v", fe)
	}
	if d := h.Journal.OfType(engine.EventPermissionDecided); len(d) != 2 || d[0].Decision != engine.DecisionDeny {
		t.Errorf("permission_decided %+v", d)
	}
}

// handshake is the start of every scripted turn, up to turn/start.
func handshake(turnText string) []clitest.Line {
	return []clitest.Line{
		clitest.Host(`{"method":"initialize","params":{"capabilities":{"experimentalApi":true}}}`),
		clitest.CLI(`{"id":1,"result":{"userAgent":"kz/0.169.0 (x)"}}`),
		clitest.Host(`{"method":"initialized"}`),
		clitest.Host(`{"method":"thread/start","params":{"approvalPolicy":"untrusted","sandbox":"read-only"}}`),
		clitest.CLI(`{"id":2,"result":{"thread":{"id":"th-1","model":"m"}}}`),
		clitest.Host(`{"method":"turn/start","params":{"threadId":"th-1","input":[{"type":"text","text":` + clitest.JSONString(turnText) + `}]}}`),
		clitest.CLI(`{"id":3,"result":{"turn":{"id":"tu-1","status":"inProgress"}}}`),
	}
}

const turnDone = `{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"completed"}}}`

// An approval pending when the turn is cancelled is answered "cancel",
// then kz interrupts the turn, cleans background terminals and kills the
// CLI with every child, also one outside its process group.
func TestCancelDuringApproval(t *testing.T) {
	lines := append(handshake("go"), clitest.Op("child"),
		clitest.CLI(`{"method":"item/started","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"commandExecution","id":"c1","command":"/bin/bash -lc 'sleep 30'","status":"inProgress"}}}`),
		clitest.CLI(`{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"th-1","turnId":"tu-1","itemId":"c1","command":"/bin/bash -lc 'sleep 30'"}}`),
		clitest.Host(`{"id":0,"result":{"decision":"cancel"}}`),
		clitest.Host(`{"method":"turn/interrupt","id":4,"params":{"threadId":"th-1","turnId":"tu-1"}}`),
		clitest.Host(`{"method":"thread/backgroundTerminals/clean","id":5,"params":{"threadId":"th-1"}}`),
		clitest.CLI(`{"id":5,"result":{}}`),
		clitest.Op("hang"))
	f := newFake(t, lines)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventPermissionRequested {
			cancel()
		}
	}})
	start := time.Now()
	final := h.Run(t, ctx, "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q", final.Status)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("interrupt took %v", d)
	}
	if n := f.CheckReport(); n != 7 {
		t.Errorf("fake checked %d host lines, want 7", n)
	}
	clitest.CheckGone(t, time.Second, "the interrupt", f.ChildPid())
}

// Closing Graceful sends turn/interrupt and a clean, and the turn ends
// interrupted when Codex reports it so.
func TestGracefulInterrupt(t *testing.T) {
	lines := append(handshake("go"),
		clitest.CLI(`{"method":"item/started","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"commandExecution","id":"c1","command":"sleep 30","status":"inProgress"}}}`),
		clitest.Host(`{"method":"turn/interrupt","params":{"threadId":"th-1","turnId":"tu-1"}}`),
		clitest.Host(`{"method":"thread/backgroundTerminals/clean","params":{"threadId":"th-1"}}`),
		clitest.CLI(`{"id":4,"result":{}}`),
		clitest.CLI(`{"id":5,"result":{}}`),
		clitest.CLI(`{"method":"item/completed","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"commandExecution","id":"c1","command":"sleep 30","status":"failed","exitCode":-1}}}`),
		clitest.CLI(`{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"interrupted"}}}`))
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
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6", n)
	}
	cf := h.Journal.OfType(engine.EventCommandFinished)
	if len(cf) != 1 || cf[0].ExitCode == nil || *cf[0].ExitCode != -1 || !cf[0].IsError {
		t.Errorf("command_finished %+v", cf)
	}
	// The command the stop killed is interrupted, not failed: its card
	// shows ⊘ as on every other runtime.
	tf := h.Journal.OfType(engine.EventToolCallFinished)
	if len(tf) != 1 || tf[0].Status != engine.ToolStatusInterrupted || !tf[0].IsError {
		t.Errorf("tool_call_finished %+v, want status interrupted", tf)
	}
}

// A command that fails on its own, with no stop asked, stays a failure:
// only a stop makes a failed command interrupted.
func TestFailedCommandWithoutStopIsNotInterrupted(t *testing.T) {
	lines := append(handshake("go"),
		clitest.CLI(`{"method":"item/started","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"commandExecution","id":"c1","command":"false","status":"inProgress"}}}`),
		clitest.CLI(`{"method":"item/completed","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"commandExecution","id":"c1","command":"false","status":"failed","exitCode":1}}}`),
		clitest.CLI(turnDone))
	f := newFake(t, lines)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	if final := h.Run(t, context.Background(), "go"); final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	f.CheckReport()
	tf := h.Journal.OfType(engine.EventToolCallFinished)
	if len(tf) != 1 || tf[0].Status != "" || !tf[0].IsError {
		t.Errorf("tool_call_finished %+v, want a failure without status", tf)
	}
}

// Unknown notifications, non-JSON lines, unknown server requests and late
// events of an earlier turn are skipped; the turn carries on.
func TestUnknownAndLateLinesSkipped(t *testing.T) {
	lines := append(handshake("go"),
		clitest.CLI(`{"method":"future/thing","params":{"x":1}}`),
		clitest.Line{Dir: "fake", Op: "raw", Text: "not json at all"},
		clitest.CLI(`{"method":"item/agentMessage/delta","params":{"threadId":"th-1","turnId":"old-turn","itemId":"m0","delta":"LATE"}}`),
		clitest.CLI(`{"method":"item/tool/requestUserInput","id":7,"params":{"questions":[]}}`),
		clitest.Host(`{"id":7,"error":{"code":-32601}}`),
		clitest.CLI(`{"method":"item/agentMessage/delta","params":{"threadId":"th-1","turnId":"tu-1","itemId":"m1","delta":"hi"}}`),
		clitest.CLI(`{"method":"item/completed","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"agentMessage","id":"m1","text":"hi"}}}`),
		clitest.CLI(turnDone))
	for _, msg := range clitest.Kinds(t, "codex-app-server.kinds.jsonl") {
		var m map[string]any
		_ = json.Unmarshal(msg, &m)
		// Every recorded notification of no interest to kz, replayed
		// before the end, must map to nothing.
		switch m["method"] {
		case "configWarning", "remoteControl/status/changed", "thread/status/changed", "serverRequest/resolved",
			"turn/diff/updated", "account/rateLimits/updated", "thread/readState/changed", "thread/started", "turn/started":
			lines = append(lines[:len(lines)-1], clitest.CLI(string(msg)), clitest.CLI(turnDone))
		}
	}
	f := newFake(t, lines)
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	f.CheckReport()
	if final.Status != string(engine.StatusComplete) || final.Output != "hi" {
		t.Errorf("final %+v", final)
	}
	for _, ev := range h.Journal.Events() {
		if strings.Contains(ev.Text, "LATE") {
			t.Errorf("late event of an old turn reached kz: %+v", ev)
		}
		switch ev.Type {
		case engine.EventToolCallStarted, engine.EventError:
			t.Errorf("unexpected %+v", ev)
		}
	}
}

// A CLI that dies mid-turn is a crash (retryable) with its stderr, and
// the session fails over; a child outside its group is killed.
func TestCrashFailsOver(t *testing.T) {
	f := newFake(t, append(handshake("go"), clitest.Op("child"), clitest.Line{Dir: "fake", Op: "exit", Code: 2, Stderr: "boom: out of memory"}))
	backup := newFake(t, append(handshake("go"),
		clitest.CLI(`{"method":"item/completed","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"agentMessage","id":"m1","text":"from backup"}}}`),
		clitest.CLI(turnDone)))
	backup.rt.cfg.Name = "backup"
	h := clitest.NewHarness(t, f.WS, []engine.RuntimeEntry{{Runtime: f.rt}, {Runtime: backup.rt}},
		clitest.Options{Failover: []engine.ChainLink{{Runtime: "backup"}}})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusComplete) || final.Output != "from backup" || final.Runtime != "backup" {
		t.Errorf("final %+v", final)
	}
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed || !strings.Contains(errs[0].Text, "boom: out of memory") || !errs[0].Retryable {
		t.Errorf("error events %+v", errs)
	}
	// kz kills the crashed CLI's process group; the grandchild, which kz
	// cannot reap, takes a moment to die after its SIGKILL (longer on a
	// loaded machine), so it gets as long as after an interrupt.
	clitest.CheckGone(t, time.Second, "the crash", f.ChildPid())
}

// A failed turn is classified from Codex's error message.
func TestFailedTurnClassified(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		kind engine.ErrorKind
	}{
		{"unexpected status 401 Unauthorized: invalid api key", engine.ErrAuth},
		{"exceeded retry limit, last status: 429 Too Many Requests", engine.ErrRateLimit},
		{"We're currently experiencing high demand, which may cause temporary errors.", engine.ErrOverloaded},
	} {
		f := newFake(t, append(handshake("go"),
			clitest.CLI(`{"method":"error","params":{"error":{"message":`+clitest.JSONString(tc.msg)+`},"threadId":"th-1","turnId":"tu-1","willRetry":false}}`),
			clitest.CLI(`{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"failed","error":null}}}`)))
		h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
		final := h.Run(t, context.Background(), "go")
		f.CheckReport()
		errs := h.Journal.OfType(engine.EventError)
		if final.Status != string(engine.StatusError) || len(errs) != 1 || errs[0].ErrorKind != tc.kind {
			t.Errorf("%q: final %q errors %+v", tc.msg, final.Status, errs)
		}
	}
}

// A CLI that refuses the untrusted policy fails the turn with a clear
// message instead of running commands unapproved.
func TestUntrustedRefused(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"method":"initialize"}`), clitest.CLI(`{"id":1,"result":{}}`), clitest.Host(`{"method":"initialized"}`),
		clitest.Host(`{"method":"thread/start","params":{"approvalPolicy":"untrusted"}}`),
		clitest.CLI(`{"id":2,"error":{"code":-32600,"message":"approval policy untrusted is no longer supported"}}`),
	})
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	f.CheckReport()
	errs := h.Journal.OfType(engine.EventError)
	if final.Status != string(engine.StatusError) || len(errs) != 1 || errs[0].ErrorKind != engine.ErrCapability ||
		!strings.Contains(errs[0].Text, "approved by kz") {
		t.Errorf("final %q errors %+v", final.Status, errs)
	}
}

func TestMissingBinary(t *testing.T) {
	rt := New(Config{Command: "/nonexistent/codex-kz-test", Workspace: t.TempDir()})
	if _, err := rt.Available(); engine.KindOf(err) != engine.ErrRuntimeMissing || !strings.Contains(err.Error(), "npm install") {
		t.Errorf("Available: %v", err)
	}
	h := clitest.NewHarness(t, rt.cfg.Workspace, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if e := h.Journal.OfType(engine.EventError); final.Status != string(engine.StatusError) || len(e) != 1 || e[0].ErrorKind != engine.ErrRuntimeMissing {
		t.Errorf("status %q errors %+v", final.Status, e)
	}
}

// A stored thread id is resumed with thread/resume; a turn without one on
// a session with history starts a new thread primed with the transcript.
func TestResumeAndPriming(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"method":"initialize"}`), clitest.CLI(`{"id":1,"result":{}}`), clitest.Host(`{"method":"initialized"}`),
		clitest.Host(`{"method":"thread/resume","params":{"threadId":"old-th","approvalPolicy":"untrusted","sandbox":"read-only"}}`),
		clitest.CLI(`{"id":2,"result":{"thread":{"id":"old-th","model":"m"}}}`),
		clitest.Host(`{"method":"turn/start","params":{"threadId":"old-th","input":[{"type":"text","text":"again"}]}}`),
		clitest.CLI(`{"id":3,"result":{"turn":{"id":"tu-2"}}}`),
		clitest.CLI(`{"method":"turn/completed","params":{"threadId":"old-th","turn":{"id":"tu-2","status":"completed"}}}`),
	})
	prior := &engine.Prior{LastTurn: 1, LastRuntime: "codex", Natives: map[string]engine.NativeRef{"codex": {ID: "old-th", TurnID: 1}},
		Transcript: []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "hi"}}}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Prior: prior})
	if final := h.Run(t, context.Background(), "again"); final.NativeID != "old-th" || final.Status != string(engine.StatusComplete) {
		t.Errorf("resumed final %+v", final)
	}
	if n := f.CheckReport(); n != 4 {
		t.Errorf("fake checked %d host lines, want 4", n)
	}

	g := newFake(t, append(handshake("~<kz-conversation>\n[user] what is 2+2?\n[assistant scripted/m1] 4\n[note] runtime scripted → codex (resume)\n</kz-conversation>\n\nand 3+3?"), clitest.CLI(turnDone)),
		append(handshake("next"), clitest.CLI(turnDone)))
	g.rt.cfg.Name = "codex"
	prior = &engine.Prior{LastTurn: 1, LastRuntime: "scripted", Transcript: []engine.TranscriptEntry{
		{Kind: engine.EntryUser, Text: "what is 2+2?"}, {Kind: engine.EntryAssistant, Text: "4", Runtime: "scripted", Model: "m1"},
		{Kind: engine.EntryTurnEnd, Status: "complete"}}}
	h2 := clitest.NewHarness(t, g.WS, single(g), clitest.Options{Prior: prior})
	if final := h2.Run(t, context.Background(), "and 3+3?"); final.NativeID != "th-1" {
		t.Errorf("primed final %+v", final)
	}
	if n := g.CheckReport(); n != 4 {
		t.Errorf("fake checked %d host lines, want 4", n)
	}
}

// A resume the CLI refuses falls back to a new thread primed with kz's
// transcript.
func TestResumeFailureFallsBackToPriming(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"method":"initialize"}`), clitest.CLI(`{"id":1,"result":{}}`), clitest.Host(`{"method":"initialized"}`),
		clitest.Host(`{"method":"thread/resume","params":{"threadId":"gone"}}`),
		clitest.CLI(`{"id":2,"error":{"code":-32600,"message":"no rollout found for thread id gone"}}`),
		clitest.Host(`{"method":"thread/start"}`),
		clitest.CLI(`{"id":3,"result":{"thread":{"id":"th-new"}}}`),
		clitest.Host(`{"method":"turn/start","params":{"threadId":"th-new","input":[{"type":"text","text":"~[user] hi\n"}]}}`),
		clitest.CLI(`{"id":4,"result":{"turn":{"id":"tu-1"}}}`),
		clitest.CLI(`{"method":"turn/completed","params":{"threadId":"th-new","turn":{"id":"tu-1","status":"completed"}}}`),
	})
	prior := &engine.Prior{LastTurn: 1, LastRuntime: "codex", Natives: map[string]engine.NativeRef{"codex": {ID: "gone", TurnID: 1}},
		Transcript: []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "hi"}}}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Prior: prior})
	if final := h.Run(t, context.Background(), "again"); final.NativeID != "th-new" {
		t.Errorf("final %+v", final)
	}
	if n := f.CheckReport(); n != 5 {
		t.Errorf("fake checked %d host lines, want 5", n)
	}
}

func TestUnwrapShell(t *testing.T) {
	for in, want := range map[string]string{
		`/bin/bash -lc 'echo hello > hello.txt && cat hello.txt'`: "echo hello > hello.txt && cat hello.txt",
		`bash -c "echo \"a b\""`:                                  `echo "a b"`,
		`/bin/bash -lc 'it'\''s'`:                                 "it's",
		`ls -la`:                                                  "ls -la",
		`/bin/bash -lc 'unbalanced`:                               `/bin/bash -lc 'unbalanced`,
		`python -c 'print(1)'`:                                    `python -c 'print(1)'`,
		`bash -lc "echo $HOME"`:                                   `bash -lc "echo $HOME"`,
		`bash -lc 'a' > out`:                                      `bash -lc 'a' > out`,
		`bash -lc 'a'; rm -rf /`:                                  `bash -lc 'a'; rm -rf /`,
		`bash -c "a\\b \$x"`:                                      `a\b $x`,
		`/bin/sh -c echo\ hi`:                                     `echo hi`,
	} {
		if got := unwrapShell(in); got != want {
			t.Errorf("unwrapShell(%q) = %q, want %q", in, got, want)
		}
	}
}

// Without a failover chain, a CLI that dies mid-turn ends the turn
// interrupted, with a crashed error event.
func TestCrashWithoutFailoverEndsInterrupted(t *testing.T) {
	f := newFake(t, append(handshake("go"), clitest.Line{Dir: "fake", Op: "exit", Code: 2, Stderr: "boom"}))
	h := clitest.NewHarness(t, f.WS, []engine.RuntimeEntry{{Runtime: f.rt}}, clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %s", final.Status)
	}
	if errs := h.Journal.OfType(engine.EventError); len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed {
		t.Errorf("error events %+v", errs)
	}
}

// The default sandbox lets approved commands write the workspace; an
// unknown one is refused before anything starts.
func TestSandboxDefaultAndUnknown(t *testing.T) {
	if got := New(Config{}).cfg.Sandbox; got != SandboxWorkspaceWrite {
		t.Errorf("default sandbox %q", got)
	}
	f := newFake(t, nil)
	f.rt.cfg.Sandbox = "wide-open"
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "hi")
	if e := h.Journal.OfType(engine.EventError); final.Status != string(engine.StatusError) || len(e) != 1 ||
		e[0].ErrorKind != engine.ErrCapability || !strings.Contains(e[0].Text, "wide-open") {
		t.Errorf("final %+v, errors %+v", final, e)
	}
}

// Retries are bounded by kz: past MaxRetries announced retries kz
// interrupts the turn and fails it with the last error, retryable, so that
// a dead endpoint fails over in seconds.
func TestRetriesBounded(t *testing.T) {
	retry := func(n int) clitest.Line {
		return clitest.CLI(fmt.Sprintf(`{"method":"error","params":{"error":{"message":"Reconnecting... %d/5 (unexpected status 503 Service Unavailable)"},"threadId":"th-1","turnId":"tu-1","willRetry":true}}`, n))
	}
	f := newFake(t, append(handshake("go"), retry(1), retry(2), retry(3),
		clitest.Host(`{"method":"turn/interrupt","params":{"threadId":"th-1","turnId":"tu-1"}}`),
		clitest.Host(`{"method":"thread/backgroundTerminals/clean","params":{"threadId":"th-1"}}`),
		clitest.CLI(`{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"interrupted"}}}`)))
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if n := f.CheckReport(); n != 6 {
		t.Errorf("fake checked %d host lines, want 6", n)
	}
	errs := h.Journal.OfType(engine.EventError)
	if final.Status != string(engine.StatusError) || len(errs) != 1 || !errs[0].Retryable || !strings.Contains(errs[0].Text, "after 2 retries") {
		t.Errorf("final %q errors %+v", final.Status, errs)
	}
}

// A person's "allow for the session" or "always" stays in kz's gate: Codex
// still gets a plain accept (the recorded "->" lines), never
// acceptForSession or the execpolicy amendment that would write a
// permanent allow rule into CODEX_HOME/rules.
func TestBroadAllowSendsPlainAccept(t *testing.T) {
	for _, scope := range []engine.AnswerScope{engine.ScopeSession, engine.ScopeAlways} {
		f := newFake(t, clitest.Sample(t, "codex-app-server.approval-allow.jsonl"))
		h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: func(engine.Event) engine.Answer {
			return engine.Answer{Decision: engine.DecisionAllow, Scope: scope}
		}})
		h.Run(t, context.Background(), "do the task")
		if n := f.CheckReport(); n != 6 {
			t.Errorf("%s: fake checked %d host lines, want 6", scope, n)
		}
		b, _ := os.ReadFile(f.Report)
		if strings.Contains(string(b), "acceptForSession") || strings.Contains(string(b), "Execpolicy") {
			t.Errorf("%s: kz sent a broad decision: %s", scope, b)
		}
	}
}

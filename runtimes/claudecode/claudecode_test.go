package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

func single(f *fake) []engine.RuntimeEntry {
	return []engine.RuntimeEntry{{Runtime: f.rt}}
}

// The recorded allow session replays through kz: every line maps to its
// event, the approval goes through the person, and the answer kz writes
// is the one the real CLI accepted.
func TestReplayApprovalAllow(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "claude-code.approval-allow.jsonl"), "KZ_FAKE_EXPECT_INIT=1")
	h := newHarness(t, single(f), clitest.Options{Answer: clitest.AllowOnce})
	final := h.Run(t, context.Background(), "Create out.txt. KZSCRIPT:bash")
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 3 {
		t.Errorf("fake checked %d host lines, want 3 (initialize, prompt, allow)", n)
	}

	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("status %q, want complete", final.Status)
	}
	const sid = "c3b77aa2-cbe0-45ae-a39b-ee9e77d5d100"
	if final.NativeID != sid || final.Cycles != 2 || final.CostUSD != 0.0012000000000000001 {
		t.Errorf("final_result native=%q cycles=%d cost=%v", final.NativeID, final.Cycles, final.CostUSD)
	}
	if final.Usage == nil || final.Usage.InputTokens != 200 || final.Usage.OutputTokens != 8 {
		t.Errorf("final usage %+v, want 200 in / 8 out", final.Usage)
	}
	if final.Model != "claude-opus-4-8" {
		t.Errorf("final model %q", final.Model)
	}
	st := h.Journal.OfType(engine.EventSessionStarted)
	if len(st) != 1 || st[0].NativeID != sid || st[0].Version != "2.1.197" || st[0].Model != "claude-opus-4-8[1m]" ||
		st[0].PermissionMode != "default" || !slices.Contains(st[0].Tools, "Bash") {
		t.Errorf("session_started %+v", st)
	}
	msgs := h.Journal.OfType(engine.EventAssistantMessage)
	if len(msgs) != 2 || msgs[0].Text != "I'll create the file." || msgs[1].Text != "Created out.txt containing 'hi'." {
		t.Errorf("assistant messages %+v", msgs)
	}
	const tool = "toolu_afbf20bfb0a74c1493dc6bc2"
	started := h.Journal.OfType(engine.EventToolCallStarted)
	if len(started) != 1 || started[0].ToolCallID != tool || started[0].Tool != "Bash" {
		t.Errorf("tool_call_started %+v", started)
	}
	cmd := h.Journal.OfType(engine.EventCommandStarted)
	if len(cmd) != 1 || cmd[0].Command != "echo hi > out.txt" {
		t.Errorf("command_started %+v", cmd)
	}
	req := h.Journal.OfType(engine.EventPermissionRequested)
	if len(req) != 1 || req[0].Command != "echo hi > out.txt" || req[0].ToolCallID != tool {
		t.Errorf("permission_requested %+v", req)
	}
	fin := h.Journal.OfType(engine.EventToolCallFinished)
	if len(fin) != 1 || fin[0].Output != "(Bash completed with no output)" || fin[0].IsError || fin[0].Tool != "Bash" {
		t.Errorf("tool_call_finished %+v", fin)
	}
	cf := h.Journal.OfType(engine.EventCommandFinished)
	if len(cf) != 1 || cf[0].ExitCode == nil || *cf[0].ExitCode != 0 {
		t.Errorf("command_finished %+v", cf)
	}
	usage := h.Journal.OfType(engine.EventUsageUpdated)
	if len(usage) != 1 || usage[0].Usage.InputTokens != 200 {
		t.Errorf("usage_updated %+v", usage)
	}
	// The order a subscriber sees follows the CLI's lines.
	var order []engine.EventType
	for _, ev := range h.Journal.Events() {
		order = append(order, ev.Type)
	}
	want := []engine.EventType{engine.EventUserMessage, engine.EventSessionStarted, engine.EventAssistantMessage,
		engine.EventToolCallStarted, engine.EventCommandStarted, engine.EventPermissionRequested,
		engine.EventPermissionDecided, engine.EventToolCallFinished, engine.EventCommandFinished,
		engine.EventAssistantMessage, engine.EventUsageUpdated, engine.EventFinalResult}
	if !slices.Equal(order, want) {
		t.Errorf("event order\n got %v\nwant %v", order, want)
	}
	argv := f.Argv()
	for _, a := range []string{"-p", "--verbose", "--include-partial-messages", "stream-json", "stdio", "default"} {
		if !slices.Contains(argv, a) {
			t.Errorf("argv %q lacks %q", argv, a)
		}
	}
}

// A denial carries the person's feedback to the model as the message.
func TestReplayApprovalDeny(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "claude-code.approval-deny.jsonl"))
	h := newHarness(t, single(f), clitest.Options{Answer: func(engine.Event) engine.Answer {
		return engine.Answer{Decision: engine.DecisionDeny, Feedback: "The kz user denied this tool call."}
	}})
	final := h.Run(t, context.Background(), "Create out.txt. KZSCRIPT:bash")
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 2 {
		t.Errorf("fake checked %d host lines, want 2", n)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	fin := h.Journal.OfType(engine.EventToolCallFinished)
	if len(fin) != 1 || !fin[0].IsError || fin[0].Output != "The kz user denied this tool call." {
		t.Errorf("tool_call_finished %+v", fin)
	}
	if cf := h.Journal.OfType(engine.EventCommandFinished); len(cf) != 1 || cf[0].ExitCode != nil || !cf[0].IsError {
		t.Errorf("command_finished of a denied call %+v", cf)
	}
	dec := h.Journal.OfType(engine.EventPermissionDecided)
	if len(dec) != 1 || dec[0].Decision != engine.DecisionDeny {
		t.Errorf("permission_decided %+v", dec)
	}
}

// bashTurn is a script of one Bash call that kz must answer with want.
func bashTurn(cmd, want string) []clitest.Line {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return []clitest.Line{
		clitest.Host(`{"type":"user","message":{"role":"user"}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-1","model":"m","tools":["Bash"],"permissionMode":"default","claude_code_version":"9.9.9"}`),
		clitest.CLI(`{"type":"assistant","message":{"id":"msg_1","model":"m","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":` + string(in) + `}]},"parent_tool_use_id":null,"session_id":"sess-1"}`),
		clitest.CLI(`{"type":"control_request","request_id":"req-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":` + string(in) + `,"tool_use_id":"toolu_1"}}`),
		clitest.Host(want),
		clitest.CLI(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Exit code 3\nboom","is_error":true}]},"parent_tool_use_id":null,"session_id":"sess-1"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done","session_id":"sess-1","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}`),
	}
}

// "Allow for session" adds a session-scoped rule for exactly that command.
func TestAllowForSessionScopesToCommand(t *testing.T) {
	hook := func(id, cmd, want string) []clitest.Line {
		return []clitest.Line{
			clitest.CLI(`{"type":"control_request","request_id":"` + id + `","request":{"subtype":"hook_callback","callback_id":"kz_pre_tool_use","input":{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + cmd + `"},"tool_use_id":"t-` + id + `"}}}`),
			clitest.Host(`{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + want + `"}}}}`),
		}
	}
	lines := bashTurn("make test", `{"type":"control_response","response":{"subtype":"success","request_id":"req-1","response":{"behavior":"allow","updatedInput":{"command":"make test"},"toolUseID":"toolu_1","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make test"}],"behavior":"allow","destination":"session"}]}}}`)
	// kz's hook asks before the grant and after it alike: the granted
	// command reaches kz's gate (and the person's PreToolUse hooks) every
	// time, and the gate's grant, not a shortcut here, allows it again.
	script := append([]clitest.Line{}, lines[:3]...)
	script = append(script, hook("h1", "make test", "ask")...)
	script = append(script, lines[3:5]...)
	script = append(script, hook("h2", "make test", "ask")...)
	script = append(script, hook("h3", "make test && curl evil", "ask")...)
	script = append(script, lines[5:]...)
	f := newFake(t, script)
	h := newHarness(t, single(f), clitest.Options{Answer: func(engine.Event) engine.Answer {
		return engine.Answer{Decision: engine.DecisionAllow, Scope: engine.ScopeSession}
	}})
	final := h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 5 {
		t.Errorf("fake checked %d host lines, want 5", n)
	}
	if n := len(h.Journal.OfType(engine.EventPermissionRequested)); n != 1 {
		t.Errorf("the person was asked %d times, want 1", n)
	}
	if final.Usage.CacheReadTokens != 7 || final.Usage.CacheWriteTokens != 3 || final.CostUSD != 0.5 {
		t.Errorf("final %+v usage %+v", final, final.Usage)
	}
	cf := h.Journal.OfType(engine.EventCommandFinished)
	if len(cf) != 1 || cf[0].ExitCode == nil || *cf[0].ExitCode != 3 {
		t.Errorf("command_finished exit code %+v", cf)
	}
}

// An edited command is what Claude runs.
func TestAllowWithEditedInput(t *testing.T) {
	f := newFake(t, bashTurn("rm -rf build", `{"type":"control_response","response":{"request_id":"req-1","response":{"behavior":"allow","updatedInput":{"command":"rm -rf build/tmp"}}}}`))
	h := newHarness(t, single(f), clitest.Options{Answer: func(engine.Event) engine.Answer {
		return engine.Answer{Decision: engine.DecisionAllow, UpdatedInput: json.RawMessage(`{"command":"rm -rf build/tmp"}`)}
	}})
	h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 2 {
		t.Errorf("fake checked %d host lines, want 2", n)
	}
}

// A gate denial (here analysis-only... no: the mode gate in deny mode)
// answers without asking the person, with the gate's reason.
func TestGateDenyWithoutPerson(t *testing.T) {
	f := newFake(t, bashTurn("ls", `{"type":"control_response","response":{"request_id":"req-1","response":{"behavior":"deny","message":"~permission mode deny"}}}`))
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := newHarness(t, single(f), clitest.Options{PermissionMode: engine.PermissionDeny, Answer: person.Answer})
	h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	f.CheckReport()
	if len(person.Seen()) > 0 {
		t.Error("the person was asked although the gate denied")
	}
}

// control_cancel_request closes kz's prompt and kz sends no answer.
func TestControlCancelClosesPrompt(t *testing.T) {
	in := `{"command":"sleep 1"}`
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"s2"}`),
		clitest.CLI(`{"type":"assistant","message":{"id":"m","model":"m","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":` + in + `}]},"parent_tool_use_id":null}`),
		clitest.CLI(`{"type":"control_request","request_id":"req-9","request":{"subtype":"can_use_tool","tool_name":"Bash","input":` + in + `,"tool_use_id":"toolu_9"}}`),
		{Dir: "fake", Op: "sleep", MS: 200},
		clitest.CLI(`{"type":"control_cancel_request","request_id":"req-9"}`),
		{Dir: "fake", Op: "sleep", MS: 200},
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s2"}`),
	})
	h := newHarness(t, single(f), clitest.Options{}) // nobody answers
	final := h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	f.CheckReport() // any answer kz sent shows up as an unexpected line
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	dec := h.Journal.OfType(engine.EventPermissionDecided)
	if len(dec) != 1 || dec[0].Decision != engine.DecisionDeny || dec[0].Stage != "cancelled" {
		t.Errorf("the prompt was not closed: %+v", dec)
	}
	if p := h.Session.Pending(); len(p) != 0 {
		t.Errorf("still pending: %v", p)
	}
}

// Graceful interrupt: kz sends the control interrupt, the turn ends
// interrupted, and the same CLI process serves the next turn (resumed
// session, model switch through set_model).
func TestGracefulInterruptKeepsProcess(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user","message":{"content":[{"text":"first"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-g","model":"m"}`),
		clitest.CLI(`{"type":"assistant","message":{"id":"m1","model":"m","content":[{"type":"tool_use","id":"toolu_s","name":"Bash","input":{"command":"sleep 30"}}]},"parent_tool_use_id":null}`),
		clitest.Host(`{"type":"control_request","request_id":"i1","request":{"subtype":"interrupt"}}`),
		clitest.CLI(`{"type":"control_response","response":{"subtype":"success","request_id":"i1"}}`),
		clitest.CLI(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_s","content":"The user doesn't want to proceed with this tool use.","is_error":true}]},"tool_use_result":"User rejected tool use","parent_tool_use_id":null}`),
		clitest.CLI(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]},"parent_tool_use_id":null}`),
		clitest.CLI(`{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,"session_id":"sess-g","terminal_reason":"aborted_tools","total_cost_usd":0.25,"usage":{"input_tokens":0,"output_tokens":0}}`),
		clitest.Host(`{"type":"control_request","request_id":"sm","request":{"subtype":"set_model","model":"other"}}`),
		clitest.CLI(`{"type":"control_response","response":{"subtype":"success","request_id":"sm"}}`),
		clitest.Host(`{"type":"user","message":{"content":[{"text":"second"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-g","model":"other"}`),
		clitest.CLI(`{"type":"assistant","message":{"id":"m2","model":"other","content":[{"type":"text","text":"hello again"}]},"parent_tool_use_id":null}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"hello again","session_id":"sess-g","total_cost_usd":0.75}`),
	})
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: f.rt, Models: []string{"m", "other"}}}, clitest.Options{
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventCommandStarted {
				h.Session.Interrupt(false)
			}
		}})
	final := h.Run(t, context.Background(), "first")
	if final.Status != string(engine.StatusInterrupted) {
		t.Fatalf("first turn status %q, want interrupted", final.Status)
	}
	fin := h.Journal.OfType(engine.EventToolCallFinished)
	if len(fin) != 1 || fin[0].Status != engine.ToolStatusInterrupted {
		t.Errorf("interrupted tool call %+v", fin)
	}
	pid := f.rt.procs[h.Session.ID()].p.cmd.Process.Pid
	if err := h.Session.SwitchRuntime("claude", "other"); err != nil {
		t.Fatal(err)
	}
	final = h.Run(t, context.Background(), "second")
	// The CLI's cost is a running total: 0.25 then 0.75 is 0.5 for turn 2.
	if final.Status != string(engine.StatusComplete) || final.Output != "hello again" || final.Model != "other" || final.CostUSD != 0.5 {
		t.Errorf("second turn %+v", final)
	}
	if p := f.rt.procs[h.Session.ID()].p; p == nil || p.cmd.Process.Pid != pid {
		t.Error("the second turn did not reuse the CLI process")
	}
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 4 {
		t.Errorf("fake checked %d host lines, want 4", n)
	}
}

// Immediate interrupt: a pending request is answered with deny, the group
// gets SIGINT then SIGKILL (the fake ignores SIGINT), and no child of the
// CLI survives.
func TestImmediateInterruptKillsGroup(t *testing.T) {
	in := `{"command":"sleep 60"}`
	f := newFake(t, []clitest.Line{
		clitest.Op("ignore_sigint"),
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-k"}`),
		clitest.Op("child"),
		clitest.CLI(`{"type":"assistant","message":{"id":"m","model":"m","content":[{"type":"tool_use","id":"toolu_k","name":"Bash","input":` + in + `}]},"parent_tool_use_id":null}`),
		clitest.CLI(`{"type":"control_request","request_id":"req-k","request":{"subtype":"can_use_tool","tool_name":"Bash","input":` + in + `,"tool_use_id":"toolu_k"}}`),
		clitest.Host(`{"type":"control_response","response":{"request_id":"req-k","response":{"behavior":"deny"}}}`),
		clitest.Op("hang"),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, single(f), clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventPermissionRequested {
			cancel()
		}
	}})
	start := time.Now()
	final := h.Run(t, ctx, "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q, want interrupted", final.Status)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("interrupt took %v", d)
	}
	if n := f.CheckReport(); n != 2 {
		t.Errorf("fake checked %d host lines, want 2 (prompt, deny)", n)
	}
	clitest.CheckGone(t, 3*time.Second, "the interrupt", f.ChildPid())
}

// A CLI that dies mid-turn is a crashed error with its stderr, and the
// failover chain moves to the next runtime.
func TestCrashFailsOver(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-c"}`),
		clitest.Op("child"),
		{Dir: "fake", Op: "exit", Code: 2, Stderr: "boom: out of memory"},
	})
	backup := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-b"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"from backup","session_id":"sess-b"}`),
	})
	backup.rt.cfg.Name = "backup"
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: f.rt}, {Runtime: backup.rt}},
		clitest.Options{Failover: []engine.ChainLink{{Runtime: "backup"}}})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusComplete) || final.Output != "from backup" || final.Runtime != "backup" {
		t.Errorf("final %+v", final)
	}
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed || !strings.Contains(errs[0].Text, "boom: out of memory") || !errs[0].Retryable {
		t.Errorf("error events %+v", errs)
	}
	if sw := h.Journal.OfType(engine.EventRuntimeSwitched); len(sw) != 1 {
		t.Errorf("runtime_switched %+v", sw)
	}
	// kz kills the crashed CLI's process group; the grandchild, which kz
	// cannot reap, takes a moment to die after its SIGKILL (longer on a
	// loaded machine), so it gets as long as after an interrupt.
	clitest.CheckGone(t, time.Second, "the crash", f.ChildPid())
}

// Without failover, a crash ends the turn interrupted, with an error event.
func TestCrashWithoutFailover(t *testing.T) {
	f := newFake(t, []clitest.Line{clitest.Host(`{"type":"user"}`), {Dir: "fake", Op: "exit", Code: 1, Stderr: "fatal: bad"}})
	h := newHarness(t, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q", final.Status)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrCrashed || !strings.Contains(e[0].Text, "fatal: bad") {
		t.Errorf("errors %+v", e)
	}
}

func TestMissingBinary(t *testing.T) {
	rt := New(Config{Command: "/nonexistent/claude-kz-test", Workspace: t.TempDir()})
	if _, err := rt.Available(); engine.KindOf(err) != engine.ErrRuntimeMissing || !strings.Contains(err.Error(), "npm install") {
		t.Errorf("Available: %v", err)
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusError) {
		t.Errorf("status %q", final.Status)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrRuntimeMissing {
		t.Errorf("errors %+v", e)
	}
}

func TestAvailableVersion(t *testing.T) {
	dir := t.TempDir()
	script := dir + "/claude"
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho '2.1.197 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := New(Config{Command: script}).Available()
	if err != nil || v != "2.1.197" {
		t.Errorf("Available = %q, %v", v, err)
	}
}

// Unknown kinds, unknown system subtypes, a non-JSON line and a 3 MB line
// are all survived; the long text arrives whole.
func TestUnknownKindsAndLongLines(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"s"}`),
		clitest.CLI(`{"type":"brand_new_kind","x":1}`),
		clitest.CLI(`{"type":"system","subtype":"brand_new_subtype"}`),
		{Dir: "<-", Msg: json.RawMessage(`"not an object"`)},
		clitest.CLI(`{"type":"assistant","message":{"id":"m","model":"m","content":[{"type":"text","text":"` + long + `"}]},"parent_tool_use_id":null}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s"}`),
	})
	h := newHarness(t, single(f), clitest.Options{})
	final := h.Run(t, context.Background(), "go")
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %q", final.Status)
	}
	if m := h.Journal.OfType(engine.EventAssistantMessage); len(m) != 1 || len(m[0].Text) != len(long) {
		t.Errorf("long message not delivered whole")
	}
}

// Recorded lines of every kind map to their events: deltas, thinking,
// Write with its diff, rule-based denial, subagent lines, API errors.
func TestKindsMapping(t *testing.T) {
	k := clitest.Kinds(t, "claude-code.kinds.jsonl")
	sub := `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"SUBAGENT"}},"parent_tool_use_id":"toolu_x"}`
	var lines []clitest.Line
	lines = append(lines, clitest.Host(`{"type":"user"}`))
	for _, kind := range []string{"system/init", "system/status (requesting)", "system/thinking_tokens",
		"stream_event message_start", "stream_event content_block_start (thinking)", "stream_event content_block_delta (thinking_delta)",
		"stream_event content_block_delta (signature_delta)", "assistant (thinking block)",
		"stream_event content_block_start (text)", "stream_event content_block_delta (text_delta)", "stream_event content_block_stop",
		"assistant (text block)", "system/permission_denied (rule-based)", "system/task_started (subagent)",
		"user (subagent prompt, parent_tool_use_id set)", "control_request can_use_tool (Write)"} {
		if k[kind] == nil {
			t.Fatalf("no sample of %q", kind)
		}
		lines = append(lines, clitest.Line{Dir: "<-", Msg: k[kind]})
	}
	lines = append(lines, clitest.CLI(sub),
		clitest.Host(`{"type":"control_response","response":{"request_id":"d2b7c35a-6011-4acf-a8e8-ee90f75d72b6","response":{"behavior":"allow","updatedInput":{"content":"written by fake model\n"}}}}`),
		clitest.CLI(`{"type":"assistant","message":{"id":"m","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_09ff292c895a40299f140a7f","name":"Write","input":{"file_path":"written.txt","content":"written by fake model\n"}}]},"parent_tool_use_id":null}`),
		clitest.Line{Dir: "<-", Msg: k["user (tool_result, Write with structured tool_use_result)"]},
		clitest.Line{Dir: "<-", Msg: k["assistant (synthetic API-error message)"]},
		clitest.Line{Dir: "<-", Msg: k["result success with is_error (API error)"]},
	)
	f := newFake(t, lines)
	h := newHarness(t, single(f), clitest.Options{PermissionMode: engine.PermissionAcceptEdits})
	final := h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	f.CheckReport()

	if final.Status != string(engine.StatusError) {
		t.Errorf("status %q, want error", final.Status)
	}
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrRateLimit || !errs[0].Retryable {
		t.Errorf("API error %+v", errs)
	}
	var reasoning, text string
	for _, ev := range h.Journal.Events() {
		switch ev.Type {
		case engine.EventReasoningDelta:
			reasoning += ev.Text
		case engine.EventTextDelta:
			text += ev.Text
		}
	}
	if reasoning != "Let me think about this carefully." {
		t.Errorf("reasoning %q (streamed once, not repeated by the whole block)", reasoning)
	}
	if text != "I'll creat" {
		t.Errorf("text deltas %q (subagent deltas must be skipped)", text)
	}
	if m := h.Journal.OfType(engine.EventAssistantMessage); len(m) != 1 || m[0].Text != "I'll create the file." {
		t.Errorf("assistant messages %+v", m)
	}
	var claudeDenial bool
	for _, d := range h.Journal.OfType(engine.EventPermissionDecided) {
		if d.Stage == "claude" && d.Tool == "Bash" && d.Decision == engine.DecisionDeny {
			claudeDenial = true
		}
	}
	if !claudeDenial {
		t.Error("Claude's rule-based denial is not in the event log")
	}
	ws := f.rt.cfg.Workspace
	dec := h.Journal.OfType(engine.EventPermissionDecided)
	if len(dec) != 2 || !slices.Equal(dec[1].Paths, []string{filepath.Join(ws, "<workdir>/written.txt")}) {
		t.Errorf("Write permission paths %+v", dec)
	}
	fe := h.Journal.OfType(engine.EventFileEdited)
	if len(fe) != 1 || fe[0].Path != "<workdir>/written.txt" || !strings.Contains(fe[0].Diff, "+written by fake model") {
		t.Errorf("file_edited %+v (workspace %s)", fe, ws)
	}
}

// A relative path in a file tool is resolved against the workspace for
// the gate, and a proposed edit carries its diff.
func TestPermissionRequestPaths(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(ws+"/a.txt", []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := &turnRun{rt: New(Config{Workspace: ws}), t: &engine.Turn{}}
	cases := []struct {
		tool, input string
		paths       []string
		write       bool
		cmd, diff   string
	}{
		{"Edit", `{"file_path":"a.txt","old_string":"two","new_string":"2"}`, []string{ws + "/a.txt"}, true, "", "+2"},
		{"Write", `{"file_path":"../x/.git/hooks/pre-commit","content":"#!/bin/sh"}`, []string{ws[:strings.LastIndex(ws, "/")] + "/x/.git/hooks/pre-commit"}, true, "", "+#!/bin/sh"},
		{"Read", `{"file_path":"/etc/passwd"}`, []string{"/etc/passwd"}, false, "", ""},
		{"Grep", `{"pattern":"x"}`, []string{ws}, false, "", ""},
		{"Bash", `{"command":"git status"}`, nil, false, "git status", ""},
		{"WebFetch", `{"url":"https://example.com"}`, nil, false, "", ""},
	}
	for _, c := range cases {
		pr, pv := tr.permissionRequest(canUseTool{ToolName: c.tool, Input: json.RawMessage(c.input), ToolUseID: "t"})
		if !slices.Equal(pr.Paths, c.paths) || pr.Write != c.write || pr.Command != c.cmd || !strings.Contains(pr.Diff, c.diff) || pr.Tool != c.tool {
			t.Errorf("%s: %+v", c.tool, pr)
		}
		// Every computed write can be taken in part; nothing else is.
		if want := c.write && pv != nil; (pr.Selection == engine.SelectionContent) != want || (pv != nil && pv.diff != pr.Diff) {
			t.Errorf("%s: selection %q, preview %+v", c.tool, pr.Selection, pv)
		}
	}
}

// A turn with a Claude session id resumes it; a fresh session after turns
// elsewhere is primed with the transcript.
func TestResumeAndPriming(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user","message":{"content":[{"text":"again"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"old-sess"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"old-sess"}`),
	})
	prior := &engine.Prior{LastTurn: 1, LastRuntime: "claude", Natives: map[string]engine.NativeRef{"claude": {ID: "old-sess", TurnID: 1}},
		Transcript: []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "hi"}}}
	h := newHarness(t, single(f), clitest.Options{Prior: prior})
	h.Run(t, context.Background(), "again")
	_ = f.rt.Close()
	f.CheckReport()
	if a := f.Argv(); !slices.Contains(a, "--resume") || !slices.Contains(a, "old-sess") {
		t.Errorf("argv %q lacks --resume old-sess", a)
	}

	g := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user","message":{"content":[{"text":"~<kz-conversation>\n[user] what is 2+2?\n[assistant scripted/m1] 4\n[note] runtime scripted → claude (resume)\n</kz-conversation>\n\nand 3+3?"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"new-sess"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"6","session_id":"new-sess"}`),
	})
	prior = &engine.Prior{LastTurn: 1, LastRuntime: "scripted", Transcript: []engine.TranscriptEntry{
		{Kind: engine.EntryUser, Text: "what is 2+2?"}, {Kind: engine.EntryAssistant, Text: "4", Runtime: "scripted", Model: "m1"},
		{Kind: engine.EntryTurnEnd, Status: "complete"}}}
	h2 := newHarness(t, single(g), clitest.Options{Prior: prior})
	final := h2.Run(t, context.Background(), "and 3+3?")
	_ = g.rt.Close()
	if n := g.CheckReport(); n != 1 {
		t.Errorf("fake checked %d host lines, want 1", n)
	}
	if slices.Contains(g.Argv(), "--resume") {
		t.Error("a primed session must not resume")
	}
	if final.NativeID != "new-sess" {
		t.Errorf("native id %q", final.NativeID)
	}
}

func TestRenderHistoryBounded(t *testing.T) {
	var h []engine.TranscriptEntry
	for i := range 200 {
		h = append(h, engine.TranscriptEntry{Kind: engine.EntryUser, Text: strings.Repeat("u", 100) + strconv.Itoa(i)})
	}
	h = append(h, engine.TranscriptEntry{Kind: engine.EntryToolCall, Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`),
		Status: "ok", Output: strings.Repeat("o", 10000)})
	s := renderHistory(h, 4000)
	if len(s) > 4100 {
		t.Errorf("rendered %d bytes over a 4000 budget", len(s))
	}
	if !strings.HasPrefix(s, "[") || !strings.Contains(s, "earlier entries omitted") || !strings.Contains(s, "u199") || strings.Contains(s, "u0\n") {
		t.Errorf("rendering keeps the wrong end:\n%s", s[:200])
	}
	if !strings.Contains(s, "[tool call Bash") || strings.Count(s, "o") > 1500+50 {
		t.Error("tool output not clipped")
	}
}

func TestBuildEnvMinimal(t *testing.T) {
	t.Setenv("KZ_TEST_SECRET_TOKEN", "x")
	t.Setenv("GITHUB_TOKEN", "ghp")
	t.Setenv("ANTHROPIC_API_KEY", "sk")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws")
	t.Setenv("CLAUDE_CODE_MAX_RETRIES", "")
	_ = os.Unsetenv("CLAUDE_CODE_MAX_RETRIES")
	env := buildEnv([]string{"AWS_SECRET_ACCESS_KEY", "EXTRA=1"})
	has := func(kv string) bool { return slices.Contains(env, kv) }
	if !has("ANTHROPIC_API_KEY=sk") || !has("ANTHROPIC_BASE_URL=http://127.0.0.1:1") || !has("EXTRA=1") ||
		!has("AWS_SECRET_ACCESS_KEY=aws") || !has("CLAUDE_CODE_MAX_RETRIES=2") {
		t.Errorf("env lacks what Claude needs: %q", env)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GITHUB_TOKEN=") || strings.HasPrefix(kv, "KZ_TEST_SECRET_TOKEN=") {
			t.Errorf("secret passed: %s", kv)
		}
	}
}

// A Claude session the CLI cannot resume is replaced by a new one primed
// with kz's transcript, within the same turn.
func TestResumeFailureFallsBackToPriming(t *testing.T) {
	f := newFake(t, []clitest.Line{
		{Dir: "fake", Op: "exit_if_arg", Text: "--resume", Stderr: "No conversation found with session ID: gone"},
		clitest.Host(`{"type":"user","message":{"content":[{"text":"~[user] earlier question"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"fresh"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"fresh"}`),
	})
	prior := &engine.Prior{LastTurn: 1, LastRuntime: "claude", Natives: map[string]engine.NativeRef{"claude": {ID: "gone", TurnID: 1}},
		Transcript: []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "earlier question"}}}
	h := newHarness(t, single(f), clitest.Options{Prior: prior})
	final := h.Run(t, context.Background(), "next")
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 1 {
		t.Errorf("fake checked %d host lines, want 1", n)
	}
	if final.Status != string(engine.StatusComplete) || final.NativeID != "fresh" {
		t.Errorf("final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 0 {
		t.Errorf("errors %+v", e)
	}
}

// analysis-only starts Claude in plan mode without write and shell tools,
// and a write that still arrives is denied without asking anybody.
func TestAnalysisOnlyMode(t *testing.T) {
	in := `{"file_path":"x.txt","content":"x"}`
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user"}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"a"}`),
		clitest.CLI(`{"type":"control_request","request_id":"w","request":{"subtype":"can_use_tool","tool_name":"Write","input":` + in + `,"tool_use_id":"tw"}}`),
		clitest.Host(`{"type":"control_response","response":{"request_id":"w","response":{"behavior":"deny","message":"~not allowed in analysis-only mode"}}}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"a"}`),
	})
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := newHarness(t, single(f), clitest.Options{Mode: engine.ModeAnalysisOnly, PermissionMode: engine.PermissionYolo,
		Answer: person.Answer})
	h.Run(t, context.Background(), "look around")
	_ = f.rt.Close()
	if n := f.CheckReport(); n != 2 {
		t.Errorf("fake checked %d host lines, want 2", n)
	}
	argv := strings.Join(f.Argv(), " ")
	if !strings.Contains(argv, "--permission-mode plan") || !strings.Contains(argv, "--disallowedTools Bash,Edit,Write,MultiEdit,NotebookEdit") {
		t.Errorf("argv %q", argv)
	}
	if len(person.Seen()) > 0 {
		t.Error("the person was asked")
	}
	if d := h.Journal.OfType(engine.EventPermissionDecided); len(d) != 1 || d[0].ToolCallID != "tw" || d[0].Stage != "mode" || d[0].Decision != engine.DecisionDeny {
		t.Errorf("the mode's denial is not logged: %+v", d)
	}
}

// The result's permission_denials: a call kz denied is not logged twice;
// one Claude refused on its own is logged as Claude's denial.
func TestResultDenialsReconciled(t *testing.T) {
	lines := bashTurn("ls", `{"type":"control_response","response":{"request_id":"req-1","response":{"behavior":"deny"}}}`)
	lines[len(lines)-1] = clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done","session_id":"sess-1","permission_denials":[` +
		`{"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls"}},{"tool_name":"WebFetch","tool_use_id":"toolu_web","tool_input":{"url":"https://example.com"}}]}`)
	f := newFake(t, lines)
	h := newHarness(t, single(f), clitest.Options{PermissionMode: engine.PermissionDeny})
	h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	f.CheckReport()
	dec := h.Journal.OfType(engine.EventPermissionDecided)
	if len(dec) != 2 || dec[0].ToolCallID != "toolu_1" || dec[0].Stage != "permission_mode" ||
		dec[1].ToolCallID != "toolu_web" || dec[1].Tool != "WebFetch" || dec[1].Stage != "claude" || dec[1].Decision != engine.DecisionDeny {
		t.Errorf("permission_decided %+v", dec)
	}
}

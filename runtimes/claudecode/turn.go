package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
)

// turnRun is one turn on one CLI process. Its fields are owned by the
// goroutine running the turn, except perms, which permission goroutines
// share under permMu.
type turnRun struct {
	rt    *Runtime
	t     *engine.Turn
	model string
	p     *process

	tools map[string]toolCall
	// streamedText and streamedThinking say deltas of the current block
	// were already emitted, so its whole assistant line adds no delta.
	streamedThinking bool
	lastModel        string
	// interrupted says kz sent the graceful interrupt.
	interrupted bool
	// eof says the CLI's stdout ended before its result line.
	eof bool
	// resultsBefore is the process's result count when the turn's prompt
	// was sent: one more means the CLI has ended this turn.
	resultsBefore int64
	limitErr      error

	permMu sync.Mutex
	perms  map[string]*pendingPerm
	// denied are the tool calls whose denial kz already recorded as a
	// permission_decided event; guarded by permMu.
	denied map[string]bool
	// early are the tool calls kz's gate allowed by itself at the
	// PreToolUse hook (preToolUse), as the gate judged them; guarded by
	// permMu.
	early  map[string]canUseTool
	permWG sync.WaitGroup
}

// toolCall is what kz remembers of a tool_use until its result.
type toolCall struct {
	name    string
	input   json.RawMessage
	command string
	path    string
}

// pendingPerm is a can_use_tool request waiting for kz's answer.
type pendingPerm struct {
	cancel context.CancelFunc
	// byCLI says the CLI withdrew the request (control_cancel_request), so
	// no answer must be sent.
	byCLI bool
	// done is closed once the request's decision is made and logged.
	done chan struct{}
}

// run makes sure a CLI serves this turn, sends the prompt and follows the
// CLI's output to its result.
func (tr *turnRun) run(ctx context.Context, s *slot) (engine.Result, error) {
	res, retry, err := tr.attempt(ctx, s, false)
	if retry {
		// --resume of a session the CLI does not know (its files were
		// removed, or HOME changed): start a new Claude session primed with
		// kz's transcript instead, so nothing is lost.
		tr.rt.log.Warn("claude: resume failed, starting a new session primed with the transcript", "native_id", tr.t.NativeID)
		res, _, err = tr.attempt(ctx, s, true)
	}
	return res, err
}

// attempt runs the turn once; retry says a --resume was refused before the
// CLI started the session, so a primed fresh start may follow.
func (tr *turnRun) attempt(ctx context.Context, s *slot, noResume bool) (res engine.Result, retry bool, err error) {
	fresh, err := tr.ensure(ctx, s, noResume)
	if err != nil {
		return engine.Result{Status: engine.StatusError, Model: tr.model}, false, err
	}
	// The CLI is started: the workspace's state is recorded while it
	// boots, and the prompt waits for it (engine.EarlyStarter).
	tr.t.Record()
	if err := tr.t.Ready(ctx); err != nil {
		return engine.Result{Status: engine.StatusInterrupted, Model: tr.model}, false, err
	}
	tr.tools = map[string]toolCall{}
	tr.perms = map[string]*pendingPerm{}
	tr.denied = map[string]bool{}
	tr.early = map[string]canUseTool{}
	tr.eof = false
	prompt, images := tr.t.Prompt, tr.t.Images
	if fresh && len(tr.t.History) > 0 {
		prompt = primePrompt(tr.t.History, prompt, primeBudget)
		images = primeImages(tr.t.History, images)
	}
	tr.resultsBefore = tr.p.results.Load()
	if err := tr.p.send(newUserLine(prompt, images...)); err != nil {
		tr.p.kill(tr.rt.cfg.KillGrace)
	}
	res, err = tr.loop(ctx)
	if tr.eof {
		// msgs is closed right after the process was reaped, just before
		// done: wait for done so that a refused --resume is told apart
		// from a CLI that still runs. A turn that ended any other way
		// (an API error in the result line) must not wait here: its CLI
		// stays alive and the failover chain is waiting. A CLI that
		// closed its stdout but lingers is stopped.
		select {
		case <-tr.p.done:
		case <-time.After(2 * time.Second):
			tr.p.kill(tr.rt.cfg.KillGrace)
		}
	}
	// A --resume that ended before the CLI started the session (no
	// system/init) was refused, unless kz itself stopped the turn.
	refused := !noResume && !fresh && tr.t.NativeID != "" && !tr.p.gotInit && ctx.Err() == nil
	if refused && err != nil && tr.p.alive() {
		// The CLI ended the turn with an error before it started the
		// session: it refused the --resume ("No conversation found with
		// session ID"), which Claude Code reports as an error result and
		// not always by exiting first. This happens when the CLI that held
		// the session was killed before it had written the session to
		// disk, which it does lazily. The process is stopped so that the
		// retry below starts a new one.
		tr.p.killNow()
	}
	if !tr.p.alive() {
		s.set(nil)
		if refused {
			return res, true, err
		}
	}
	return res, false, err
}

// ensure reuses the session's CLI when it holds the Claude session kz wants
// to continue and was started with the same flags; otherwise it starts one
// (with --resume when kz names a Claude session). fresh says the new CLI
// knows nothing of the conversation, so the prompt must be primed.
func (tr *turnRun) ensure(ctx context.Context, s *slot, noResume bool) (fresh bool, err error) {
	r := tr.rt
	args := r.modeArgs(tr.t)
	key := spawnKey{workspace: r.workspaceFor(tr.t), args: strings.Join(args, "\x00")}
	if p := s.p; p != nil {
		usable := p.usable()
		reuse := usable && p.key == key && tr.t.NativeID != "" && tr.t.NativeID == p.sessionID && !noResume
		switch {
		case !usable:
			// It died between turns: whatever it left behind goes at
			// once, and a new CLI resumes the Claude session below, so
			// that the turn goes on with the same conversation.
			r.log.Info("claude: the CLI ended since the last turn; starting another", "native_id", p.sessionID)
			p.killNow()
			s.set(nil)
		case !reuse:
			p.shutdown(r.cfg.KillGrace)
			s.set(nil)
		}
	}
	if p := s.p; p != nil {
		tr.p = p
		if tr.model != "" && tr.model != p.model {
			if _, err := p.controlWait(ctx, map[string]any{"subtype": "set_model", "model": tr.model}); err != nil {
				return false, r.errorf(engine.ErrCrashed, tr.model, err, "switching claude to model %s: %v", tr.model, err)
			}
			p.model = tr.model
		}
		return false, nil
	}
	full := append([]string(nil), baseArgs...)
	full = append(full, args...)
	if tr.model != "" {
		full = append(full, "--model", tr.model)
	}
	resume := tr.t.NativeID != "" && !noResume
	if resume {
		full = append(full, "--resume", tr.t.NativeID)
	}
	// kz's MCP servers are Claude's too, beside its own: its calls of
	// their tools (mcp__NAME__tool) reach kz's gate like any other.
	var cleanup func()
	env := r.cfg.Env
	if len(r.cfg.MCPServers) > 0 {
		// Claude connects to the servers in the background unless told
		// to wait: the first turn would not have their tools. A value
		// the configuration gives wins.
		env = append([]string{"MCP_CONNECTION_NONBLOCKING=false"}, env...)
		path, remove, err := writeMCPConfig(r.cfg.MCPServers, r.log)
		if err != nil {
			return false, r.errorf(engine.ErrCrashed, tr.model, err, "starting %s: %v", r.cfg.Command, err)
		}
		full = append(full, "--mcp-config", path)
		cleanup = remove
	}
	cliEnv := buildEnv(env)
	full = append(full, hookGuard(cliEnv, key.workspace)...)
	full = append(full, r.cfg.Args...)
	p, err := start(r.cfg.Confiner, r.cfg.Command, full, key.workspace, cliEnv, r.log, cleanup)
	if err != nil {
		if isMissing(err) {
			return false, r.missing(err)
		}
		return false, r.errorf(engine.ErrCrashed, tr.model, err, "starting %s: %v", r.cfg.Command, err)
	}
	p.key, p.model = key, tr.model
	if resume {
		p.sessionID = tr.t.NativeID
	}
	// initialize is optional (approvals work without it); kz sends it so
	// that the CLI knows a controlling host is attached, and does not wait.
	_, _, _ = p.control(map[string]any{"subtype": "initialize", "hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"hookCallbackIds": []string{preToolUseHook}}}}})
	s.set(p)
	tr.p = p
	return !resume, nil
}

// modeArgs are the flags that carry kz's mode to Claude. Claude's own
// permission mode is always one that asks, so that every tool call Claude
// does not consider harmless reaches kz's gate, whatever kz's permission
// mode is: yolo is decided by kz, never by Claude.
//
// Every memory file (CLAUDE.md, AGENTS.md, GEMINI.md, kz's .kz/ and user
// files) is appended to its system prompt, so that it works under the
// same rules as every other runtime: with --setting-sources user (see
// baseArgs) Claude Code 2.1.197 reads no project CLAUDE.md itself
// (TestRealMemoryFilesReachTheModelOnce). The environment block is left
// out: Claude Code states the OS, date, directory and git status itself.
func (r *Runtime) modeArgs(t *engine.Turn) []string {
	var a []string
	var appendix []string
	switch t.Mode {
	case engine.ModeAnalysisOnly:
		a = []string{"--permission-mode", "plan", "--disallowedTools", "Bash,Edit,Write,MultiEdit,NotebookEdit"}
	case engine.ModePatchProposal:
		a = []string{"--permission-mode", "default", "--disallowedTools", "Edit,Write,MultiEdit,NotebookEdit"}
		if r.cfg.ProposalPrompt != "" {
			appendix = append(appendix, r.cfg.ProposalPrompt)
		}
	default:
		a = []string{"--permission-mode", "default"}
	}
	if mem := memory.Render(engine.TurnContext{Memory: t.Context.Memory}, "", func(engine.MemoryFile) bool { return true }); mem != "" {
		appendix = append(appendix, mem)
	}
	if len(appendix) > 0 {
		a = append(a, "--append-system-prompt", strings.Join(appendix, "\n\n"))
	}
	return a
}

// loop maps the CLI's lines to events until the turn's result.
func (tr *turnRun) loop(ctx context.Context) (engine.Result, error) {
	graceful := tr.t.Graceful
	for {
		select {
		case m, ok := <-tr.p.msgs:
			if !ok {
				tr.eof = true
				return tr.exited(ctx)
			}
			if m.Type == "result" {
				tr.endPerms()
				return tr.finish(m)
			}
			tr.handle(ctx, m)
		case <-graceful:
			graceful = nil
			tr.interrupt()
		case <-ctx.Done():
			if tr.p.results.Load() > tr.resultsBefore {
				// The CLI ended the turn before the stop came (select
				// picks at random among ready cases): the turn is over
				// and the idle process must live on, not be killed.
				return tr.settle(ctx)
			}
			return tr.abort(ctx)
		}
	}
}

// settle finishes a turn whose result line the reader has already taken
// from the CLI, though kz was told to stop: it reads the lines before the
// result as the turn's own and ends with the result, so the turn reports
// what the CLI did and its process stays for the next turn.
func (tr *turnRun) settle(ctx context.Context) (engine.Result, error) {
	for m := range tr.p.msgs {
		if m.Type == "result" {
			tr.endPerms()
			return tr.finish(m)
		}
		tr.handle(ctx, m)
	}
	// Not reached: the reader counts a result only when it hands it over,
	// and only a stop kz asked for lets it drop one.
	tr.eof = true
	return tr.exited(ctx)
}

// interrupt asks the CLI to stop at once but stay alive: it withdraws
// pending permission requests, stops a running tool and ends the turn with
// an interrupted result.
func (tr *turnRun) interrupt() {
	if tr.interrupted {
		return
	}
	tr.interrupted = true
	tr.rt.log.Debug("claude: sending interrupt")
	if _, _, err := tr.p.control(map[string]any{"subtype": "interrupt"}); err != nil {
		tr.rt.log.Warn("claude: sending interrupt failed", "err", err)
	}
}

// abort is the immediate interrupt: pending requests are answered with
// deny, then the process group gets SIGINT and, after the grace period,
// SIGKILL. When the graceful interrupt was sent already (the person
// pressed esc a second time) the CLI had its chance to stop: the group and
// every marked descendant get SIGKILL at once. The next turn resumes the
// Claude session in a new process.
func (tr *turnRun) abort(ctx context.Context) (engine.Result, error) {
	tr.endPerms()
	if tr.interrupted {
		tr.p.killNow()
	} else {
		tr.p.kill(tr.rt.cfg.KillGrace)
	}
	return engine.Result{Status: engine.StatusInterrupted, Model: tr.model, NativeID: tr.p.sessionID},
		tr.rt.errorf(engine.ErrInterrupted, tr.model, context.Cause(ctx), "interrupted")
}

// exited handles the CLI's end before its result.
func (tr *turnRun) exited(ctx context.Context) (engine.Result, error) {
	tr.endPerms()
	if ctx.Err() != nil {
		return tr.abort(ctx)
	}
	// The turn was cut short, not answered wrongly: it ends interrupted,
	// with the crash as its error (which the failover chain may act on).
	return engine.Result{Status: engine.StatusInterrupted, Model: tr.model, NativeID: tr.p.sessionID},
		tr.rt.errorf(engine.ErrCrashed, tr.model, nil, "%s in the middle of a turn", tr.p.exitText())
}

// endPerms withdraws every pending permission request and waits for their
// goroutines. Requests the CLI still waits for are answered with deny.
func (tr *turnRun) endPerms() {
	tr.permMu.Lock()
	for _, pp := range tr.perms {
		pp.cancel()
	}
	tr.permMu.Unlock()
	tr.permWG.Wait()
}

// handle maps one line (anything but a result) to events. Unknown kinds
// are logged and skipped: a newer CLI must never break a turn.
func (tr *turnRun) handle(ctx context.Context, m wireMsg) {
	switch m.Type {
	case "system":
		tr.system(m)
	case "assistant":
		tr.assistant(m)
	case "user":
		tr.user(m)
	case "stream_event":
		tr.stream(m)
	case "control_request":
		tr.controlRequest(ctx, m)
	case "control_cancel_request":
		tr.permMu.Lock()
		pp := tr.perms[m.RequestID]
		if pp != nil {
			pp.byCLI = true
			pp.cancel()
		}
		tr.permMu.Unlock()
		if pp != nil {
			// The withdrawn request is closed (its decision logged) before
			// the lines after the cancel are handled: the CLI reports the
			// tool call's end right after it, often in the same read.
			select {
			case <-pp.done:
			case <-time.After(withdrawWait):
			}
		}
	case "keep_alive":
	default:
		tr.rt.log.Info("claude: skipping unknown message kind", "type", m.Type, "subtype", m.Subtype)
	}
}

func (tr *turnRun) system(m wireMsg) {
	switch m.Subtype {
	case "init":
		tr.p.sessionID, tr.p.gotInit = m.SessionID, true
		tr.t.Emit(engine.Event{Type: engine.EventSessionStarted, NativeID: m.SessionID, Model: m.Model,
			Tools: m.Tools, PermissionMode: m.PermissionMode, Version: m.Version})
	case "permission_denied":
		// A denial by Claude's own rules: no request reached kz.
		var msg string
		_ = json.Unmarshal(m.Message, &msg)
		tr.noteDenied(m.ToolUseID)
		tr.t.Emit(engine.Event{Type: engine.EventPermissionDecided, ToolCallID: m.ToolUseID, Tool: m.ToolName,
			Decision: engine.DecisionDeny, Stage: "claude", Reason: msg})
	case "api_retry":
		status := 0
		if m.ErrorStatus != nil {
			status = *m.ErrorStatus
		}
		tr.rt.log.Info("claude: API retry", "attempt", m.Attempt, "max", m.MaxRetries, "status", status, "error", m.Error)
	case "status", "thinking_tokens", "task_started", "task_updated", "task_notification", "compact_boundary", "hook_response":
	default:
		tr.rt.log.Info("claude: skipping unknown system message", "subtype", m.Subtype)
	}
}

func (tr *turnRun) assistant(m wireMsg) {
	var msg apiMessage
	if err := json.Unmarshal(m.Message, &msg); err != nil {
		tr.rt.log.Warn("claude: malformed assistant message", "err", err)
		return
	}
	if msg.Model == "<synthetic>" {
		// An API error rendered as a message; the result carries it.
		return
	}
	if msg.Model != "" {
		tr.lastModel = msg.Model
	}
	sub := m.parent() != ""
	for _, b := range blocks(msg.Content) {
		switch b.Type {
		case "text":
			if !sub && b.Text != "" {
				tr.t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: b.Text, Model: msg.Model})
			}
		case "thinking":
			if !sub && !tr.streamedThinking && b.Thinking != "" {
				tr.t.Emit(engine.Event{Type: engine.EventReasoningDelta, Text: b.Thinking, Model: msg.Model})
			}
			tr.streamedThinking = false
		case "tool_use":
			tr.toolUse(b)
		}
	}
}

func (tr *turnRun) toolUse(b contentBlock) {
	in := decodeInput(b.Input)
	tc := toolCall{name: b.Name, input: b.Input}
	switch b.Name {
	case "Bash":
		tc.command = in.Command
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		tc.path = tr.resolve(in.pathArg())
	}
	tr.tools[b.ID] = tc
	tr.t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: b.ID, Tool: b.Name, Input: b.Input})
	if tc.command != "" {
		tr.t.Emit(engine.Event{Type: engine.EventCommandStarted, ToolCallID: b.ID, Tool: b.Name, Command: tc.command})
	}
}

func (tr *turnRun) user(m wireMsg) {
	var msg apiMessage
	if err := json.Unmarshal(m.Message, &msg); err != nil {
		tr.rt.log.Warn("claude: malformed user message", "err", err)
		return
	}
	for _, b := range blocks(msg.Content) {
		if b.Type != "tool_result" {
			// Interrupt markers, subagent prompts and replays are Claude's
			// bookkeeping, not the person's words.
			continue
		}
		tc, ok := tr.tools[b.ToolUseID]
		delete(tr.tools, b.ToolUseID)
		out := contentText(b.Content)
		ev := engine.Event{Type: engine.EventToolCallFinished, ToolCallID: b.ToolUseID, Tool: tc.name, Input: tc.input,
			Output: out, IsError: b.IsError}
		if b.IsError && tr.interrupted && isRejection(m.ToolUseResult) {
			ev.Status = engine.ToolStatusInterrupted
		}
		if !ok {
			tr.rt.log.Info("claude: tool result for an unknown tool call", "tool_use_id", b.ToolUseID)
		}
		tr.t.Emit(ev)
		switch {
		case tc.command != "":
			code := exitCode(b.IsError, out)
			tr.t.Emit(engine.Event{Type: engine.EventCommandFinished, ToolCallID: b.ToolUseID, Tool: tc.name,
				Command: tc.command, ExitCode: code, Output: out, IsError: b.IsError})
		case tc.path != "" && !b.IsError && tc.name != "NotebookEdit":
			path, diff := editedDiff(m.ToolUseResult, tc.path, tr.workspace())
			tr.t.Emit(engine.Event{Type: engine.EventFileEdited, ToolCallID: b.ToolUseID, Tool: tc.name, Path: path, Diff: diff})
		}
	}
}

func (tr *turnRun) stream(m wireMsg) {
	if m.parent() != "" {
		// Subagent output is not part of the main conversation.
		return
	}
	var ev streamEvent
	if err := json.Unmarshal(m.Event, &ev); err != nil {
		tr.rt.log.Warn("claude: malformed stream_event", "err", err)
		return
	}
	switch ev.Type {
	case "message_start":
		// Each model request is a kz cycle; over the limit, the turn is
		// stopped like a graceful interrupt and ends with max_cycles.
		if err := tr.t.StartCycle(); err != nil && tr.limitErr == nil {
			tr.limitErr = err
			tr.interrupt()
		}
	case "content_block_start":
		if ev.ContentBlock != nil && ev.ContentBlock.Type == "thinking" {
			tr.streamedThinking = false
		}
	case "content_block_delta":
		if ev.Delta == nil {
			return
		}
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				tr.t.Emit(engine.Event{Type: engine.EventTextDelta, Text: ev.Delta.Text})
			}
		case "thinking_delta":
			if ev.Delta.Thinking != "" {
				tr.streamedThinking = true
				tr.t.Emit(engine.Event{Type: engine.EventReasoningDelta, Text: ev.Delta.Thinking})
			}
		}
	}
}

// withdrawWait bounds how long a control_cancel_request waits for the
// withdrawn request's decision, which comes as soon as the request's
// context is cancelled.
const withdrawWait = 2 * time.Second

// preToolUseHook is the id of the PreToolUse hook kz registers at
// initialize. Claude lets some calls through without asking (commands it
// deems read-only such as `sleep` or `cat`, reads inside the workspace);
// the hook answers "ask" for every call, so each one reaches kz's gate as a
// can_use_tool request.
const preToolUseHook = "kz_pre_tool_use"

func (tr *turnRun) controlRequest(ctx context.Context, m wireMsg) {
	var req canUseTool
	err := json.Unmarshal(m.Request, &req)
	if err == nil && req.Subtype == "hook_callback" {
		tr.preToolUse(ctx, m)
		return
	}
	if err != nil || req.Subtype != "can_use_tool" {
		// hook callbacks and MCP messages are not something kz offers; an
		// error answer keeps the CLI from waiting forever.
		tr.rt.log.Info("claude: refusing unsupported control request", "subtype", req.Subtype)
		_ = tr.p.send(map[string]any{"type": "control_response",
			"response": map[string]any{"subtype": "error", "request_id": m.RequestID, "error": "kz does not support " + req.Subtype}})
		return
	}
	pctx, cancel := context.WithCancel(ctx)
	pp := &pendingPerm{cancel: cancel, done: make(chan struct{})}
	tr.permMu.Lock()
	tr.perms[m.RequestID] = pp
	tr.permMu.Unlock()
	tr.permWG.Add(1)
	go func() {
		defer tr.permWG.Done()
		res := tr.decide(pctx, req)
		defer close(pp.done)
		tr.permMu.Lock()
		withdrawn := pp.byCLI
		delete(tr.perms, m.RequestID)
		if res.Behavior == "deny" || withdrawn {
			// kz's gate or the session already logged this decision.
			tr.denied[req.ToolUseID] = true
		}
		tr.permMu.Unlock()
		cancel()
		if withdrawn {
			return
		}
		if err := tr.p.send(controlResponseLine(m.RequestID, res)); err != nil {
			tr.rt.log.Warn("claude: answering a permission request failed", "err", err)
		}
	}()
}

// preToolUse answers kz's PreToolUse hook, which Claude calls before every
// tool call, even those it lets through without asking (commands it deems
// read-only such as `sleep` or `cat`, reads inside the workspace). kz's
// gate judges the call there, PreToolUse hooks included: a call the gate
// allows by itself is allowed ("allow"), logged and checkpointed as any
// other, and Claude runs it without the can_use_tool request it would
// otherwise send (some 30 ms of Claude's own per call). Any other call is
// answered "ask", so that it reaches kz as can_use_tool, where the gate's
// verdict, kept by the session, asks the person or denies it. That holds
// for a Bash command the person allowed for the session too: the gate
// keeps that grant and allows the command again, unless a hook (or a
// rule added since) says otherwise.
//
// The gate may run the person's hooks, which take their time: it runs
// off the turn's loop, as can_use_tool's decision does.
func (tr *turnRun) preToolUse(ctx context.Context, m wireMsg) {
	tr.permWG.Add(1)
	go func() {
		defer tr.permWG.Done()
		decision, reason := "ask", "kz decides every tool call"
		if tr.allowEarly(ctx, m) {
			decision, reason = "allow", "kz's gate allowed this call"
		}
		err := tr.p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success",
			"request_id": m.RequestID, "response": map[string]any{"continue": true, "hookSpecificOutput": map[string]any{
				"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}}}})
		if err != nil {
			tr.rt.log.Warn("claude: answering a hook failed", "err", err)
		}
	}()
}

// hookCallback is the request of kz's PreToolUse hook callback.
type hookCallback struct {
	Input struct {
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
		ToolUseID string          `json:"tool_use_id"`
	} `json:"input"`
	ToolUseID string `json:"tool_use_id"`
}

// allowEarly reports whether kz's gate allows the call of hook request m
// by itself, and if so has logged and checkpointed it. Whatever decide
// would refuse or handle apart (questions, plan mode, a mode's limits) is
// left to can_use_tool.
func (tr *turnRun) allowEarly(ctx context.Context, m wireMsg) bool {
	var hc hookCallback
	if err := json.Unmarshal(m.Request, &hc); err != nil {
		return false
	}
	req := canUseTool{ToolName: hc.Input.ToolName, Input: hc.Input.ToolInput, ToolUseID: hc.Input.ToolUseID}
	if req.ToolUseID == "" {
		req.ToolUseID = hc.ToolUseID
	}
	if req.ToolName == "" || req.ToolUseID == "" || req.ToolName == "AskUserQuestion" || req.ToolName == "ExitPlanMode" {
		return false
	}
	pr, _ := tr.permissionRequest(req)
	if (tr.t.Mode == engine.ModeAnalysisOnly && (pr.Write || pr.Command != "")) ||
		(tr.t.Mode == engine.ModePatchProposal && pr.Write) {
		return false
	}
	if _, ok := tr.t.DecideUnasked(ctx, pr); !ok {
		return false
	}
	tr.permMu.Lock()
	tr.early[req.ToolUseID] = req
	tr.permMu.Unlock()
	return true
}

func (tr *turnRun) noteDenied(toolUseID string) {
	tr.permMu.Lock()
	tr.denied[toolUseID] = true
	tr.permMu.Unlock()
}

// permissionDenial is one entry of the result's permission_denials.
type permissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// reconcileDenials logs the calls the result lists as denied that kz has
// no decision for (Claude refused them on its own, without a request or a
// permission_denied line), so that kz's log names every denial of the turn.
// Denials kz made are already permission_decided events and are not
// repeated. It returns every listed denial for the turn's result.
func (tr *turnRun) reconcileDenials(raw []json.RawMessage) []engine.PermissionDenial {
	var out []engine.PermissionDenial
	for _, r := range raw {
		var d permissionDenial
		if json.Unmarshal(r, &d) != nil || d.ToolUseID == "" {
			continue
		}
		in := decodeInput(d.ToolInput)
		out = append(out, engine.PermissionDenial{Tool: d.ToolName, ToolCallID: d.ToolUseID,
			Input: engine.DenialInput(in.Command, in.pathArg(), d.ToolInput)})
		tr.permMu.Lock()
		known := tr.denied[d.ToolUseID]
		tr.denied[d.ToolUseID] = true
		tr.permMu.Unlock()
		if !known {
			tr.t.Emit(engine.Event{Type: engine.EventPermissionDecided, ToolCallID: d.ToolUseID, Tool: d.ToolName,
				Input: d.ToolInput, Decision: engine.DecisionDeny, Stage: "claude", Reason: "denied by Claude Code"})
		}
	}
	return out
}

// finish maps the result line to usage_updated and the turn's result.
func (tr *turnRun) finish(m wireMsg) (engine.Result, error) {
	denials := tr.reconcileDenials(m.PermissionDenials)
	var u engine.Usage
	if m.Usage != nil {
		u = engine.Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
			CacheReadTokens: m.Usage.CacheReadInputTokens, CacheWriteTokens: m.Usage.CacheCreationInputTokens}
	}
	// total_cost_usd is the CLI process's running total (observed with
	// 2.1.197: 0.00065 after one turn, 0.0013 after two), while usage is
	// the turn's own; the turn's cost is the difference.
	cost := m.TotalCostUSD - tr.p.costBase
	if cost < 0 {
		cost = m.TotalCostUSD
	}
	tr.p.costBase = m.TotalCostUSD
	if !u.IsZero() || cost > 0 {
		tr.t.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &u, CostUSD: cost})
	}
	model := tr.lastModel
	if model == "" {
		model = tr.model
	}
	res := engine.Result{Output: m.Result, Usage: u, CostUSD: cost, Cycles: m.NumTurns, Model: model, NativeID: m.SessionID,
		PermissionDenials: denials}
	switch {
	case tr.limitErr != nil:
		res.Status = engine.StatusMaxCycles
		return res, tr.limitErr
	case m.Subtype == "success" && !m.IsError:
		res.Status = engine.StatusComplete
		return res, nil
	case m.Subtype == "success":
		res.Status = engine.StatusError
		return res, tr.apiError(m)
	case m.Subtype == "error_max_turns":
		res.Status = engine.StatusMaxCycles
		return res, nil
	case m.Subtype == "error_during_execution" && tr.interrupted:
		res.Status = engine.StatusInterrupted
		return res, nil
	case m.Subtype == "error_during_execution":
		// Nobody in kz interrupted: the CLI was stopped from outside.
		res.Status = engine.StatusError
		return res, tr.rt.errorf(engine.ErrCrashed, model, nil, "claude stopped the turn (%s): %s", m.TerminalReason, strings.Join(m.Errors, "; "))
	default:
		res.Status = engine.StatusError
		return res, tr.rt.errorf(engine.ErrInternal, model, nil, "claude ended the turn with %s: %s", m.Subtype, strings.Join(m.Errors, "; "))
	}
}

// apiError classifies an API failure reported in a result line, so that
// the failover chain retries what another runtime could serve.
func (tr *turnRun) apiError(m wireMsg) error {
	kind := engine.ErrCrashed
	text := strings.ToLower(m.Result)
	status := 0
	if m.APIErrorStatus != nil {
		status = *m.APIErrorStatus
	}
	switch {
	case status == 401 || status == 403 || strings.Contains(text, "invalid api key") || strings.Contains(text, "authentication"):
		kind = engine.ErrAuth
	case status == 429 || strings.Contains(text, "rate limit"):
		kind = engine.ErrRateLimit
	case status == 529 || status >= 500 || strings.Contains(text, "overloaded"):
		kind = engine.ErrOverloaded
	case status == 413 || strings.Contains(text, "prompt is too long") || strings.Contains(text, "context window"):
		kind = engine.ErrContextTooLong
	case status >= 400:
		kind = engine.ErrBadRequest
	}
	model := tr.lastModel
	if model == "" {
		model = tr.model
	}
	return tr.rt.errorf(kind, model, errors.New(m.Result), "%s", m.Result)
}

func (tr *turnRun) workspace() string { return tr.rt.workspaceFor(tr.t) }

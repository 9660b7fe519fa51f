package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/workspace"
)

// protocolVersion is the ACP version kz speaks.
const protocolVersion = 1

// turnRun is one turn on one agent process.
type turnRun struct {
	rt    *Runtime
	t     *engine.Turn
	a     *agent
	c     *jsonrpc.Conn
	model string
	dir   string
	// mode is the session mode kz asks for in this turn ("" keeps the
	// agent's own), as session_started reports it.
	mode string
	// keep says the turn left the agent idle (its prompt answered, or no
	// prompt sent), so that the next turn of the session can use it.
	keep bool
	ws   *workspace.Workspace
	// tenv is the environment kz's file tools run in, opened on the first
	// file request of the agent.
	tenv *tools.Env
	// nwrites numbers the delegated writes that came without a permission
	// request, to name their snapshots.
	nwrites int

	sessionID string
	// primed says the session is new and its first prompt renders kz's
	// transcript, so the history's images go with it.
	primed bool
	// replaying is set while session/load runs: the agent then replays the
	// old conversation as updates, which kz already has.
	replaying bool
	// msg collects the agent message being streamed; output is the last
	// complete one.
	msg    strings.Builder
	output string
	tools  map[string]*toolState
	// allowedWrites maps the workspace-relative path of an edit the person allowed
	// through session/request_permission to its new content, so that the
	// fs/write_text_file carrying exactly that content is not asked again.
	allowedWrites map[string]allowedWrite
	// written holds the paths kz wrote for the agent (file_edited already
	// emitted), so that the tool result's diff is not reported twice.
	written map[string]bool
	// stopping is set once kz sent session/cancel.
	stopping bool
}

// allowedWrite is an edit the person allowed: the content the agent will
// write, the content kz writes instead when the person kept only part of
// the edit (nil for all of it), and the tool call.
type allowedWrite struct {
	content string
	kept    []byte
	toolID  string
}

// toolState is what kz knows of one tool call.
type toolState struct {
	call     toolCall
	started  bool
	finished bool
}

// toolCall is an ACP ToolCall / ToolCallUpdate (fields are optional in
// updates and merged).
type toolCall struct {
	ToolCallID string          `json:"toolCallId"`
	Title      string          `json:"title,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Status     string          `json:"status,omitempty"`
	Content    []toolContent   `json:"content,omitempty"`
	Locations  []location      `json:"locations,omitempty"`
	RawInput   json.RawMessage `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage `json:"rawOutput,omitempty"`
}

type toolContent struct {
	Type    string `json:"type"`
	Content *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content,omitempty"`
	Path    string  `json:"path,omitempty"`
	OldText *string `json:"oldText,omitempty"`
	NewText string  `json:"newText,omitempty"`
}

type location struct {
	Path string `json:"path"`
}

type initResult struct {
	ProtocolVersion int `json:"protocolVersion"`
	AuthMethods     []struct {
		ID string `json:"id"`
	} `json:"authMethods"`
	AgentInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo"`
	AgentCapabilities struct {
		LoadSession bool `json:"loadSession"`
		// PromptCapabilities.Image says session/prompt takes image
		// content blocks; without it kz sends none.
		PromptCapabilities struct {
			Image bool `json:"image"`
		} `json:"promptCapabilities"`
		// MCPCapabilities.HTTP says session/new and session/load take
		// HTTP MCP servers; stdio ones every agent must take.
		MCPCapabilities struct {
			HTTP bool `json:"http"`
		} `json:"mcpCapabilities"`
	} `json:"agentCapabilities"`
}

type sessionResult struct {
	SessionID string `json:"sessionId"`
	Modes     *struct {
		AvailableModes []struct {
			ID string `json:"id"`
		} `json:"availableModes"`
		CurrentModeID string `json:"currentModeId"`
	} `json:"modes"`
	Models *struct {
		AvailableModels []struct {
			ModelID string `json:"modelId"`
		} `json:"availableModels"`
		CurrentModelID string `json:"currentModelId"`
	} `json:"models"`
}

func (s sessionResult) hasMode(id string) bool {
	if s.Modes == nil {
		return false
	}
	return slices.ContainsFunc(s.Modes.AvailableModes, func(m struct {
		ID string `json:"id"`
	}) bool {
		return m.ID == id
	})
}

func (tr *turnRun) fail(kind engine.ErrorKind, err error, format string, args ...any) (engine.Result, error) {
	return engine.Result{Status: engine.StatusError, Model: tr.model, NativeID: tr.sessionID},
		tr.rt.errorf(kind, tr.model, err, format, args...)
}

func (tr *turnRun) interrupted(ctx context.Context) (engine.Result, error) {
	return engine.Result{Status: engine.StatusInterrupted, Model: tr.model, NativeID: tr.sessionID, Output: tr.output},
		tr.rt.errorf(engine.ErrInterrupted, tr.model, context.Cause(ctx), "interrupted")
}

// stepFailed classifies a failure of a request before the prompt.
func (tr *turnRun) stepFailed(ctx context.Context, step string, err error) (engine.Result, error) {
	switch {
	case ctx.Err() != nil:
		return tr.interrupted(ctx)
	case tr.c.Exited() || isExited(err):
		<-tr.c.Done
		kind := agentcli.Classify(tr.c.Stderr.String())
		if !kind.Retryable() {
			kind = engine.ErrCrashed
		}
		return tr.fail(kind, err, "%s during %s", tr.c.ExitText(tr.rt.cfg.Name), step)
	case errors.Is(err, context.DeadlineExceeded):
		return tr.fail(engine.ErrCrashed, err, "the agent did not answer %s within %s", step, tr.rt.cfg.HandshakeTimeout)
	case step == "authenticate":
		return tr.fail(engine.ErrAuth, err, "authentication with %q failed: %v", tr.rt.cfg.AuthMethod, err)
	}
	return tr.fail(agentcli.Classify(err.Error()), err, "%s failed: %v", step, err)
}

func isExited(err error) bool {
	var re *jsonrpc.Error
	return errors.As(err, &re) && re.Message == "the CLI exited"
}

// await sends a request and waits for its result while handling what the
// agent sends meanwhile (updates, file requests), in order.
func (tr *turnRun) await(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, ch, err := tr.c.Begin(method, params)
	if err != nil {
		return nil, err
	}
	for {
		select {
		case m := <-ch:
			tr.drain(ctx)
			if m.Error != nil {
				return nil, m.Error
			}
			return m.Result, nil
		case m, ok := <-tr.c.In:
			if !ok {
				tr.c.Forget(id)
				return nil, &jsonrpc.Error{Code: -32000, Message: "the CLI exited"}
			}
			tr.handle(ctx, m)
		case <-ctx.Done():
			tr.c.Forget(id)
			return nil, ctx.Err()
		}
	}
}

// drain handles what the reader queued before a response: every message
// already in the channel was read before it.
func (tr *turnRun) drain(ctx context.Context) {
	for {
		select {
		case m, ok := <-tr.c.In:
			if !ok {
				return
			}
			tr.handle(ctx, m)
		default:
			return
		}
	}
}

// cancelWait bounds how long an immediate cancel waits for the agent to
// end the prompt itself before its processes are killed.
const cancelWait = 300 * time.Millisecond

// Bounds of the wait for a loaded session's replay: the replay is over
// once the agent has been quiet for replayQuiet, and kz waits at most
// replayMax for that.
const (
	replayQuiet = 150 * time.Millisecond
	replayMax   = 3 * time.Second
)

// awaitReplayEnd skips the updates replaying a loaded session. ACP says
// the replay comes before the session/load result, but Gemini CLI 0.61
// starts it without waiting and answers at once, so replayed messages
// arrive after the result; counted as the new turn's, they would repeat
// the old answers. Requests of the agent are still served.
func (tr *turnRun) awaitReplayEnd(ctx context.Context) {
	limit := time.NewTimer(replayMax)
	defer limit.Stop()
	quiet := time.NewTimer(replayQuiet)
	defer quiet.Stop()
	for {
		select {
		case m, ok := <-tr.c.In:
			if !ok {
				return
			}
			tr.handle(ctx, m)
			if !quiet.Stop() {
				<-quiet.C
			}
			quiet.Reset(replayQuiet)
		case <-quiet.C:
			return
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// run serves the turn on slot s: it makes sure an agent process runs,
// opens, loads or continues the agent's session and sends the prompt.
func (tr *turnRun) run(ctx context.Context, s *slot) (engine.Result, error) {
	hctx, cancel := context.WithTimeout(ctx, tr.rt.cfg.HandshakeTimeout)
	defer cancel()
	if a := s.a; a != nil && (!a.alive() || a.dir != tr.dir) {
		dead := !a.alive()
		if dead {
			// What it left behind goes at once; the new agent loads its
			// session (or is primed) below, so the conversation goes on.
			tr.rt.log.Info("acp: the agent process ended since the last turn; starting another", "session", a.sessionID)
		}
		a.stop(dead, tr.rt.cfg.KillGrace)
		s.a = nil
	}
	if s.a == nil {
		a, err := tr.rt.spawn(s, tr.t, tr.dir)
		if err != nil {
			return engine.Result{Status: engine.StatusError, Model: tr.model},
				tr.rt.errorf(engine.ErrCrashed, tr.model, err, "start agent: %v", err)
		}
		s.a = a
		tr.a, tr.c = a, a.c
		// The agent is started: the workspace's state is recorded while
		// it boots and answers the handshake (engine.EarlyStarter).
		tr.t.Record()
		if res, err := tr.handshake(ctx, hctx); err != nil {
			return res, err
		}
	} else {
		tr.a, tr.c = s.a, s.a.c
		tr.discardStale()
	}
	if len(tr.t.Images) > 0 && !tr.a.init.AgentCapabilities.PromptCapabilities.Image {
		// Checked before a session is opened or anything sent. From now
		// on the runtime declares no vision, so the next message with
		// images fails before its turn starts.
		tr.rt.noImages.Store(true)
		tr.keep = true
		return engine.Result{Status: engine.StatusError, Model: tr.model}, tr.rt.errorf(engine.ErrCapability, tr.model, nil,
			"agent %s does not take images (its initialize result has no promptCapabilities.image): switch to a runtime with vision, or send the message without images", tr.rt.cfg.Name)
	}
	prompt, res, err := tr.openSession(ctx, hctx)
	if err != nil {
		return res, err
	}
	if res, err := tr.selectModelAndMode(ctx, hctx); err != nil {
		return res, err
	}
	tr.t.Emit(engine.Event{Type: engine.EventSessionStarted, NativeID: tr.sessionID, Model: tr.model,
		Version: tr.a.init.AgentInfo.Version, PermissionMode: tr.mode})
	tr.noticeWithheldMCP()

	if err := tr.t.StartCycle(); err != nil {
		// Nothing was sent: the agent is as idle as it was.
		tr.keep = true
		return engine.Result{Status: engine.StatusMaxCycles, Model: tr.model, NativeID: tr.sessionID}, err
	}
	return tr.prompt(ctx, prompt)
}

// handshake initializes and authenticates a new agent process.
func (tr *turnRun) handshake(ctx, hctx context.Context) (engine.Result, error) {
	// Only writes are delegated: with read delegation Gemini CLI 0.61
	// fails to create new files (protocol notes §6), and reads of the
	// agent's own are harmless to the workspace.
	res, err := tr.await(hctx, "initialize", map[string]any{
		"protocolVersion":    protocolVersion,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": true}, "terminal": false},
		"clientInfo":         map[string]string{"name": "kz", "version": "0.1.0"},
	})
	if err != nil {
		return tr.stepFailed(ctx, "initialize", err)
	}
	if err := json.Unmarshal(res, &tr.a.init); err != nil {
		return tr.fail(engine.ErrProtocol, err, "malformed initialize result: %v", err)
	}
	if m := tr.rt.cfg.AuthMethod; m != "" {
		if _, err := tr.await(hctx, "authenticate", map[string]string{"methodId": m}); err != nil {
			return tr.stepFailed(ctx, "authenticate", err)
		}
	}
	return engine.Result{}, nil
}

// discardStale drops what a kept agent sent after the last turn ended (a
// late update, a command list): it belongs to no turn. A request is
// refused, since nobody is there to decide it.
func (tr *turnRun) discardStale() {
	for {
		select {
		case m, ok := <-tr.c.In:
			if !ok {
				return
			}
			if m.ID != nil {
				_ = tr.c.ReplyError(m.ID, codeInternal, "no turn is running")
				continue
			}
			tr.rt.log.Debug("acp: skipping a message sent between turns", "method", m.Method)
		default:
			return
		}
	}
}

// openSession makes the session the prompt goes to, and returns the prompt
// to send. The agent's open session continues as it is when kz continues
// it (nothing happened on another runtime since); otherwise the stored
// session is loaded where the agent offers session/load, and else, or when
// the load fails, a new session is primed with kz's transcript.
func (tr *turnRun) openSession(ctx, hctx context.Context) (string, engine.Result, error) {
	a := tr.a
	id := tr.t.NativeID
	if id != "" && id == a.sessionID {
		tr.sessionID = id
		return tr.t.Prompt, engine.Result{}, nil
	}
	var sess sessionResult
	if id != "" && a.init.AgentCapabilities.LoadSession {
		tr.replaying = true
		res, err := tr.await(hctx, "session/load", map[string]any{"sessionId": id, "cwd": tr.dir, "mcpServers": tr.mcpServers()})
		if err == nil {
			tr.awaitReplayEnd(hctx)
		}
		tr.replaying = false
		switch {
		case err == nil:
			_ = json.Unmarshal(res, &sess)
			sess.SessionID = id
			tr.opened(sess)
			return tr.t.Prompt, engine.Result{}, nil
		case ctx.Err() != nil || tr.c.Exited():
			res, err := tr.stepFailed(ctx, "session/load", err)
			return "", res, err
		default:
			tr.rt.log.Info("acp: session/load failed, starting a new session primed with kz's transcript", "session", id, "err", err)
		}
	}
	res, err := tr.await(hctx, "session/new", map[string]any{"cwd": tr.dir, "mcpServers": tr.mcpServers()})
	if err != nil {
		res, err := tr.stepFailed(ctx, "session/new", err)
		return "", res, err
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		res, err := tr.fail(engine.ErrProtocol, err, "session/new result without a session id: %s", proc.Clip(string(res), 300))
		return "", res, err
	}
	tr.opened(sess)
	tr.primed = true
	return tr.memoryPrefix() + agentcli.PrimePrompt(tr.t.History, tr.t.Prompt, agentcli.PrimeBudget), engine.Result{}, nil
}

// mcpServers is the mcpServers parameter of a session this turn opens:
// kz's MCP servers, rendered for this agent's capabilities.
func (tr *turnRun) mcpServers() []mcpServer {
	if tr.a.trust.untrusted() {
		// An untrusted agent starts no MCP server (trust.go).
		return []mcpServer{}
	}
	return acpMCPServers(tr.rt.cfg.MCPServers, os.Environ(), tr.a.init.AgentCapabilities.MCPCapabilities.HTTP, tr.rt.log)
}

// memoryPrefix is what a new session's first prompt starts with: the
// memory files the agent does not read itself, since ACP has no system
// prompt of the client's. A continued or loaded session had them in its
// first prompt already.
func (tr *turnRun) memoryPrefix() string {
	keep := func(engine.MemoryFile) bool { return true }
	// An agent kz keeps untrusted reads none of the project's memory
	// files: it gets them all from kz.
	if name := tr.rt.cfg.ReadsMemory; name != "" && !tr.a.trust.untrusted() {
		keep = memory.ReadBy(name, true)
	}
	mem := memory.Render(engine.TurnContext{Memory: tr.t.Context.Memory}, "", keep)
	if mem == "" {
		return ""
	}
	return strings.TrimLeft(mem, "\n") + "\n"
}

// opened records a session just created or loaded as the agent's own.
func (tr *turnRun) opened(sess sessionResult) {
	a := tr.a
	tr.rt.log.Debug("acp: opened a session", "session", sess.SessionID, "pid", a.c.Pid())
	a.sessionID, a.sess = sess.SessionID, sess
	a.model, a.mode, a.baseMode = "", "", ""
	if sess.Models != nil {
		a.model = sess.Models.CurrentModelID
	}
	if sess.Modes != nil {
		a.mode = sess.Modes.CurrentModeID
		a.baseMode = a.mode
	}
	tr.sessionID = sess.SessionID
}

// selectModelAndMode sets the turn's model and mode on the session where
// they differ from its current ones and the agent offers them. A turn
// that needs no special mode returns the session to the configured one,
// or to the mode it started in: a read-only plan mode set for an
// analysis-only turn must not outlive it, nor the reverse.
func (tr *turnRun) selectModelAndMode(ctx, hctx context.Context) (engine.Result, error) {
	a := tr.a
	if a.sess.Models != nil {
		switch {
		case tr.model == "":
			tr.model = a.model
		case tr.model != a.model:
			if _, err := tr.await(hctx, "session/set_model", map[string]string{"sessionId": tr.sessionID, "modelId": tr.model}); err != nil {
				tr.rt.log.Warn("acp: could not select the model", "model", tr.model, "err", err)
				tr.model = a.model
			} else {
				a.model = tr.model
			}
		}
	}
	tr.mode = tr.rt.cfg.SessionMode
	if tr.t.Mode == engine.ModeAnalysisOnly && a.sess.hasMode(tr.rt.cfg.PlanMode) {
		tr.mode = tr.rt.cfg.PlanMode
	}
	mode := tr.mode
	if mode == "" {
		mode = a.baseMode
	}
	if mode != "" && a.sess.hasMode(mode) && a.mode != mode {
		if _, err := tr.await(hctx, "session/set_mode", map[string]string{"sessionId": tr.sessionID, "modeId": mode}); err != nil {
			return tr.stepFailed(ctx, "session/set_mode", err)
		}
		a.mode = mode
	}
	return engine.Result{}, nil
}

type promptResult struct {
	StopReason string `json:"stopReason"`
	Meta       *struct {
		Quota *struct {
			TokenCount *struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			} `json:"token_count"`
		} `json:"quota"`
	} `json:"_meta"`
}

// prompt sends the prompt and maps what the agent sends until its result.
func (tr *turnRun) prompt(ctx context.Context, text string) (engine.Result, error) {
	// The agent started and opened its session while the workspace's
	// state was being recorded (StartsEarly); the prompt waits for it.
	if err := tr.t.Ready(ctx); err != nil {
		return engine.Result{Status: engine.StatusInterrupted}, err
	}
	_, ch, err := tr.c.Begin("session/prompt", map[string]any{"sessionId": tr.sessionID, "prompt": tr.promptBlocks(text)})
	if err != nil {
		return tr.stepFailed(ctx, "session/prompt", err)
	}
	graceful := tr.t.Graceful
	for {
		select {
		case <-ctx.Done():
			select {
			case m := <-ch:
				// The agent had answered the prompt before the stop
				// came (select picks at random among ready cases): the
				// turn is over and ends as the agent said.
				return tr.answered(ctx, m)
			default:
			}
			tr.cancel()
			// Give the agent a moment to stop its tools itself (Gemini
			// takes about 0.1 s); the caller then kills whatever is left,
			// well within the second a cancelled command may outlive the
			// cancel.
			t := time.NewTimer(min(tr.rt.cfg.KillGrace, cancelWait))
			select {
			case m := <-ch:
				// The agent ended the prompt itself, its tools stopped:
				// it stays for the next turn. An agent that does not
				// answer in time is killed with whatever it runs.
				tr.keep = m.Error == nil || !isExited(m.Error)
			case <-t.C:
			case <-tr.c.Done:
			}
			t.Stop()
			tr.flush(true)
			return tr.interrupted(ctx)
		case <-graceful:
			graceful = nil
			tr.cancel()
		case m, ok := <-tr.c.In:
			if !ok {
				select {
				case m := <-ch:
					// The agent answered the prompt, then its output
					// ended (it exited after the turn): the reader hands
					// the answer over before it closes In, and select
					// picks at random among ready cases. The turn ends
					// as the agent said; Run sees that it died.
					return tr.answered(ctx, m)
				default:
				}
				tr.flush(true)
				// A CLI that dies mid-turn cuts the turn short: it ends
				// interrupted, with the crash as its (retryable) error.
				res, err := tr.fail(engine.ErrCrashed, tr.c.WaitErr, "%s in the middle of a turn", tr.c.ExitText(tr.rt.cfg.Name))
				res.Status = engine.StatusInterrupted
				return res, err
			}
			tr.handle(ctx, m)
		case m := <-ch:
			return tr.answered(ctx, m)
		}
	}
}

// answered ends the turn with the agent's answer to the prompt, m: what
// it sent before the answer is handled first. The agent is idle again and
// stays for the next turn unless it died (which Run checks).
func (tr *turnRun) answered(ctx context.Context, m jsonrpc.Message) (engine.Result, error) {
	tr.drain(ctx)
	tr.flush(m.Error != nil && isExited(m.Error))
	tr.keep = true
	return tr.finish(m)
}

func (tr *turnRun) cancel() {
	tr.stopping = true
	if !tr.c.Exited() {
		_ = tr.c.Notify("session/cancel", map[string]string{"sessionId": tr.sessionID})
	}
}

func (tr *turnRun) finish(m jsonrpc.Message) (engine.Result, error) {
	if m.Error != nil {
		if isExited(m.Error) {
			// The reader fails the pending prompt before it closes In, so
			// a crash often arrives here: it cuts the turn short too.
			<-tr.c.Done
			res, err := tr.fail(engine.ErrCrashed, m.Error, "%s in the middle of a turn", tr.c.ExitText(tr.rt.cfg.Name))
			res.Status = engine.StatusInterrupted
			return res, err
		}
		msg := m.Error.Message
		if len(m.Error.Data) > 0 {
			msg += ": " + string(m.Error.Data)
		}
		return tr.fail(agentcli.Classify(msg), m.Error, "the agent failed the prompt: %s", msg)
	}
	var pr promptResult
	if err := json.Unmarshal(m.Result, &pr); err != nil {
		return tr.fail(engine.ErrProtocol, err, "malformed session/prompt result: %v", err)
	}
	if pr.Meta != nil && pr.Meta.Quota != nil && pr.Meta.Quota.TokenCount != nil {
		tc := pr.Meta.Quota.TokenCount
		tr.t.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &engine.Usage{InputTokens: tc.InputTokens, OutputTokens: tc.OutputTokens}})
	}
	res := engine.Result{Status: engine.StatusComplete, Output: tr.output, Model: tr.model, NativeID: tr.sessionID}
	switch pr.StopReason {
	case "cancelled":
		res.Status = engine.StatusInterrupted
	case "max_turn_requests":
		res.Status = engine.StatusMaxCycles
	case "refusal":
		return engine.Result{Status: engine.StatusError, Output: tr.output, Model: tr.model, NativeID: tr.sessionID},
			tr.rt.errorf(engine.ErrBadRequest, tr.model, nil, "the agent refused to continue")
	}
	return res, nil
}

// flush ends the agent message being streamed, if any. partial marks a
// message cut short by an interrupt or a crash.
func (tr *turnRun) flush(partial bool) {
	if tr.msg.Len() == 0 {
		return
	}
	text := tr.msg.String()
	tr.msg.Reset()
	tr.output = text
	tr.t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: text, Partial: partial})
}

// handle dispatches one message of the agent.
func (tr *turnRun) handle(ctx context.Context, m jsonrpc.Message) {
	if m.ID != nil {
		tr.request(ctx, m)
		return
	}
	if m.Method != "session/update" || tr.replaying {
		return
	}
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		tr.rt.log.Warn("acp: malformed session/update", "err", err)
		return
	}
	if tr.sessionID != "" && p.SessionID != "" && p.SessionID != tr.sessionID {
		return
	}
	tr.update(p.Update)
}

// promptBlocks is the session/prompt content: the text, then an ACP image
// block per image, sent only to an agent whose initialize declared
// promptCapabilities.image (run refuses images otherwise). A primed new
// session also gets the images of the history it is told about.
func (tr *turnRun) promptBlocks(text string) []map[string]string {
	blocks := []map[string]string{{"type": "text", "text": text}}
	if !tr.a.init.AgentCapabilities.PromptCapabilities.Image {
		return blocks
	}
	images := tr.t.Images
	if tr.primed {
		images = agentcli.PrimeImages(tr.t.History, images)
	}
	for _, im := range images {
		blocks = append(blocks, map[string]string{"type": "image", "mimeType": im.MediaType, "data": base64.StdEncoding.EncodeToString(im.Data)})
	}
	return blocks
}

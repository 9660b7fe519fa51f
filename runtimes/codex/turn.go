package codex

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools/mcp"
)

// turnRun is one turn on one CLI process.
type turnRun struct {
	rt    *Runtime
	t     *engine.Turn
	c     *jsonrpc.Conn
	model string
	dir   string

	threadID string
	turnID   string
	// items are the tool items started in this turn, by item id: a file
	// approval carries no diff, so it is taken from here.
	items map[string]*item
	// output is the last complete agent message.
	output string
	// failMsg is the last non-retried error Codex reported.
	failMsg string
	// stopping is set once kz asked Codex to stop the turn; approvals
	// still pending are then answered "cancel".
	stopping bool
	// cleaned receives the answer to thread/backgroundTerminals/clean once
	// kz asked for it.
	cleaned <-chan jsonrpc.Message
	// retries counts the retries Codex announced in this turn; gaveUp is
	// set once kz interrupted the turn because there were too many.
	retries int
	gaveUp  bool
	// servers are the MCP servers kz handed Codex, by name: an
	// elicitation from any other server is refused.
	servers map[string]any
}

// item is the part of a Codex thread item kz reads.
type item struct {
	Type             string       `json:"type"`
	ID               string       `json:"id"`
	Text             string       `json:"text"`
	Command          string       `json:"command"`
	Cwd              string       `json:"cwd"`
	Status           string       `json:"status"`
	AggregatedOutput *string      `json:"aggregatedOutput"`
	ExitCode         *int         `json:"exitCode"`
	Changes          []fileChange `json:"changes"`
	// Server, Tool, Arguments, Result and Error are an mcpToolCall's.
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *mcpResult      `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
	raw json.RawMessage // the whole item, as tool input
	// asked is set once an elicitation was mapped to this MCP call.
	asked bool
}

type fileChange struct {
	Path string `json:"path"`
	Kind struct {
		Type string `json:"type"`
	} `json:"kind"`
	Diff string `json:"diff"`
}

// params is the union of the notification parameters kz reads.
type params struct {
	ThreadID   string          `json:"threadId"`
	TurnID     string          `json:"turnId"`
	ItemID     string          `json:"itemId"`
	Delta      string          `json:"delta"`
	Item       json.RawMessage `json:"item"`
	Turn       *turnInfo       `json:"turn"`
	TokenUsage *struct {
		Last *tokenCount `json:"last"`
	} `json:"tokenUsage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	WillRetry bool `json:"willRetry"`
}

type turnInfo struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type tokenCount struct {
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
}

type threadResult struct {
	Thread struct {
		ID    string `json:"id"`
		Model string `json:"model"`
	} `json:"thread"`
	Model string `json:"model"`
}

func (tr *turnRun) fail(kind engine.ErrorKind, err error, format string, args ...any) (engine.Result, error) {
	return engine.Result{Status: engine.StatusError, Model: tr.model, NativeID: tr.threadID},
		tr.rt.errorf(kind, tr.model, err, format, args...)
}

// handshakeFailed classifies a failure before the turn started.
func (tr *turnRun) handshakeFailed(ctx context.Context, step string, err error) (engine.Result, error) {
	switch {
	case ctx.Err() != nil:
		return engine.Result{Status: engine.StatusInterrupted, Model: tr.model, NativeID: tr.threadID},
			tr.rt.errorf(engine.ErrInterrupted, tr.model, context.Cause(ctx), "interrupted")
	case tr.c.Exited() || isExited(err):
		<-tr.c.Done
		msg := tr.c.ExitText("codex")
		kind := agentcli.Classify(tr.c.Stderr.String())
		if kind == engine.ErrBadRequest || kind == engine.ErrContextTooLong {
			kind = engine.ErrCrashed
		}
		return tr.fail(kind, err, "%s during %s", msg, step)
	case errors.Is(err, context.DeadlineExceeded):
		return tr.fail(engine.ErrCrashed, err, "codex did not answer %s within %s", step, tr.rt.cfg.HandshakeTimeout)
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) && step == "thread/start" {
		// A release that no longer takes approvalPolicy "untrusted" must
		// not silently run commands unapproved.
		return tr.fail(engine.ErrCapability, err, "codex refused a thread with every command approved by kz (approvalPolicy \"untrusted\", sandbox %s): %v", tr.rt.threadSandbox(), err)
	}
	return tr.fail(agentcli.Classify(err.Error()), err, "codex %s failed: %v", step, err)
}

func isExited(err error) bool {
	var re *jsonrpc.Error
	return errors.As(err, &re) && re.Message == "the CLI exited"
}

var clientInfo = map[string]any{"name": "kz", "title": "kz", "version": "0.1.0"}

func (tr *turnRun) run(ctx context.Context) (engine.Result, error) {
	// The app-server is started: the workspace's state is recorded while
	// it boots and answers the handshake (engine.EarlyStarter).
	tr.t.Record()
	hctx, cancel := context.WithTimeout(ctx, tr.rt.cfg.HandshakeTimeout)
	defer cancel()
	// experimentalApi is needed for thread/backgroundTerminals/clean, the
	// only way to kill commands an interrupt leaves running.
	res, err := tr.c.Call(hctx, "initialize", map[string]any{"clientInfo": clientInfo,
		"capabilities": map[string]any{"experimentalApi": true}})
	if err != nil {
		return tr.handshakeFailed(ctx, "initialize", err)
	}
	var init struct {
		UserAgent string `json:"userAgent"`
	}
	_ = json.Unmarshal(res, &init)
	if err := tr.c.Notify("initialized", nil); err != nil {
		return tr.handshakeFailed(ctx, "initialize", err)
	}

	// approvalsReviewer "user" sends every approval to kz: a person's
	// config may route them to Codex's own reviewing subagent
	// (approvals_reviewer = "auto_review"), which approves by itself.
	opts := map[string]any{"cwd": tr.dir, "approvalPolicy": "untrusted", "sandbox": tr.rt.threadSandbox(), "approvalsReviewer": "user"}
	// kz's MCP servers travel in the thread's config, over stdin: their
	// expanded credentials never reach Codex's command line, environment
	// or a file (mcp.go). The person's own Codex config is read first, so
	// that none of its servers or tool settings lets a call skip kz.
	tr.servers = mcpServers(tr.rt.cfg.MCPServers, os.Environ(), tr.rt.log)
	person, err := tr.c.Call(hctx, "config/read", map[string]any{"cwd": tr.dir})
	if err != nil {
		return tr.handshakeFailed(ctx, "config/read", err)
	}
	servers, err := lockServers(tr.servers, person)
	if err != nil {
		return tr.fail(engine.ErrProtocol, err, "%v", err)
	}
	if servers != nil {
		opts["config"] = map[string]any{"mcp_servers": servers}
	}
	if tr.model != "" {
		opts["model"] = tr.model
	}
	// Every memory file comes as developer instructions, so that Codex
	// works under the same rules as the other runtimes: in a project it
	// does not trust, which kz makes every workspace (project.go), Codex
	// 0.169 reads no AGENTS.md itself (TestRealMemoryFilesReachTheModelOnce).
	if mem := memory.Render(engine.TurnContext{Memory: tr.t.Context.Memory}, "", func(engine.MemoryFile) bool { return true }); mem != "" {
		opts["developerInstructions"] = mem
	}
	prompt, images := tr.t.Prompt, tr.t.Images
	resumed := false
	if tr.t.NativeID != "" {
		p := map[string]any{"threadId": tr.t.NativeID}
		for k, v := range opts {
			p[k] = v
		}
		res, err = tr.c.Call(hctx, "thread/resume", p)
		if err == nil {
			resumed = true
		} else if ctx.Err() != nil || tr.c.Exited() {
			return tr.handshakeFailed(ctx, "thread/resume", err)
		} else {
			tr.rt.log.Info("codex: resume failed, starting a new thread primed with kz's transcript", "thread", tr.t.NativeID, "err", err)
		}
	}
	if !resumed {
		res, err = tr.c.Call(hctx, "thread/start", opts)
		if err != nil {
			return tr.handshakeFailed(ctx, "thread/start", err)
		}
		prompt = agentcli.PrimePrompt(tr.t.History, prompt, agentcli.PrimeBudget)
		images = agentcli.PrimeImages(tr.t.History, images)
	}
	var th threadResult
	if err := json.Unmarshal(res, &th); err != nil || th.Thread.ID == "" {
		return tr.fail(engine.ErrProtocol, err, "codex thread result without a thread id: %s", proc.Clip(string(res), 300))
	}
	tr.threadID = th.Thread.ID
	if m := th.Thread.Model; m != "" {
		tr.model = m
	} else if th.Model != "" {
		tr.model = th.Model
	}
	tr.t.Emit(engine.Event{Type: engine.EventSessionStarted, NativeID: tr.threadID, Model: tr.model,
		Version: versionRE().FindString(init.UserAgent), PermissionMode: "untrusted"})

	// The app-server started and opened the thread while the
	// workspace's state was being recorded (StartsEarly); the prompt
	// waits for it.
	if err := tr.t.Ready(ctx); err != nil {
		return engine.Result{Status: engine.StatusInterrupted, Model: tr.model, NativeID: tr.threadID}, err
	}
	if err := tr.t.StartCycle(); err != nil {
		return engine.Result{Status: engine.StatusMaxCycles, Model: tr.model, NativeID: tr.threadID}, err
	}
	tp := map[string]any{"threadId": tr.threadID, "input": userInput(prompt, images)}
	res, err = tr.c.Call(ctx, "turn/start", tp)
	if err != nil {
		return tr.handshakeFailed(ctx, "turn/start", err)
	}
	var ts struct {
		Turn turnInfo `json:"turn"`
	}
	if err := json.Unmarshal(res, &ts); err != nil || ts.Turn.ID == "" {
		return tr.fail(engine.ErrProtocol, err, "codex turn/start result without a turn id: %s", proc.Clip(string(res), 300))
	}
	tr.turnID = ts.Turn.ID
	return tr.loop(ctx)
}

// loop maps the CLI's messages to events until the turn completes.
func (tr *turnRun) loop(ctx context.Context) (engine.Result, error) {
	graceful := tr.t.Graceful
	for {
		select {
		case <-ctx.Done():
			tr.interrupt(true)
			return engine.Result{Status: engine.StatusInterrupted, Model: tr.model, NativeID: tr.threadID, Output: tr.output},
				tr.rt.errorf(engine.ErrInterrupted, tr.model, context.Cause(ctx), "interrupted")
		case <-graceful:
			graceful = nil
			tr.interrupt(false)
		case m, ok := <-tr.c.In:
			if !ok {
				msg := tr.c.ExitText("codex")
				// A CLI that dies mid-turn cuts the turn short: it ends
				// interrupted, with the crash as its (retryable) error.
				res, err := tr.fail(engine.ErrCrashed, tr.c.WaitErr, "%s in the middle of a turn", msg)
				res.Status = engine.StatusInterrupted
				return res, err
			}
			if m.ID != nil {
				tr.request(ctx, m)
				continue
			}
			if done, res, err := tr.notification(m); done {
				return res, err
			}
		}
	}
}

// interrupt asks Codex to stop the turn and kills the background terminals
// an interrupt would leave running (protocol notes §7). When wait is set
// (the immediate interrupt) it waits briefly for the terminals to be
// cleaned before the caller kills the process group.
func (tr *turnRun) interrupt(wait bool) {
	if wait && tr.stopping {
		// The person asked twice: Codex was asked to stop and clean its
		// terminals at the first; the caller kills the group at once.
		return
	}
	tr.stopping = true
	if tr.c.Exited() {
		return
	}
	_, _, _ = tr.c.Begin("turn/interrupt", map[string]any{"threadId": tr.threadID, "turnId": tr.turnID})
	_, ch, err := tr.c.Begin("thread/backgroundTerminals/clean", map[string]any{"threadId": tr.threadID})
	if err == nil {
		tr.cleaned = ch
	}
	if !wait || err != nil {
		return
	}
	grace := min(tr.rt.cfg.KillGrace, 500*time.Millisecond)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-tr.c.Done:
	}
}

// awaitCleaned runs when an interrupted turn completes: Codex reports the
// turn over before its background terminals are cleaned, so kz waits
// (briefly) for the clean and for the commands it killed to complete, so
// that no command of the turn is still running, or left unreported, when
// the turn ends.
func (tr *turnRun) awaitCleaned() {
	if tr.cleaned == nil {
		return
	}
	limit := time.NewTimer(min(tr.rt.cfg.KillGrace, time.Second))
	defer limit.Stop()
	ch := tr.cleaned
	for ch != nil || tr.runningCommands() {
		select {
		case <-ch:
			ch = nil
		case m, ok := <-tr.c.In:
			if !ok {
				return
			}
			if m.ID != nil {
				// Nothing more runs in a stopped turn.
				if m.Method == methodElicitation {
					_ = tr.c.ReplyError(m.ID, errDenied, "the turn was stopped")
				} else {
					_ = tr.c.Reply(m.ID, map[string]string{"decision": decisionCancel})
				}
				continue
			}
			var p params
			if m.Method == "item/completed" && json.Unmarshal(m.Params, &p) == nil && p.TurnID == tr.turnID {
				tr.itemCompleted(p.Item)
			}
		case <-limit.C:
			return
		}
	}
}

// runningCommands reports whether a command of the turn has not completed.
func (tr *turnRun) runningCommands() bool {
	for _, it := range tr.items {
		if it.Type == "commandExecution" {
			return true
		}
	}
	return false
}

// notification handles one notification; done reports the end of the turn.
func (tr *turnRun) notification(m jsonrpc.Message) (done bool, res engine.Result, err error) {
	var p params
	if len(m.Params) > 0 {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			tr.rt.log.Warn("codex: malformed notification", "method", m.Method, "err", err)
			return false, res, nil
		}
	}
	// Commands left running by an earlier interrupt report late, tagged
	// with their old turn (protocol notes §7): they are not this turn's.
	if p.TurnID != "" && tr.turnID != "" && p.TurnID != tr.turnID {
		return false, res, nil
	}
	switch m.Method {
	case "item/agentMessage/delta":
		if p.Delta != "" {
			tr.t.Emit(engine.Event{Type: engine.EventTextDelta, Text: p.Delta})
		}
	case "item/reasoning/summaryTextDelta", "item/reasoning/textDelta":
		if p.Delta != "" {
			tr.t.Emit(engine.Event{Type: engine.EventReasoningDelta, Text: p.Delta})
		}
	case "item/commandExecution/outputDelta":
		if p.Delta != "" {
			tr.t.Emit(engine.Event{Type: engine.EventToolCallProgress, ToolCallID: p.ItemID, Tool: "shell", Output: p.Delta})
		}
	case "item/started":
		tr.itemStarted(p.Item)
	case "item/completed":
		tr.itemCompleted(p.Item)
	case "thread/tokenUsage/updated":
		if p.TokenUsage != nil && p.TokenUsage.Last != nil {
			l := p.TokenUsage.Last
			// OpenAI counts cached input inside input_tokens; kz counts
			// them apart.
			u := engine.Usage{InputTokens: max(l.InputTokens-l.CachedInputTokens, 0), OutputTokens: l.OutputTokens,
				CacheReadTokens: l.CachedInputTokens, CacheWriteTokens: l.CacheWriteInputTokens}
			tr.t.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &u})
		}
	case "error":
		switch {
		case p.Error == nil:
		case !p.WillRetry:
			tr.failMsg = p.Error.Message
		default:
			tr.retries++
			if max := tr.rt.cfg.MaxRetries; max >= 0 && tr.retries > max && !tr.gaveUp {
				tr.rt.log.Info("codex: giving up after retries", "retries", max, "err", p.Error.Message)
				tr.gaveUp = true
				tr.failMsg = p.Error.Message
				tr.interrupt(false)
			}
		}
	case "turn/completed":
		if p.Turn == nil || p.Turn.ID != tr.turnID {
			return false, res, nil
		}
		tr.awaitCleaned()
		return true, tr.completed(p.Turn), tr.completedErr(p.Turn)
	default:
		// thread/started, turn/started, status changes, diffs, rate
		// limits, warnings and kinds newer than this code: nothing to map.
	}
	return false, res, nil
}

func (tr *turnRun) completed(t *turnInfo) engine.Result {
	r := engine.Result{Status: engine.StatusComplete, Output: tr.output, Model: tr.model, NativeID: tr.threadID}
	switch {
	case t.Status == "failed" || tr.gaveUp:
		r.Status = engine.StatusError
	case t.Status == "interrupted":
		r.Status = engine.StatusInterrupted
	}
	return r
}

func (tr *turnRun) completedErr(t *turnInfo) error {
	if tr.gaveUp {
		msg := fmt.Sprintf("codex was still retrying after %d retries: %s", tr.rt.cfg.MaxRetries, tr.failMsg)
		// What Codex retries is transient by its own judgement, so it
		// fails over whatever its text looks like.
		kind := agentcli.Classify(tr.failMsg)
		if !kind.Retryable() {
			kind = engine.ErrCrashed
		}
		return tr.rt.errorf(kind, tr.model, nil, "%s", msg)
	}
	if t.Status != "failed" {
		return nil
	}
	msg := tr.failMsg
	if t.Error != nil && t.Error.Message != "" {
		msg = t.Error.Message
	}
	if msg == "" {
		msg = "codex reported the turn as failed"
	}
	return tr.rt.errorf(agentcli.Classify(msg), tr.model, nil, "%s", msg)
}

func decodeItem(raw json.RawMessage) (*item, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var it item
	if err := json.Unmarshal(raw, &it); err != nil || it.ID == "" {
		return nil, false
	}
	it.raw = raw
	return &it, true
}

// toolItem reports whether an item type is a tool call in kz's sense.
func toolItem(typ string) bool {
	switch typ {
	case "userMessage", "agentMessage", "reasoning", "plan", "contextCompaction", "enteredReviewMode", "exitedReviewMode":
		return false
	}
	return true
}

func (tr *turnRun) itemStarted(raw json.RawMessage) {
	it, ok := decodeItem(raw)
	if !ok || !toolItem(it.Type) {
		return
	}
	tr.items[it.ID] = it
	switch it.Type {
	case "commandExecution":
		in, _ := json.Marshal(map[string]string{"command": it.Command, "cwd": it.Cwd})
		tr.t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: it.ID, Tool: "shell", Input: in})
		tr.t.Emit(engine.Event{Type: engine.EventCommandStarted, ToolCallID: it.ID, Tool: "shell", Command: unwrapShell(it.Command)})
	case "fileChange":
		in, _ := json.Marshal(map[string]any{"changes": it.Changes})
		tr.t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: it.ID, Tool: "apply_patch", Input: in,
			Paths: tr.paths(it)})
	case "mcpToolCall":
		tr.t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: it.ID, Tool: mcp.ToolName(it.Server, it.Tool),
			Input: mcpInput(it.Arguments)})
	default:
		tr.t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: it.ID, Tool: it.Type, Input: it.raw})
	}
}

func (tr *turnRun) itemCompleted(raw json.RawMessage) {
	it, ok := decodeItem(raw)
	if !ok {
		return
	}
	switch it.Type {
	case "agentMessage":
		tr.output = it.Text
		tr.t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: it.Text})
		return
	case "commandExecution":
		out := ""
		if it.AggregatedOutput != nil {
			out = *it.AggregatedOutput
		}
		isErr := it.Status != "completed" || (it.ExitCode != nil && *it.ExitCode != 0)
		if it.Status == "declined" && out == "" {
			out = "declined"
		}
		status := ""
		if isErr && tr.stopping && it.Status != "declined" {
			// A command that ends unsuccessfully once kz has asked Codex
			// to stop the turn was killed by that stop (Codex cleans its
			// terminals, exit -1, or the sandbox reports the SIGKILL, 137):
			// it was interrupted, as the native runtime reports such a
			// call, not a command that failed on its own.
			status = engine.ToolStatusInterrupted
		}
		tr.t.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: it.ID, Tool: "shell", Output: out, IsError: isErr, Status: status})
		tr.t.Emit(engine.Event{Type: engine.EventCommandFinished, ToolCallID: it.ID, Tool: "shell",
			Command: unwrapShell(it.Command), ExitCode: it.ExitCode, Output: out, IsError: isErr})
	case "fileChange":
		isErr := it.Status != "completed"
		tr.t.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: it.ID, Tool: "apply_patch",
			Output: it.Status, IsError: isErr, Paths: tr.paths(it)})
		if !isErr {
			for _, ch := range it.Changes {
				tr.t.Emit(engine.Event{Type: engine.EventFileEdited, ToolCallID: it.ID, Tool: "apply_patch",
					Path: tr.rel(ch.Path), Diff: renderDiff(tr.rel(ch.Path), ch)})
			}
		}
	case "mcpToolCall":
		out, isErr := mcpOutput(it)
		tr.t.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: it.ID, Tool: mcp.ToolName(it.Server, it.Tool),
			Output: out, IsError: isErr})
	default:
		if !toolItem(it.Type) {
			return
		}
		isErr := it.Status == "failed" || it.Status == "declined"
		tr.t.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: it.ID, Tool: it.Type, Output: it.Status, IsError: isErr})
	}
	delete(tr.items, it.ID)
}

// paths returns the absolute paths of every file of a change.
func (tr *turnRun) paths(it *item) []string {
	out := make([]string, 0, len(it.Changes))
	for _, ch := range it.Changes {
		out = append(out, tr.abs(ch.Path))
	}
	return out
}

func (tr *turnRun) abs(p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(tr.dir, p)
	}
	return filepath.Clean(p)
}

// rel renders p relative to the workspace when it is inside it.
func (tr *turnRun) rel(p string) string {
	a := tr.abs(p)
	if r, err := filepath.Rel(tr.dir, a); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return a
}

// renderDiff gives a change as a unified diff. Codex sends the content of
// an added or deleted file and a bare hunk for an update.
func renderDiff(rel string, ch fileChange) string {
	d := ch.Diff
	if strings.HasPrefix(d, "--- ") || strings.HasPrefix(d, "diff ") {
		return d
	}
	switch ch.Kind.Type {
	case "add":
		text, _, _ := diff.Unified(diff.DevNull, rel, nil, []byte(d))
		return text
	case "delete":
		text, _, _ := diff.Unified(rel, diff.DevNull, []byte(d), nil)
		return text
	}
	// A bare hunk: the file's ---/+++ pair goes before it.
	f := diff.File{OldPath: rel, NewPath: rel}
	for _, p := range diff.Parse(d) {
		f.Hunks = append(f.Hunks, p.Hunks...)
	}
	return diff.Format(f)
}

// userInput is turn/start's input: the text, then each image as an
// "image" item with a data URL (app-server's ImageUserInput), which
// Codex sends to the model as it is; kz never writes the image to a file
// for a "localImage" item.
func userInput(prompt string, images []engine.Image) []map[string]any {
	in := []map[string]any{{"type": "text", "text": prompt}}
	for _, im := range images {
		in = append(in, map[string]any{"type": "image", "url": "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)})
	}
	return in
}

// Package native is kz's own agent loop over an LLM API: each cycle streams
// one model response, runs its tool calls through kz's tools (and so through
// the permission gate), feeds the results back, and stops on a final answer
// or when the turn's limits, context or interrupt say so.
package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// Host is the part of a turn the loop calls back into. *engine.Turn
// implements it; tests may pass their own.
type Host interface {
	Emit(ev engine.Event)
	RequestPermission(ctx context.Context, req engine.PermissionRequest) engine.Answer
	StartCycle() error
}

// ToolRunner is what the loop needs from kz's tools: the tool definitions
// the model may see in a mode, and the execution of a batch of calls. Run
// returns one result per call, in order; it asks permission for each call
// through host.RequestPermission and emits tool_call_started and
// tool_call_finished (and file_edited, command_* …) through host.Emit. A
// denied call comes back as an error result carrying the denial and the
// person's feedback. Calls with invalid arguments or unknown names never
// reach Run.
type ToolRunner interface {
	Tools(mode engine.Mode) []llm.ToolDef
	Run(ctx context.Context, host Host, turn *engine.Turn, calls []llm.ToolCall) []llm.ToolResult
}

// toolPreparer is a ToolRunner whose tools must be started before they
// can be listed (ExecutorTools with MCP servers).
type toolPreparer interface {
	PrepareTools(ctx context.Context)
}

// Config configures a native runtime. The lead maps a TOML runtime entry
// (kind = "native") onto it: provider, base_url, api_key_env and timeout go
// to LLM; models to Models; [[models]] overrides to Catalog.
type Config struct {
	// Name is the runtime's name in the session ("native" when empty).
	Name string
	LLM  llm.Config
	// Client, when set, is used instead of building one from LLM.
	Client llm.Client
	// Models: the first is the default model.
	Models []string
	// Catalog defaults to llm.DefaultCatalog().
	Catalog *llm.Catalog
	// Tools is nil for a text-only runtime.
	Tools ToolRunner
	// SystemPrompt replaces the default system prompt.
	SystemPrompt string
	// ProposalPrompt is the answer format asked for in patch-proposal mode
	// (patch.PromptText()); the loop then explores with read-only tools and
	// its final answer, the proposal text, is the turn's output for
	// patch.Parse.
	ProposalPrompt string
	// MaxTokens bounds each response; zero means the model's max output
	// capped at 16384.
	MaxTokens int
	// Reasoning asks the models that reason for thinking (the runtime's
	// `reasoning` key); ModelReasoning overrides it per model.
	Reasoning      llm.ReasoningSetting
	ModelReasoning map[string]llm.ReasoningSetting
	Compaction     Compaction
	// Capabilities, when not zero, replaces the capability set derived from
	// the catalog (the `capabilities` key of a runtime entry); limits and
	// prices still come from the catalog.
	Capabilities engine.CapSet
	// WebSearch says Tools offers web_search, a search the provider runs
	// on its servers: the runtime then declares engine.CapWebSearch for
	// the models that take tools.
	WebSearch bool
}

// Runtime is the native runtime.
type Runtime struct {
	cfg     Config
	catalog *llm.Catalog

	clientOnce sync.Once
	client     llm.Client
	clientErr  error

	// thinking is the session's override of the configured reasoning
	// (--reasoning, the TUI's /reasoning), set between turns.
	thinkingMu sync.Mutex
	thinking   *llm.ReasoningSetting
}

// SetReasoning replaces the configured reasoning of every model from the
// next request on.
func (r *Runtime) SetReasoning(s llm.ReasoningSetting) {
	r.thinkingMu.Lock()
	r.thinking = &s
	r.thinkingMu.Unlock()
}

// Reasoning is the reasoning setting a request to model gets: the
// session's override, else the model's, else the runtime's.
func (r *Runtime) Reasoning(model string) llm.ReasoningSetting {
	r.thinkingMu.Lock()
	defer r.thinkingMu.Unlock()
	if r.thinking != nil {
		return *r.thinking
	}
	if s, ok := r.cfg.ModelReasoning[r.model(model)]; ok {
		return s
	}
	return r.cfg.Reasoning
}

// New validates cfg and returns the runtime. It does not contact the
// provider; a missing key shows up when a turn starts (and in
// cfg.LLM.Check() for `kz runtimes`).
func New(cfg Config) (*Runtime, error) {
	if cfg.Name == "" {
		cfg.Name = "native"
	}
	if len(cfg.Models) == 0 {
		return nil, fmt.Errorf("runtime %s: at least one model is required", cfg.Name)
	}
	if cfg.Client == nil {
		if _, err := llm.ParseProvider(string(cfg.LLM.Provider)); err != nil {
			return nil, fmt.Errorf("runtime %s: %w", cfg.Name, err)
		}
	}
	cat := cfg.Catalog
	if cat == nil {
		cat = llm.DefaultCatalog()
	}
	return &Runtime{cfg: cfg, catalog: cat}, nil
}

// Name returns the runtime's name.
func (r *Runtime) Name() string { return r.cfg.Name }

// ModelWarning returns the catalog's warning for a model kz does not know,
// or "".
func (r *Runtime) ModelWarning(model string) string {
	_, w := r.catalog.Lookup(r.model(model))
	return w
}

func (r *Runtime) model(m string) string {
	if m == "" {
		return r.cfg.Models[0]
	}
	return m
}

// Capabilities derive from the model's catalog entry: a model without tool
// calling (or a runtime without tools) is text-only, which full-autonomous
// mode rejects with the capability message.
func (r *Runtime) Capabilities(model string) engine.Capabilities {
	info, _ := r.catalog.Lookup(r.model(model))
	caps := capabilitiesOf(info, r.cfg.Tools != nil)
	if r.cfg.WebSearch && caps.Set.Has(engine.NewCapSet(engine.CapFunctionTools)) {
		caps.Set |= engine.NewCapSet(engine.CapWebSearch)
	}
	if r.cfg.Capabilities != 0 {
		caps.Set = r.cfg.Capabilities
	}
	return caps
}

func capabilitiesOf(info llm.ModelInfo, haveTools bool) engine.Capabilities {
	caps := []engine.Capability{engine.CapTextCompletion, engine.CapStreamingText, engine.CapInterrupt}
	if info.StructuredOutput {
		caps = append(caps, engine.CapStructuredOutput)
	}
	if info.Vision {
		caps = append(caps, engine.CapVision)
	}
	if info.Tools && haveTools {
		caps = append(caps, engine.CapNativeToolLoop, engine.CapFunctionTools, engine.CapFilesystemRead,
			engine.CapFilesystemEdit, engine.CapShell, engine.CapMCP)
		// kz's bash runs under the OS sandbox wherever the machine has
		// one (bubblewrap, or Landlock for writes only).
		if sandbox.Probe().Kind != sandbox.KindNone {
			caps = append(caps, engine.CapSandbox)
		}
	}
	return engine.Capabilities{
		Set: engine.NewCapSet(caps...), ContextWindow: info.ContextWindow, MaxOutput: info.MaxOutput,
		InputPerMTok: info.InputPerMTok, OutputPerMTok: info.OutputPerMTok, LatencyMS: info.LatencyMS,
	}
}

// RunsOwnHooks says the loop runs the PostToolUse hooks (its Executor,
// into each result) and the Stop hooks (stophooks.go) itself, feeding
// their answers to the model; the session must not run them again.
func (r *Runtime) RunsOwnHooks() bool { return true }

// StartsEarly makes the loop an engine.EarlyStarter: the workspace's
// state at the turn's start (a scan of every file: tens of milliseconds
// in a repository of 10,000 files, seconds the first time kz sees one) is
// recorded while the first request is on its way and the model answers,
// not before the request. The loop needs no Ready of its own: every tool
// call it makes passes the gate, which waits for the recording before it
// decides the call.
func (r *Runtime) StartsEarly() {}

// Run runs one turn.
func (r *Runtime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	t.Record()
	return r.run(ctx, t, t)
}

func (r *Runtime) getClient() (llm.Client, error) {
	r.clientOnce.Do(func() {
		if r.cfg.Client != nil {
			r.client = r.cfg.Client
			return
		}
		r.client, r.clientErr = llm.New(r.cfg.LLM)
	})
	return r.client, r.clientErr
}

// loop is the state of one turn.
type loop struct {
	r      *Runtime
	host   Host
	turn   *engine.Turn
	client llm.Client
	info   llm.ModelInfo
	model  string
	tools  []llm.ToolDef
	system string
	msgs   []llm.Message
	// contextTokens is the size of the conversation as the provider counted
	// it on the last response (input, cache and output), the basis of the
	// compaction decision.
	contextTokens int
	// counted is len(msgs) when contextTokens was measured.
	counted  int
	lastText string
	// stopBlocks counts the times Stop hooks sent this turn back to work.
	stopBlocks int
}

func (r *Runtime) run(ctx context.Context, t *engine.Turn, h Host) (engine.Result, error) {
	model := r.model(t.Model)
	info, warning := r.catalog.Lookup(model)
	client, err := r.getClient()
	if err != nil {
		return engine.Result{Status: engine.StatusError}, r.wrap(err, model)
	}
	l := &loop{r: r, host: h, turn: t, client: client, info: info, model: model}
	if info.Tools && r.cfg.Tools != nil {
		if p, ok := r.cfg.Tools.(toolPreparer); ok {
			// The MCP servers start on the first turn that needs
			// their tools, not with kz, and within their own timeouts.
			p.PrepareTools(ctx)
		}
		l.tools = r.cfg.Tools.Tools(t.Mode)
	}
	// The memory files and the environment follow kz's instructions, a
	// configured system prompt too: they are the person's rules for the
	// project, which no runtime setting replaces.
	l.system = memory.SystemPrompt(r.systemPrompt(t, len(l.tools) > 0), t, nil)
	names := make([]string, len(l.tools))
	for i, td := range l.tools {
		names[i] = td.Name
	}
	// The catalog warning about an unknown model rides on session_started,
	// where the TUI and the headless printer show the model anyway.
	h.Emit(engine.Event{Type: engine.EventSessionStarted, Model: model, Tools: names,
		PermissionMode: string(t.PermissionMode), Text: warning})
	// A model without vision gets the history's images as their labels
	// (a turn with images never starts on it: the session checks).
	l.msgs = llm.ForVision(append(llm.FromTranscript(t.History), llm.Message{Role: llm.RoleUser, Text: t.Prompt, Images: t.Images}), info.Vision)
	return l.run(ctx)
}

func (l *loop) result(status engine.Status) engine.Result {
	return engine.Result{Status: status, Output: l.lastText, Model: l.model}
}

// run is the cycle loop. The person's first interrupt (turn.Graceful) ends
// soft, a context under ctx: it stops the model's stream at once and the
// running tools politely (a shell command's process tree gets SIGTERM, then
// SIGKILL after the grace), and the loop then ends the turn interrupted.
// The second interrupt cancels ctx itself, which the tools see as their
// hard stop: a command still in its grace is killed at once.
func (l *loop) run(ctx context.Context) (engine.Result, error) {
	soft, cancel := context.WithCancel(ctx)
	if l.turn.Graceful != nil {
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-l.turn.Graceful:
				cancel()
			case <-soft.Done():
			}
		}()
		// The watcher ends with the turn, not after it.
		defer func() { <-watched }()
	}
	defer cancel()
	res, err := l.cycles(tools.WithHardStop(soft, ctx))
	if err != nil && ctx.Err() == nil && l.stopRequested() {
		// The stream or a tool ended because the person asked the turn
		// to stop: that is an interruption, not a failure.
		return l.result(engine.StatusInterrupted), nil
	}
	return res, err
}

func (l *loop) cycles(ctx context.Context) (engine.Result, error) {
	for {
		if l.stopRequested() {
			return l.result(engine.StatusInterrupted), nil
		}
		if err := ctx.Err(); err != nil {
			return l.result(engine.StatusInterrupted), l.r.wrap(err, l.model)
		}
		if err := l.host.StartCycle(); err != nil {
			return l.result(engine.StatusMaxCycles), err
		}
		if err := l.maybeCompact(ctx); err != nil {
			return l.result(engine.StatusError), l.r.wrap(err, l.model)
		}
		resp, err := l.stream(ctx, l.request())
		if engine.KindOf(err) == engine.ErrContextTooLong && l.r.cfg.Compaction.threshold() >= 0 {
			// The provider counted more than kz estimated: compact now
			// and send the request once more.
			if ok, cerr := l.compact(ctx, l.estimate()); cerr == nil && ok {
				resp, err = l.stream(ctx, l.request())
			}
		}
		if err != nil {
			return l.result(engine.StatusError), l.r.wrap(err, l.model)
		}
		if resp.Text != "" {
			l.lastText = resp.Text
		}
		l.msgs = append(l.msgs, resp.Message())
		l.counted = len(l.msgs)
		if len(resp.ToolCalls) == 0 {
			if l.stopBlocked(ctx) {
				continue
			}
			return l.result(engine.StatusComplete), nil
		}
		if err := ctx.Err(); err != nil {
			// The response itself ended the turn (its cost crossed the
			// budget, or the timeout fell while it streamed): its tool
			// calls must not run after the turn is over.
			return l.result(engine.StatusInterrupted), l.r.wrap(err, l.model)
		}
		results := l.runTools(ctx, resp.ToolCalls)
		l.msgs = append(l.msgs, llm.Message{Role: llm.RoleTool, ToolResults: results})
	}
}

// stopRequested reports whether the person asked for a graceful stop.
func (l *loop) stopRequested() bool {
	if l.turn.Graceful == nil {
		return false
	}
	select {
	case <-l.turn.Graceful:
		return true
	default:
		return false
	}
}

func (l *loop) request() llm.Request {
	maxTokens := l.r.cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = min(l.info.MaxOutput, 16384)
	}
	req := llm.Request{Model: l.model, System: l.system, Messages: l.msgs, Tools: l.tools, MaxTokens: maxTokens}
	if l.info.Reasoning {
		req.Thinking = l.r.Reasoning(l.model)
	}
	return req
}

// stream sends one request, forwarding deltas as events, and accounts for
// the response: assistant_message with the whole text, usage_updated with
// its usage and cost.
func (l *loop) stream(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := l.client.Stream(ctx, req, func(d llm.Delta) {
		typ := engine.EventTextDelta
		if d.Kind == llm.DeltaReasoning {
			typ = engine.EventReasoningDelta
		}
		l.host.Emit(engine.Event{Type: typ, Text: d.Text})
	})
	if err != nil {
		return resp, err
	}
	if resp.Text != "" {
		l.host.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: resp.Text, Model: l.model})
	}
	u := resp.Usage
	l.host.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &u, CostUSD: l.info.Cost(u), Model: l.model})
	l.contextTokens = int(u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens)
	return resp, nil
}

// runTools answers every call of one response. Calls the runner must not
// see (invalid arguments, a tool not offered in this mode) get an error
// result without running; the rest go to the runner as one batch, which
// decides what may run in parallel.
func (l *loop) runTools(ctx context.Context, calls []llm.ToolCall) []llm.ToolResult {
	results := make([]llm.ToolResult, len(calls))
	var batch []llm.ToolCall
	var where []int
	for i, c := range calls {
		var reason string
		switch {
		case !slices.ContainsFunc(l.tools, func(d llm.ToolDef) bool { return d.Name == c.Name }):
			reason = fmt.Sprintf("tool %q is not available in %s mode; the call was not executed", c.Name, l.turn.Mode)
		case !c.ValidArgs():
			reason = "the arguments are not a valid JSON object (truncated or malformed); the call was not executed. " +
				"Send the call again with complete JSON arguments."
		}
		if reason == "" {
			batch = append(batch, c)
			where = append(where, i)
			continue
		}
		results[i] = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: reason, IsError: true}
		l.host.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: c.ID, Tool: c.Name, Input: eventInput(c.Args)})
		l.host.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: c.ID, Tool: c.Name,
			Output: reason, IsError: true, Status: engine.ToolStatusError})
	}
	if len(batch) > 0 {
		out := l.r.cfg.Tools.Run(ctx, l.host, l.turn, batch)
		for j, i := range where {
			if j < len(out) {
				results[i] = out[j]
				results[i].CallID, results[i].Name = batch[j].ID, batch[j].Name
			} else {
				results[i] = llm.ToolResult{CallID: batch[j].ID, Name: batch[j].Name, Content: engine.InterruptedNotRerun, IsError: true}
			}
		}
	}
	return results
}

// eventInput makes raw arguments safe for an event: events are JSON, so
// invalid arguments travel as a JSON string of their bytes.
func eventInput(args json.RawMessage) json.RawMessage {
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

// wrap names the runtime and model on a classified error.
func (r *Runtime) wrap(err error, model string) error {
	var re *engine.RuntimeError
	if errors.As(err, &re) {
		cp := *re
		cp.Runtime = r.cfg.Name
		if cp.Model == "" {
			cp.Model = model
		}
		return &cp
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &engine.RuntimeError{Kind: engine.ErrInterrupted, Runtime: r.cfg.Name, Model: model, Message: "turn cancelled", Err: err}
	}
	return &engine.RuntimeError{Kind: engine.ErrInternal, Runtime: r.cfg.Name, Model: model, Message: err.Error(), Err: err}
}

func (r *Runtime) systemPrompt(t *engine.Turn, tools bool) string {
	if r.cfg.SystemPrompt != "" {
		return r.cfg.SystemPrompt
	}
	s := "You are kz, a coding assistant working in the project at " + t.Workspace + ".\n"
	switch {
	case t.Mode == engine.ModeAnalysisOnly:
		s += "Mode: analysis-only. Read and explain; do not change files or run commands that change anything.\n"
	case t.Mode == engine.ModePatchProposal:
		s += "Mode: patch-proposal. Read what you need with the tools (they cannot change anything); kz applies the change " +
			"after the person reviews it. End with the proposal as your final answer.\n" + r.cfg.ProposalPrompt + "\n"
	case tools:
		s += "Use the tools to read, edit and run what the task needs. Every tool call passes kz's permission gate; " +
			"when a call is denied, respect the decision and the person's feedback, and continue without it.\n"
	}
	s += "Be concise. When the task is done, answer with a short summary of what you did."
	return s
}

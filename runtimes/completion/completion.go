// Package completion is the text-only runtime over kz's LLM clients, for
// analysis-only and patch-proposal modes: one model request per turn, no
// tools. In patch-proposal mode it asks for a JSON proposal, through the
// provider's JSON-schema mode where the model has one and a prompted format
// with robust extraction where it does not, and returns the proposal as the
// turn's output.
package completion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// Host is the part of a turn the runtime calls back into; *engine.Turn
// implements it.
type Host interface {
	Emit(ev engine.Event)
	StartCycle() error
}

// Config configures a completion runtime (TOML kind = "completion", with the
// same provider keys as a native runtime).
type Config struct {
	Name    string
	LLM     llm.Config
	Client  llm.Client
	Models  []string
	Catalog *llm.Catalog
	// ProposalSchema is the JSON schema of a patch proposal (the patch
	// package owns it). Without it patch-proposal mode asks for any JSON
	// object.
	ProposalSchema json.RawMessage
	// ProposalPrompt, when set, is the text format asked of models without
	// a JSON-schema mode (patch.PromptText(): search/replace blocks that
	// patch.Parse reads). The answer is then returned verbatim as the
	// output. When empty, such models are asked for JSON following the
	// schema, which ExtractJSON recovers.
	ProposalPrompt string
	SystemPrompt   string
	MaxTokens      int
	// Reasoning asks models that reason for thinking (the runtime's
	// `reasoning` key).
	Reasoning llm.ReasoningSetting
}

// Runtime is the completion runtime.
type Runtime struct {
	cfg     Config
	catalog *llm.Catalog

	once      sync.Once
	client    llm.Client
	clientErr error

	// thinking is the session's override of cfg.Reasoning.
	thinkingMu sync.Mutex
	thinking   *llm.ReasoningSetting
}

// SetReasoning replaces the configured reasoning from the next turn on.
func (r *Runtime) SetReasoning(s llm.ReasoningSetting) {
	r.thinkingMu.Lock()
	r.thinking = &s
	r.thinkingMu.Unlock()
}

func (r *Runtime) reasoning() llm.ReasoningSetting {
	r.thinkingMu.Lock()
	defer r.thinkingMu.Unlock()
	if r.thinking != nil {
		return *r.thinking
	}
	return r.cfg.Reasoning
}

// New validates cfg.
func New(cfg Config) (*Runtime, error) {
	if cfg.Name == "" {
		cfg.Name = "completion"
	}
	if len(cfg.Models) == 0 {
		return nil, fmt.Errorf("runtime %s: at least one model is required", cfg.Name)
	}
	if cfg.Client == nil {
		if _, err := llm.ParseProvider(string(cfg.LLM.Provider)); err != nil {
			return nil, fmt.Errorf("runtime %s: %w", cfg.Name, err)
		}
	}
	if len(cfg.ProposalSchema) > 0 && !json.Valid(cfg.ProposalSchema) {
		return nil, fmt.Errorf("runtime %s: the proposal schema is not valid JSON", cfg.Name)
	}
	cat := cfg.Catalog
	if cat == nil {
		cat = llm.DefaultCatalog()
	}
	return &Runtime{cfg: cfg, catalog: cat}, nil
}

// Name returns the runtime's name.
func (r *Runtime) Name() string { return r.cfg.Name }

func (r *Runtime) model(m string) string {
	if m == "" {
		return r.cfg.Models[0]
	}
	return m
}

// Capabilities: text completion and streaming always; structured_output
// when the model has a JSON-schema mode.
func (r *Runtime) Capabilities(model string) engine.Capabilities {
	info, _ := r.catalog.Lookup(r.model(model))
	caps := []engine.Capability{engine.CapTextCompletion, engine.CapStreamingText, engine.CapInterrupt}
	if info.StructuredOutput {
		caps = append(caps, engine.CapStructuredOutput)
	}
	if info.Vision {
		caps = append(caps, engine.CapVision)
	}
	return engine.Capabilities{Set: engine.NewCapSet(caps...), ContextWindow: info.ContextWindow, MaxOutput: info.MaxOutput,
		InputPerMTok: info.InputPerMTok, OutputPerMTok: info.OutputPerMTok, LatencyMS: info.LatencyMS}
}

// StartsEarly makes the runtime an engine.EarlyStarter: it calls no
// tool, and what it proposes is applied after it returns, once the
// workspace's state at the turn's start is recorded, so the recording
// runs while the request is on its way.
func (r *Runtime) StartsEarly() {}

// Run answers one turn.
func (r *Runtime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	t.Record()
	return r.run(ctx, t, t)
}

func (r *Runtime) run(ctx context.Context, t *engine.Turn, h Host) (engine.Result, error) {
	model := r.model(t.Model)
	info, warning := r.catalog.Lookup(model)
	r.once.Do(func() {
		if r.cfg.Client != nil {
			r.client = r.cfg.Client
			return
		}
		r.client, r.clientErr = llm.New(r.cfg.LLM)
	})
	if r.clientErr != nil {
		return engine.Result{Status: engine.StatusError}, r.wrap(r.clientErr, model)
	}
	h.Emit(engine.Event{Type: engine.EventSessionStarted, Model: model, PermissionMode: string(t.PermissionMode), Text: warning})
	if err := h.StartCycle(); err != nil {
		return engine.Result{Status: engine.StatusMaxCycles, Model: model}, err
	}
	proposal := t.Mode == engine.ModePatchProposal
	textFormat := proposal && !info.StructuredOutput && r.cfg.ProposalPrompt != ""
	maxTokens := r.cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = min(info.MaxOutput, 16384)
	}
	req := llm.Request{Model: model, System: memory.SystemPrompt(r.system(t, proposal, textFormat), t, nil), MaxTokens: maxTokens,
		Messages: llm.ForVision(append(llm.FromTranscript(t.History), llm.Message{Role: llm.RoleUser, Text: t.Prompt, Images: t.Images}), info.Vision)}
	if info.Reasoning {
		req.Thinking = r.reasoning()
	}
	if proposal && info.StructuredOutput {
		req.JSONSchema = r.schema()
		req.SchemaName = "patch_proposal"
	}
	resp, err := r.client.Stream(ctx, req, func(d llm.Delta) {
		switch {
		case d.Kind == llm.DeltaReasoning:
			h.Emit(engine.Event{Type: engine.EventReasoningDelta, Text: d.Text})
		case !proposal:
			// A proposal streams as raw JSON, which is no reading for a
			// person; it is shown once parsed.
			h.Emit(engine.Event{Type: engine.EventTextDelta, Text: d.Text})
		}
	})
	if err != nil {
		return engine.Result{Status: engine.StatusError, Model: model}, r.wrap(err, model)
	}
	u := resp.Usage
	h.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &u, CostUSD: info.Cost(u), Model: model})
	if !proposal || textFormat {
		if resp.Text != "" {
			h.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: resp.Text, Model: model})
		}
		return engine.Result{Status: engine.StatusComplete, Output: resp.Text, Model: model}, nil
	}
	obj, err := ExtractJSON(resp.Text)
	if err == nil {
		err = CheckRequired(obj, r.cfg.ProposalSchema)
	}
	if err != nil {
		return engine.Result{Status: engine.StatusError, Model: model}, &engine.RuntimeError{Kind: engine.ErrProtocol,
			Runtime: r.cfg.Name, Model: model, Message: "the model did not return a usable patch proposal: " + err.Error(), Err: err}
	}
	h.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: string(obj), Model: model})
	return engine.Result{Status: engine.StatusComplete, Output: string(obj), Model: model}, nil
}

func (r *Runtime) schema() json.RawMessage {
	if len(r.cfg.ProposalSchema) > 0 {
		return r.cfg.ProposalSchema
	}
	return json.RawMessage(`{"type":"object"}`)
}

func (r *Runtime) system(t *engine.Turn, proposal, textFormat bool) string {
	if r.cfg.SystemPrompt != "" {
		return r.cfg.SystemPrompt
	}
	s := "You are kz, a coding assistant for the project at " + t.Workspace + ". You cannot run tools or change files.\n"
	if !proposal {
		return s + "Mode: analysis-only. Answer from the conversation; say what you would need to see when it is not enough."
	}
	if textFormat {
		return s + "Mode: patch-proposal.\n" + r.cfg.ProposalPrompt
	}
	return s + "Mode: patch-proposal. Answer with exactly one JSON object, no prose around it, that follows this JSON schema:\n" +
		string(r.schema()) + "\nEvery edit must match the current file content exactly once."
}

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
	return &engine.RuntimeError{Kind: engine.ErrInternal, Runtime: r.cfg.Name, Model: model, Message: err.Error(), Err: err}
}

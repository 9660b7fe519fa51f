package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
)

// Permitter decides whether a tool call may run. engine.Turn satisfies it.
type Permitter interface {
	RequestPermission(ctx context.Context, req engine.PermissionRequest) engine.Answer
}

// Emitter publishes events. engine.Turn satisfies it.
type Emitter interface {
	Emit(ev engine.Event)
}

// ToolCall is one call a runtime asks for.
type ToolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolResult is what the model gets back for one call.
type ToolResult struct {
	ID      string
	Name    string
	Output  string
	IsError bool
	// ArtifactRef is set when the full output was stored as an artifact and
	// Output is a preview.
	ArtifactRef string
}

// EmptyMarker replaces an empty successful result, so the model never sees
// an empty tool result (some providers reject one).
const EmptyMarker = "(no output)"

// DefaultParallel is the largest parallel batch when none is configured.
const DefaultParallel = 4

// previewBytes is how much of an over-limit result the model sees.
const previewBytes = 4000

// Executor runs a runtime's tool calls through the permission gate for one
// session. It is safe for concurrent use; each tool-call id runs at most
// once over the Executor's life.
type Executor struct {
	reg       *Registry
	env       *Env
	artifacts ArtifactSaver
	parallel  int

	mu   sync.Mutex
	done map[string]*onceEntry
}

// onceEntry holds the result of one tool-call id; done is closed when res
// is final.
type onceEntry struct {
	done chan struct{}
	res  ToolResult
}

// ExecutorConfig configures an Executor. Registry and Env are required.
type ExecutorConfig struct {
	Registry *Registry
	Env      *Env
	// Artifacts stores over-limit results; without it they are truncated.
	Artifacts ArtifactSaver
	// MaxParallel bounds a parallel batch (DefaultParallel when zero).
	MaxParallel int
}

// NewExecutor returns an Executor.
func NewExecutor(cfg ExecutorConfig) (*Executor, error) {
	if cfg.Registry == nil || cfg.Env == nil || cfg.Env.WS == nil {
		return nil, errors.New("executor: registry, env and workspace are required")
	}
	p := cfg.MaxParallel
	if p <= 0 {
		p = DefaultParallel
	}
	return &Executor{reg: cfg.Registry, env: cfg.Env, artifacts: cfg.Artifacts, parallel: p, done: map[string]*onceEntry{}}, nil
}

// Env returns the executor's session environment.
func (e *Executor) Env() *Env { return e.env }

// Registry returns the executor's registry.
func (e *Executor) Registry() *Registry { return e.reg }

// Execute runs calls and returns one result per call, in call order.
// Consecutive read-only, concurrency-safe calls run as a bounded parallel
// batch; every other call runs alone, in order. A call id seen before
// (in this batch or an earlier one) is not run again: it gets the first
// result. Once ctx ends, calls that have not started get
// engine.InterruptedNotRerun.
func (e *Executor) Execute(ctx context.Context, p Permitter, em Emitter, calls []ToolCall) []ToolResult {
	results := make([]ToolResult, len(calls))
	// Claim the ids first, in order, so a duplicate inside the batch waits
	// for the first occurrence instead of running.
	owned := make([]*onceEntry, len(calls))
	shared := make([]*onceEntry, len(calls))
	e.mu.Lock()
	for i, c := range calls {
		if ent, ok := e.done[c.ID]; ok && c.ID != "" {
			shared[i] = ent
			continue
		}
		ent := &onceEntry{done: make(chan struct{})}
		if c.ID != "" {
			e.done[c.ID] = ent
		}
		owned[i] = ent
	}
	e.mu.Unlock()

	finish := func(i int, r ToolResult) {
		results[i] = r
		owned[i].res = r
		close(owned[i].done)
	}
	for i := 0; i < len(calls); {
		if owned[i] == nil {
			i++
			continue
		}
		if !e.parallelSafe(calls[i].Name) {
			finish(i, e.runOne(ctx, p, em, calls[i]))
			i++
			continue
		}
		// A run of consecutive parallel-safe calls (duplicates skipped).
		j := i
		for j < len(calls) && (owned[j] == nil || e.parallelSafe(calls[j].Name)) {
			j++
		}
		sem := make(chan struct{}, e.parallel)
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			if owned[k] == nil {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				finish(k, e.runOne(ctx, p, em, calls[k]))
			}()
		}
		wg.Wait()
		i = j
	}
	for i, ent := range shared {
		if ent == nil {
			continue
		}
		select {
		case <-ent.done:
			results[i] = ent.res
		case <-ctx.Done():
			results[i] = ToolResult{ID: calls[i].ID, Name: calls[i].Name, Output: engine.InterruptedNotRerun, IsError: true}
		}
	}
	return results
}

func (e *Executor) parallelSafe(name string) bool {
	t, ok := e.reg.Lookup(name)
	if !ok {
		return false
	}
	s := t.Spec()
	return s.ReadOnly && s.ConcurrencySafe
}

// runOne runs one call from start event to finish event.
func (e *Executor) runOne(ctx context.Context, p Permitter, em Emitter, c ToolCall) ToolResult {
	em.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: c.ID, Tool: c.Name, Input: eventInput(c.Input)})
	var req engine.PermissionRequest
	res, status := e.run(ctx, p, em, c, &req)
	if !res.IsError && res.Output == "" {
		res.Output = EmptyMarker
	}
	e.postToolUse(ctx, req, &res, status)
	em.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: c.ID, Tool: c.Name,
		Output: res.Output, IsError: res.IsError, Status: status})
	return res
}

// eventInput keeps an event's input valid JSON even when the model's was
// not.
func eventInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 || !json.Valid(in) {
		b, _ := json.Marshal(string(in))
		return b
	}
	return in
}

// run runs one call; *ran is set to the request of the call that ran.
func (e *Executor) run(ctx context.Context, p Permitter, em Emitter, c ToolCall, ran *engine.PermissionRequest) (res ToolResult, status string) {
	res = ToolResult{ID: c.ID, Name: c.Name}
	defer func() {
		// A bug in one tool must not take the session down: it becomes an
		// error result like any other failure.
		if v := recover(); v != nil {
			res = ToolResult{ID: c.ID, Name: c.Name, IsError: true, Output: fmt.Sprintf("%s failed with an internal error: %v", c.Name, v)}
			status = engine.ToolStatusError
		}
	}()
	fail := func(format string, args ...any) (ToolResult, string) {
		res.Output, res.IsError = fmt.Sprintf(format, args...), true
		return res, engine.ToolStatusError
	}
	if ctx.Err() != nil {
		res.Output, res.IsError = engine.InterruptedNotRerun, true
		return res, engine.ToolStatusInterrupted
	}
	tool, ok := e.reg.Lookup(c.Name)
	if !ok || tool.Spec().Exposure == ExposureDisabled || tool.Spec().Exposure == "" {
		return fail("unknown tool %q; the call was not executed", c.Name)
	}
	spec := tool.Spec()
	call, err := tool.Prepare(ctx, e.env, c.Input)
	if err != nil {
		return fail("%s: %v; the call was not executed", c.Name, err)
	}
	// A call that needs no decision runs under the strictest
	// confinement, the zero one.
	var conf engine.Confinement
	if spec.RequiresPermission() {
		a := p.RequestPermission(ctx, gateRequest(call, c.ID, c.Name, c.Input))
		if a.Allowed() && len(a.UpdatedInput) > 0 {
			// The person edited the input: decode it as strictly as the
			// model's and ask the gate about what will really run.
			call, err = tool.Prepare(ctx, e.env, a.UpdatedInput)
			if err != nil {
				return fail("%s: the edited input is invalid: %v; the call was not executed", c.Name, err)
			}
			// The answer about what really runs decides, its
			// confinement included.
			if a2 := p.RequestPermission(ctx, gateRequest(call, c.ID, c.Name, a.UpdatedInput)); !a2.Allowed() {
				a = a2
			} else {
				a.Confinement = a2.Confinement
			}
		}
		if !a.Allowed() {
			return fail("%s", denialText(c.Name, a))
		}
		if n, ok := call.(Narrower); ok && a.Patch != nil {
			// The person kept part of the write in the review: exactly
			// that is written.
			if call, err = n.Narrow(a.Patch); err != nil {
				return fail("%s: %v; nothing was written", c.Name, err)
			}
		}
		conf = a.Confinement
	}
	rc := &RunContext{Env: e.env, ToolCallID: c.ID, Confinement: conf, Emit: func(ev engine.Event) {
		if ev.ToolCallID == "" {
			ev.ToolCallID = c.ID
		}
		if ev.Tool == "" {
			ev.Tool = c.Name
		}
		em.Emit(ev)
	}}
	rc.Permit = func(ctx context.Context, req engine.PermissionRequest) engine.Answer {
		req.ToolCallID, req.Tool, req.Input = c.ID, c.Name, eventInput(req.Input)
		return p.RequestPermission(ctx, req)
	}
	if sp, ok := p.(Spawner); ok {
		rc.Spawn = sp.SpawnChild
	}
	if e.artifacts != nil {
		rc.SaveArtifact = func(ctx context.Context, content []byte) (string, error) {
			return e.artifacts.SaveArtifact(ctx, e.env.SessionID, c.ID, content)
		}
	}
	*ran = gateRequest(call, c.ID, c.Name, c.Input)
	out, err := call.Run(ctx, rc)
	status = engine.ToolStatusOK
	if err != nil {
		res.IsError = true
		status = engine.ToolStatusError
		if ctx.Err() != nil {
			status = engine.ToolStatusInterrupted
		}
		if out != "" {
			out = strings.TrimRight(out, "\n") + "\n"
		}
		out += "error: " + err.Error()
	}
	res.Output = out
	if len(out) > spec.MaxResult() {
		// The output of an interrupted call is kept too: storing it must
		// not fail because the call's context has ended.
		res.Output, res.ArtifactRef = e.overLimit(context.WithoutCancel(ctx), c, out, spec.MaxResult())
	}
	return res, status
}

// gateRequest is the request the gate judges for a prepared call: the
// call's own view of itself (decoded once, strictly) plus the call id, the
// tool name and the raw input. kz policy check builds it the same way.
func gateRequest(call Call, id, name string, input json.RawMessage) engine.PermissionRequest {
	req := call.Request()
	req.ToolCallID, req.Tool, req.Input = id, name, eventInput(input)
	return req
}

// denialText is what the model reads when a call is denied: the reason and
// the person's feedback, if any.
func denialText(tool string, a engine.Answer) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Permission to run %s was denied", tool)
	if a.Reason != "" {
		fmt.Fprintf(&sb, ": %s", a.Reason)
	}
	if a.Stage != "" {
		fmt.Fprintf(&sb, " (stage %s", a.Stage)
		if a.Rule != "" {
			fmt.Fprintf(&sb, ", rule %s", a.Rule)
		}
		sb.WriteString(")")
	}
	sb.WriteString(". The call was not executed.")
	if a.Feedback != "" {
		fmt.Fprintf(&sb, "\nFeedback from the user: %s", a.Feedback)
	}
	return sb.String()
}

// overLimit stores an over-limit result as an artifact and returns the
// preview the model sees; without an artifact store, or when storing fails,
// the preview says the rest was dropped.
func (e *Executor) overLimit(ctx context.Context, c ToolCall, out string, limit int) (string, string) {
	n := min(previewBytes, limit)
	for n > 0 && !utf8.RuneStart(out[n]) {
		n--
	}
	preview := out[:n]
	if e.artifacts != nil {
		ref, err := e.artifacts.SaveArtifact(ctx, e.env.SessionID, c.ID, []byte(out))
		if err == nil {
			return fmt.Sprintf("%s\n… [output is %d bytes, more than the %d byte limit; the full output is stored as artifact %s]",
				preview, len(out), limit, ref), ref
		}
		return fmt.Sprintf("%s\n… [output is %d bytes; storing it failed (%v), the rest is not shown]", preview, len(out), err), ""
	}
	return fmt.Sprintf("%s\n… [output is %d bytes, more than the %d byte limit; the rest is not shown]", preview, len(out), limit), ""
}

// Builtins returns kz's built-in tools.
func Builtins() []Tool {
	return []Tool{ReadFile{}, WriteFile{}, EditFile{}, ListDir{}, Glob{}, Grep{}, Bash{}, WebFetch{}}
}

// NewBuiltinRegistry returns a registry with the built-in tools.
func NewBuiltinRegistry() *Registry {
	r, err := NewRegistry(Builtins()...)
	if err != nil {
		// The built-ins have distinct names and valid schemas, which
		// TestBuiltinSpecs checks; an error here is a programming error
		// caught before release, never a reaction to input.
		panic(err)
	}
	return r
}

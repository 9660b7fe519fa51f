package native

import (
	"context"
	"fmt"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/workspace"
)

// ExecutorTools adapts kz's tools.Executor to the loop's ToolRunner: the
// registry says which tools a mode offers, the Executor runs the calls
// through the permission gate (the turn is its Permitter and Emitter) and
// emits the tool events.
type ExecutorTools struct {
	Registry *tools.Registry
	// Executor returns the Executor of the turn's session. An Executor
	// belongs to one session: it remembers which files were read (edits
	// need a fresh read) and which call ids already ran.
	Executor func(t *engine.Turn) (*tools.Executor, error)
	// ReadPolicy, when set before the first turn, judges every entry
	// grep, glob and list_dir meet (the gate's Read rules); the Executors
	// PerSessionTools builds take it.
	ReadPolicy tools.ReadPolicy
	// FetchPolicy, when set before the first turn, names the hosts
	// web_fetch may reach at a loopback or private address.
	FetchPolicy tools.FetchPolicy
	// PostHooks, when set before the first turn, runs the PostToolUse
	// hooks after each successful call; their feedback joins the result
	// the model reads.
	PostHooks tools.PostToolHooks
	// Source, when set, adds tools that appear while kz runs (the MCP
	// servers' tools): PrepareTools starts it before a turn lists its
	// tools, and registers what it offers unless Deny removes it.
	Source ToolSource
	Deny   func(name string) bool
}

// ToolSource offers tools that become known only once something starts:
// an MCP server's tools are listed after the server runs. Start returns
// when every server is ready or has failed, or ctx ends; a server that
// fails only offers nothing.
type ToolSource interface {
	Start(ctx context.Context)
	Tools() []tools.Tool
}

// PrepareTools starts the Source and registers its tools, once each; a
// tool whose server stopped stays registered, so a call of it gets the
// server's error rather than "unknown tool".
func (a *ExecutorTools) PrepareTools(ctx context.Context) {
	if a.Source == nil {
		return
	}
	a.Source.Start(ctx)
	for _, t := range a.Source.Tools() {
		name := t.Spec().Name
		if _, ok := a.Registry.Lookup(name); ok || a.Deny != nil && a.Deny(name) {
			continue
		}
		// A duplicate is impossible after the lookup but for a
		// concurrent turn registering it first, which is as good.
		_ = a.Registry.Register(t)
	}
}

// NewExecutorTools adapts one Executor, for a process that serves one
// session.
func NewExecutorTools(exec *tools.Executor) *ExecutorTools {
	return &ExecutorTools{Registry: exec.Registry(), Executor: func(*engine.Turn) (*tools.Executor, error) { return exec, nil }}
}

// PerSessionTools builds one Executor per session on first use, over the
// turn's workspace, with the given registry. snapshots (the store) receives
// the old content before every write; without it the tools refuse to write.
// artifacts may be nil (over-limit results are then truncated). sb is the
// session's OS sandbox, under which every shell command runs with the
// confinement of the gate's answer, in every mode; nil means the machine
// has none (commands then run unconfined, after the gate's yes).
func PerSessionTools(reg *tools.Registry, snapshots tools.SnapshotSaver, artifacts tools.ArtifactSaver, sb *sandbox.Sandbox) *ExecutorTools {
	var mu sync.Mutex
	execs := map[string]*tools.Executor{}
	et := &ExecutorTools{Registry: reg}
	et.Executor = func(t *engine.Turn) (*tools.Executor, error) {
		mu.Lock()
		defer mu.Unlock()
		key := t.SessionID + "\x00" + t.Workspace
		if e, ok := execs[key]; ok {
			return e, nil
		}
		ws, err := workspace.Open(t.Workspace)
		if err != nil {
			return nil, fmt.Errorf("open workspace %s: %w", t.Workspace, err)
		}
		if sb != nil && sb.Workspace() != ws.Dir() {
			// The sandbox lets commands write its own workspace: one
			// made for another would confine them to the wrong place.
			_ = ws.Close()
			return nil, fmt.Errorf("the sandbox was made for %s, not %s", sb.Workspace(), ws.Dir())
		}
		env := tools.NewEnv(ws, t.SessionID, snapshots)
		env.Sandbox = sb
		if r, ok := artifacts.(tools.ArtifactReader); ok {
			env.Artifacts = r
		}
		if et.ReadPolicy != nil {
			env.SetReadPolicy(et.ReadPolicy)
		}
		env.FetchPolicy = et.FetchPolicy
		env.PostHooks = et.PostHooks
		e, err := tools.NewExecutor(tools.ExecutorConfig{Registry: reg, Env: env, Artifacts: artifacts})
		if err != nil {
			_ = ws.Close()
			return nil, err
		}
		execs[key] = e
		return e, nil
	}
	return et
}

// Tools lists the registry's tools for the mode.
func (a *ExecutorTools) Tools(mode engine.Mode) []llm.ToolDef {
	specs := a.Registry.List(mode)
	out := make([]llm.ToolDef, len(specs))
	for i, s := range specs {
		out[i] = llm.ToolDef{Name: s.Name, Description: s.Description, Schema: s.Schema}
	}
	return out
}

// Run executes the calls; a session without a usable Executor gets an
// error result per call, so the model hears why nothing ran.
func (a *ExecutorTools) Run(ctx context.Context, host Host, t *engine.Turn, calls []llm.ToolCall) []llm.ToolResult {
	out := make([]llm.ToolResult, len(calls))
	exec, err := a.Executor(t)
	if err != nil {
		for i, c := range calls {
			out[i] = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "tools are unavailable: " + err.Error(), IsError: true}
		}
		return out
	}
	tcs := make([]tools.ToolCall, len(calls))
	for i, c := range calls {
		tcs[i] = tools.ToolCall{ID: c.ID, Name: c.Name, Input: c.Args}
		// A call the Executor leaves unanswered is closed, never re-run.
		out[i] = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: engine.InterruptedNotRerun, IsError: true}
	}
	for i, r := range exec.Execute(ctx, host, host, tcs) {
		if i < len(out) {
			out[i] = llm.ToolResult{CallID: calls[i].ID, Name: calls[i].Name, Content: r.Output, IsError: r.IsError}
		}
	}
	return out
}

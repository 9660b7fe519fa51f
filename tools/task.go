package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// Task is the task tool: it delegates a prompt to a child turn (a
// subagent) through the session (engine.Turn.SpawnChild) and returns the
// child's answer. The spawn itself needs no gate decision: it touches
// nothing, and every tool call of the child passes the gate under a mode
// no looser than the parent's. It is read-only and concurrency-safe for
// the Executor, so a batch of task calls starts together; the session
// admits read-only children up to its limit and writing ones one at a
// time.
type Task struct{}

// Spawner starts a child turn and waits for its end. The native runtime's
// turn (*engine.Turn) is one; the Executor hands it to the task tool when
// its Permitter is one.
type Spawner interface {
	SpawnChild(ctx context.Context, req engine.ChildRequest) (engine.ChildResult, error)
}

// Spec implements Tool.
func (Task) Spec() ToolSpec {
	return ToolSpec{Name: engine.TaskToolName, Description: description(engine.TaskToolName), ReadOnly: true, ConcurrencySafe: true,
		SkipPermission: true, Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"prompt":{"type":"string","description":"The complete brief for the subagent"},` +
			`"description":{"type":"string","description":"A few words saying what the subagent does"},` +
			`"runtime":{"type":"string","description":"Runtime to run on (default: this session's)"},` +
			`"model":{"type":"string","description":"Model of that runtime (default: its default)"},` +
			`"read_only":{"type":"boolean","description":"The subagent may not write (analysis-only mode)"},` +
			`"max_cycles":{"type":"integer","minimum":0,"description":"Lower cycle limit for the subagent"},` +
			`"budget_usd":{"type":"number","minimum":0,"description":"Lower budget for the subagent"},` +
			`"timeout_seconds":{"type":"number","minimum":0,"description":"Lower time limit for the subagent"}},` +
			`"required":["prompt","description"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (Task) Prepare(_ context.Context, _ *Env, input json.RawMessage) (Call, error) {
	var in engine.TaskInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, errors.New("prompt is empty: give the subagent a complete brief")
	}
	if in.MaxCycles < 0 || in.BudgetUSD < 0 || in.TimeoutSeconds < 0 {
		return nil, errors.New("max_cycles, budget_usd and timeout_seconds cannot be negative")
	}
	return taskCall{in: in}, nil
}

type taskCall struct{ in engine.TaskInput }

// Request implements Call; the spec skips the gate, so this is only what
// kz policy check shows.
func (c taskCall) Request() engine.PermissionRequest { return engine.PermissionRequest{} }

// Run implements Call.
func (c taskCall) Run(ctx context.Context, rc *RunContext) (string, error) {
	if rc.Spawn == nil {
		return "", errors.New("subagents are not available in this session")
	}
	res, err := rc.Spawn(ctx, engine.ChildRequest{ToolCallID: rc.ToolCallID, Prompt: c.in.Prompt, Runtime: c.in.Runtime,
		Model: c.in.Model, Description: c.in.Description, ReadOnly: c.in.ReadOnly,
		Limits: engine.Limits{MaxCycles: c.in.MaxCycles, BudgetUSD: c.in.BudgetUSD,
			Timeout: time.Duration(c.in.TimeoutSeconds * float64(time.Second))}})
	if err != nil {
		return "", err
	}
	out, failed := engine.TaskResultText(res)
	if failed {
		return "", errors.New(out)
	}
	return out, nil
}

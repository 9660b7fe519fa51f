package tools

import (
	"context"
	"fmt"
	"os"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
)

// PolicyCheck is `kz policy check`: it judges one tool call with the same
// code path as a real call. For kz's own tools the input goes through the
// tool's Prepare (strict decoding, path validation and resolution in the
// workspace) and the gate sees the request the Executor would send; input
// the tool rejects is reported as denied at the validation stage, because
// the Executor never runs it. Other tool names (another runtime's `Write`,
// an MCP tool) are decoded by permission.RequestFromInput.
func PolicyCheck(ctx context.Context, g *permission.Gate, in permission.PolicyInput) (permission.Report, error) {
	tool, ok := NewBuiltinRegistry().Lookup(in.Tool)
	if !ok || in.Request != nil {
		return g.PolicyCheck(ctx, in)
	}
	var err error
	if in.Workspace == "" {
		if in.Workspace, err = os.Getwd(); err != nil {
			return permission.Report{}, fmt.Errorf("policy check: %w", err)
		}
	}
	ws, err := workspace.Open(in.Workspace)
	if err != nil {
		return permission.Report{}, fmt.Errorf("policy check: %w", err)
	}
	defer func() { _ = ws.Close() }()
	env := NewEnv(ws, "", nil)
	env.policyOnly = true
	call, err := tool.Prepare(ctx, env, in.Input)
	if err != nil {
		reason := fmt.Sprintf("%s rejects this input, so the call would not run: %v", in.Tool, err)
		return permission.Report{Decision: engine.DecisionDeny, Stage: permission.StageValidation, Reason: reason,
			Tool: in.Tool, Kind: permission.KindOf(in.Tool), Subcommands: []string{},
			Stages: []permission.StageResult{{Stage: permission.StageValidation, Decision: engine.DecisionDeny, Reason: reason}}}, nil
	}
	req := gateRequest(call, "", in.Tool, in.Input)
	in.Request = &req
	return g.PolicyCheck(ctx, in)
}

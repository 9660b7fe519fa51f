package patch

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// GateGuard is the PathGuard that asks the permission gate's safety stage
// (the bypass-immune checks: protected paths such as .git, agent and kz
// configuration, shell startup files, credentials, and anything outside
// the workspace) about each path a proposal writes, deletes or renames.
//
// Only the safety stage decides here. Whether the person must be asked is
// the engine's business (it asks once for the whole proposal, as the
// apply_patch tool); the guard exists so that a path the gate would never
// allow is refused during validation, before any preview, and so that the
// source side of a rename and a path reached through a symbolic link are
// judged too.
type GateGuard struct {
	Gate *permission.Gate
	// Workspace is the workspace's absolute path, against which the gate
	// resolves the relative paths it is given.
	Workspace string
}

var _ PathGuard = GateGuard{}

// CheckWrite implements PathGuard.
func (g GateGuard) CheckWrite(ctx context.Context, rel string) error {
	if g.Gate == nil {
		return errors.New("no permission gate is configured")
	}
	rep := g.Gate.Evaluate(ctx, engine.GateQuery{
		Workspace: g.Workspace,
		Mode:      engine.ModePatchProposal,
		Request:   engine.PermissionRequest{Tool: engine.ToolApplyPatch, Paths: []string{rel}, Write: true},
	})
	for _, s := range rep.Stages {
		if s.Stage == permission.StageSafety && s.Decision == engine.DecisionDeny {
			return fmt.Errorf("the permission gate refuses it: %s", s.Reason)
		}
	}
	return nil
}

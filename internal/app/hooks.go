package app

import (
	"context"
	"os/exec"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/hooks"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// Hooks builds the session's hook runner from the user's [hooks] and, once
// the folder is trusted, the project's (config refuses them before). It is
// nil when no hook is configured, so that the gate has no hook stage.
func (e *Env) Hooks() (*hooks.Runner, error) {
	c := e.Config
	if len(c.UserHooks) == 0 && len(c.ProjectHooks) == 0 {
		return nil, nil
	}
	return hooks.New(hooks.Options{User: c.UserHooks, Project: c.ProjectHooks, ProjectTrusted: c.ProjectTrusted, Workspace: e.Workspace})
}

// sandboxStarter starts hooks in the session's OS sandbox under the
// profile of a command the person allowed (workspace-write, with the
// network as [sandbox] network says): a hook is the person's own code, so
// it may write the workspace and reach a server, but, like every command
// of the session, not .git, kz's files or the credentials in the home.
type sandboxStarter struct {
	sb      *sandbox.Sandbox
	network bool
}

func (s sandboxStarter) Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error) {
	return s.sb.Command(ctx, engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: s.network},
		sandbox.Spec{Argv: argv, Dir: dir, Env: env})
}

func (s sandboxStarter) SetupError(cmd *exec.Cmd) error { return s.sb.SetupError(cmd) }

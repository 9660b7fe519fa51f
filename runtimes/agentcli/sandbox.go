package agentcli

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// cliConfinement is the profile every agent CLI process runs under: it
// may write the workspace (never its protected paths) and reach the
// network, which it needs for its endpoint or kz's credential proxy. A
// whole CLI runs under one profile, since what it will run is not known in
// advance; every command it runs passes kz's gate first, which asks about
// git commands that write and denies destructive ones, so the profile lets
// git write the repository (a `git commit` the person allowed works) but
// never its config, hooks or info, which are what would make git run
// code later.
var cliConfinement = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: true, Git: true}

// sandboxConfiner confines agent CLIs with a session's sandbox.
type sandboxConfiner struct{ sb *sandbox.Sandbox }

// NewConfiner returns the confiner of a session's sandbox, or nil (the
// CLIs run unconfined) when there is no sandbox or it confines nothing on
// this machine.
func NewConfiner(sb *sandbox.Sandbox) Confiner {
	if sb == nil || sb.Status().Kind == sandbox.KindNone {
		return nil
	}
	return sandboxConfiner{sb: sb}
}

// Command implements Confiner.
func (c sandboxConfiner) Command(ctx context.Context, argv []string, dir string, env []string, writable []string) (*exec.Cmd, error) {
	cmd, err := c.sb.Command(ctx, cliConfinement, sandbox.Spec{Argv: argv, Dir: dir, Env: env, ExtraWritable: writable, KeepNetwork: true})
	if err != nil {
		return nil, fmt.Errorf("confine %s: %w", argv[0], err)
	}
	return cmd, nil
}

// Full implements Confiner.
func (c sandboxConfiner) Full() bool { return c.sb.Status().Full }

// Describe implements Confiner.
func (c sandboxConfiner) Describe() string { return DescribeStatus(c.sb.Status()) }

// DescribeStatus says in one line how the agent CLIs run on a machine
// whose sandbox is st, for kz runtimes.
func DescribeStatus(st sandbox.Status) string {
	switch st.Kind {
	case sandbox.KindBubblewrap:
		return "each CLI runs under bubblewrap " + st.BwrapVersion + ": it may write the workspace and its own home, not .git's config and hooks or other protected paths; " +
			"home credentials and other processes are hidden; network on"
	case sandbox.KindLandlock:
		return fmt.Sprintf("each CLI's writes are confined by Landlock ABI %d to the workspace, its own home and a temp dir "+
			"(.git and protected paths stay writable; network, other processes and credentials are not confined)", st.LandlockABI)
	}
	return Unconfined + ": " + st.Reason
}

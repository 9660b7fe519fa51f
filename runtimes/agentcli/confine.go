package agentcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/kaizen-code/kz/internal/proc"
)

// Confiner starts agent CLI processes under the OS sandbox, so that a
// command the agent runs after kz's approval cannot write outside the
// workspace or into its .git, whatever the CLI's own sandbox does.
type Confiner interface {
	// Command returns the unstarted command that runs argv (argv[0] an
	// absolute path) in dir with exactly env, under the workspace-write
	// profile with network (the CLI must reach its endpoint, or kz's
	// credential proxy on the host's loopback), with writable (the CLI's
	// own configuration home) writable as well. The command is in its own
	// process group; ctx bounds its life.
	Command(ctx context.Context, argv []string, dir string, env []string, writable []string) (*exec.Cmd, error)
	// Full reports whether the confinement is complete (bubblewrap: its
	// own PID namespace, which ends with the command, and hidden
	// credentials), not only of writes.
	Full() bool
	// Describe says in one line how CLI processes run here, for kz
	// runtimes.
	Describe() string
}

// Unconfined is the line kz runtimes shows for a CLI started without a
// sandbox.
const Unconfined = "the CLI runs unconfined: no OS sandbox here (kz's gate still decides every tool call it reports)"

// Command builds the command of an agent CLI: under c when there is one,
// else as a plain process in its own process group (proc.OwnGroup: so
// that signals reach the CLI and the children that stay in its group, and
// a Ctrl-C in kz's terminal does not reach it directly); ctx bounds its
// life either way. The writable directories are
// created first: a directory must exist to be mounted writable, and a CLI
// creates its home on first use anyway.
func Command(ctx context.Context, c Confiner, argv []string, dir string, env []string, writable []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("agent CLI: no command")
	}
	if c == nil {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		proc.OwnGroup(cmd)
		return cmd, nil
	}
	for _, d := range writable {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("agent CLI: its home %s: %w", d, err)
		}
	}
	cmd, err := c.Command(ctx, argv, dir, env, writable)
	if err != nil {
		return nil, fmt.Errorf("agent CLI: sandbox: %w", err)
	}
	return cmd, nil
}

// Tree is the process tree of a CLI started by Command under c with pid
// and the marker entry of its environment. Under a full confinement every
// descendant lives in the sandbox's PID namespace, which ends with the
// command, so killing the command kills the tree without looking for its
// marked processes (proc.Tree.PIDNamespace).
func Tree(c Confiner, pid int, marker string) proc.Tree {
	return proc.Tree{Pgid: pid, Marker: marker, PIDNamespace: c != nil && c.Full()}
}

// Describe is how CLI processes run under c, for kz runtimes.
func Describe(c Confiner) string {
	if c == nil {
		return Unconfined
	}
	return c.Describe()
}

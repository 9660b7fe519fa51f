//go:build linux

package sandbox

// Every property of the per-command bwrap is tested through both ways
// bubblewrap runs a command: its own bwrap (Command) and the session's
// sandbox server of the confinement (Cmd). The tests are written once,
// as test…(t, route), and run here under both.

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// route is how bubblewrap runs a fixture's commands.
type route string

const (
	// perCommand: Command, one bwrap per command.
	perCommand route = "per-command"
	// viaServer: Cmd, on the sandbox server of the confinement; the
	// fixture checks that each command that may run there did.
	viaServer route = "server"
)

func forRoutes(t *testing.T, test func(*testing.T, route)) {
	t.Helper()
	for _, r := range []route{perCommand, viaServer} {
		t.Run(string(r), func(t *testing.T) { test(t, r) })
	}
}

// newRouteFixture is a bubblewrap fixture whose commands take route r.
func newRouteFixture(t testing.TB, r route) *fixture {
	t.Helper()
	f := newFixture(t, KindBubblewrap)
	f.route = r
	return f
}

// mayUseServer reports whether spec is one Cmd runs on a server.
func mayUseServer(spec Spec) bool { return len(spec.ExtraWritable) == 0 && !spec.KeepNetwork }

// runOnServer is runSpec through Cmd.
func (f *fixture) runOnServer(t testing.TB, ctx context.Context, c engine.Confinement, spec Spec) result {
	t.Helper()
	cmd, err := f.sb.Cmd(ctx, c, spec)
	if err != nil {
		t.Fatalf("Cmd: %v", err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res := result{out: out.String(), setupErr: cmd.SetupError()}
	if onServer := cmd.srv != nil; onServer != mayUseServer(spec) {
		t.Fatalf("on a server: %v, want %v (%v)", onServer, mayUseServer(spec), f.sb.srv.off)
	}
	var ee *ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return res
}

// testCmd is a command of either route, started and waited for by the
// test.
type testCmd interface {
	Start() error
	Wait() error
	SetupError() error
}

// execTestCmd is Command's exec.Cmd as a testCmd.
type execTestCmd struct {
	cmd *exec.Cmd
	sb  *Sandbox
}

func (c *execTestCmd) Start() error      { return c.cmd.Start() }
func (c *execTestCmd) Wait() error       { return c.cmd.Wait() }
func (c *execTestCmd) SetupError() error { return c.sb.SetupError(c.cmd) }

// serverTestCmd is a Cmd that must run on a server.
type serverTestCmd struct{ *Cmd }

func (c *serverTestCmd) Start() error {
	if err := c.Cmd.Start(); err != nil {
		return err
	}
	if c.srv == nil {
		_ = c.Wait()
		return errors.New("the command did not run on a server")
	}
	return nil
}

// command prepares spec under c on the fixture's route, without filling
// in the environment.
func (f *fixture) command(ctx context.Context, c engine.Confinement, spec Spec) (testCmd, error) {
	if f.route == viaServer {
		cmd, err := f.sb.Cmd(ctx, c, spec)
		if err != nil {
			return nil, err
		}
		return &serverTestCmd{Cmd: cmd}, nil
	}
	cmd, err := f.sb.Command(ctx, c, spec)
	if err != nil {
		return nil, err
	}
	return &execTestCmd{cmd: cmd, sb: f.sb}, nil
}

// output runs spec under c on the fixture's route and returns its
// standard output.
func (f *fixture) output(ctx context.Context, c engine.Confinement, spec Spec) ([]byte, error) {
	var out bytes.Buffer
	if f.route == viaServer {
		cmd, err := f.sb.Cmd(ctx, c, spec)
		if err != nil {
			return nil, err
		}
		cmd.Stdout = &out
		err = cmd.Run()
		if serr := cmd.SetupError(); serr != nil {
			return nil, serr
		}
		if cmd.srv == nil {
			return nil, errors.New("the command did not run on a server")
		}
		return out.Bytes(), err
	}
	cmd, err := f.sb.Command(ctx, c, spec)
	if err != nil {
		return nil, err
	}
	cmd.Stdout = &out
	err = cmd.Run()
	if serr := f.sb.SetupError(cmd); serr != nil {
		return nil, serr
	}
	return out.Bytes(), err
}

// The property tests, under both routes.

func TestNetworkFollowsConfinement(t *testing.T)     { forRoutes(t, testNetworkFollowsConfinement) }
func TestProcessesInvisible(t *testing.T)            { forRoutes(t, testProcessesInvisible) }
func TestCommandTreeEndsWithTheCall(t *testing.T)    { forRoutes(t, testCommandTreeEndsWithTheCall) }
func TestCancelEndsTheTree(t *testing.T)             { forRoutes(t, testCancelEndsTheTree) }
func TestHomeCredentialsHidden(t *testing.T)         { forRoutes(t, testHomeCredentialsHidden) }
func TestOwnHomeStaysVisible(t *testing.T)           { forRoutes(t, testOwnHomeStaysVisible) }
func TestMinimalEnvironment(t *testing.T)            { forRoutes(t, testMinimalEnvironment) }
func TestSetupFailureReported(t *testing.T)          { forRoutes(t, testSetupFailureReported) }
func TestReadOnlyProfileWritesOnlyTemp(t *testing.T) { forRoutes(t, testReadOnlyProfileWritesOnlyTemp) }
func TestReadOnlyHidesWorkspaceCredentials(t *testing.T) {
	forRoutes(t, testReadOnlyHidesWorkspaceCredentials)
}
func TestTempDirPrivateAndRemoved(t *testing.T) { forRoutes(t, testTempDirPrivateAndRemoved) }
func TestWorkspaceWriteKeepsProtectedPathsReadOnly(t *testing.T) {
	forRoutes(t, testWorkspaceWriteKeepsProtectedPathsReadOnly)
}
func TestNewRepositoryProtectedFromTheNextCommand(t *testing.T) {
	forRoutes(t, testNewRepositoryProtectedFromTheNextCommand)
}
func TestGitCarveOut(t *testing.T)               { forRoutes(t, testGitCarveOut) }
func TestGitCarveOutLinkedWorktree(t *testing.T) { forRoutes(t, testGitCarveOutLinkedWorktree) }

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
)

// Cmd is a sandboxed command that kz's bash tool and a proposal's VERIFY
// runner start and wait for like an exec.Cmd. Under bubblewrap it runs on
// the session's sandbox server of its confinement where it can (see
// server_linux.go): no new bwrap, no new process on the host, since kz
// hands the command's descriptors to the server itself. Otherwise (the
// server is busy with another command, cannot start, or its mounts are
// stale; Landlock; no sandbox) it runs as the exec.Cmd of Command.
//
// Set Stdin, Stdout and Stderr before Start; nil means the null device.
// An *os.File is passed to the command as it is; any other writer is
// copied through a pipe, as exec.Cmd does (one pipe when Stdout and
// Stderr are the same writer). A Stdin that is not a file is copied by
// exec.Cmd, so that command runs under its own bwrap.
type Cmd struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	sb   *Sandbox
	ctx  context.Context
	conf engine.Confinement
	spec Spec
	// plan is the command's per-command mount plan when it may run on a
	// server; nil otherwise.
	plan []string
	// ex runs the command when it is not on a server.
	ex *exec.Cmd
	// srv is the command on a server, once started there.
	srv *serverCmd

	started, waited bool
	// finished says the end of a command on a server is known.
	finished bool
	status   ExitError
	setupErr error
	// The host's side of the descriptors: closed after Start, and after
	// Wait (when the copying is over).
	closeAfterStart, closeAfterWait []*os.File
	copying                         sync.WaitGroup
	copyErr                         error
	copyMu                          sync.Mutex
}

// ExitError is the error of Wait and Run for a command that did not exit
// with status 0.
type ExitError struct {
	// Code is the exit status; -1 when a signal ended the command.
	Code int
	// Signal is the signal that ended the command, or 0.
	Signal syscall.Signal
}

func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return "signal: " + e.Signal.String()
	}
	return "exit status " + strconv.Itoa(e.Code)
}

// ExitCode is the status as a shell reports it: the exit status, or 128
// plus the signal that ended the command.
func (e *ExitError) ExitCode() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

// waitDelay bounds how long Wait waits, once the command has ended, for
// the pipes it copies to close (a process outside the sandbox may hold
// one), and how long a kill may take before the server itself is killed.
const waitDelay = 2 * time.Second

// Cmd returns an unstarted command that runs spec under confinement c,
// with Command's arguments and guarantees; see the type's comment for
// where it runs. ctx bounds the preparation and the command's life: when
// it ends, every process of the command is killed.
func (s *Sandbox) Cmd(ctx context.Context, c engine.Confinement, spec Spec) (*Cmd, error) {
	cmd := &Cmd{sb: s, ctx: ctx, conf: c, spec: spec}
	if s.serverEligible(spec) {
		conf, spec, err := s.checkSpec(c, spec)
		if err != nil {
			return nil, err
		}
		if spec.Env == nil {
			spec.Env = childenv.Build(os.Environ(), childenv.Spec{})
		}
		spec.Env = childenv.Set(spec.Env, "TMPDIR", "/tmp")
		plan, err := s.serverPlan(ctx, conf, spec)
		if err != nil {
			return nil, err
		}
		cmd.conf, cmd.spec, cmd.plan = conf, spec, plan
		return cmd, nil
	}
	ex, err := s.Command(ctx, c, spec)
	if err != nil {
		return nil, err
	}
	cmd.ex = ex
	return cmd, nil
}

// Wrap makes ex, an unstarted command that runs without a sandbox (a
// machine without one, after a person's yes), a Cmd. ex must run in its
// own process group (SysProcAttr.Setpgid), which Signal signals.
func Wrap(ex *exec.Cmd) *Cmd { return &Cmd{ex: ex} }

// Start starts the command.
func (c *Cmd) Start() error {
	if c.started {
		return errors.New("sandbox: command already started")
	}
	c.started = true
	if c.plan != nil {
		ran, err := c.startOnServer()
		if ran || err != nil {
			return err
		}
		// No server could take it: its own bwrap.
		ex, err := c.sb.Command(c.ctx, c.conf, c.spec)
		if err != nil {
			return err
		}
		c.ex = ex
	}
	c.ex.Stdin, c.ex.Stdout, c.ex.Stderr = c.Stdin, c.Stdout, c.Stderr
	return c.ex.Start()
}

// Wait waits for the command and every process it started to end, and for
// its output to be copied. A non-zero status is an *ExitError.
func (c *Cmd) Wait() error {
	if !c.started {
		return errors.New("sandbox: command not started")
	}
	if c.waited {
		return errors.New("sandbox: Wait was already called")
	}
	if c.srv == nil && (c.ex == nil || c.ex.Process == nil) {
		// Start failed: nothing to wait for. SetupError still releases
		// what Start prepared.
		return errors.New("sandbox: the command did not start")
	}
	c.waited = true
	if c.srv != nil {
		return c.waitOnServer()
	}
	err := c.ex.Wait()
	if c.sb != nil {
		c.setupErr = c.sb.SetupError(c.ex)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		c.status.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			c.status.Signal = ws.Signal()
		}
		return &ExitError{Code: c.status.Code, Signal: c.status.Signal}
	}
	return err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Signal sends sig to the command's process group (on a server, SIGKILL
// ends every process the command started, whatever its group). After
// Wait it still reaches what an unsandboxed command left in its group;
// a sandboxed command has left nothing.
func (c *Cmd) Signal(sig syscall.Signal) error {
	if !c.started {
		return errors.New("sandbox: command not started")
	}
	if c.srv != nil {
		return c.srv.signal(sig)
	}
	if c.ex == nil || c.ex.Process == nil {
		return nil
	}
	if err := syscall.Kill(-c.ex.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sandbox: signal: %w", err)
	}
	return nil
}

// ExitCode is the command's status as a shell reports it (128 plus the
// signal that ended it), or -1 before Wait returned.
func (c *Cmd) ExitCode() int {
	if !c.waited {
		return -1
	}
	return c.status.ExitCode()
}

// SetupError reports, after Wait (or after Start failed), whether the
// sandbox failed before the command ran, as (*Sandbox).SetupError does
// for Command's commands. Call it once.
func (c *Cmd) SetupError() error {
	if c.srv == nil && c.ex != nil && c.sb != nil && !c.waited {
		return c.sb.SetupError(c.ex)
	}
	return c.setupErr
}

// stdio returns the three descriptors of the command, making pipes and
// copying goroutines for readers and writers that are not files.
func (c *Cmd) stdio() ([3]*os.File, error) {
	var fs [3]*os.File
	in, err := c.input()
	if err != nil {
		return fs, err
	}
	fs[0] = in
	if fs[1], err = c.output(c.Stdout); err != nil {
		return fs, err
	}
	if c.Stderr != nil && sameWriter(c.Stdout, c.Stderr) {
		fs[2] = fs[1]
	} else if fs[2], err = c.output(c.Stderr); err != nil {
		return fs, err
	}
	return fs, nil
}

// input is the command's stdin: the null device, or the caller's file
// (a command with another reader does not run on a server).
func (c *Cmd) input() (*os.File, error) {
	if f, ok := c.Stdin.(*os.File); ok {
		return f, nil
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	c.closeAfterStart = append(c.closeAfterStart, f)
	return f, nil
}

func (c *Cmd) output(w io.Writer) (*os.File, error) {
	switch w := w.(type) {
	case nil:
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		c.closeAfterStart = append(c.closeAfterStart, f)
		return f, nil
	case *os.File:
		return w, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	c.closeAfterStart = append(c.closeAfterStart, pw)
	c.closeAfterWait = append(c.closeAfterWait, pr)
	c.copying.Add(1)
	go func() {
		defer c.copying.Done()
		_, err := io.Copy(w, pr)
		if err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
			c.setCopyErr(err)
		}
	}()
	return pw, nil
}

func (c *Cmd) setCopyErr(err error) {
	c.copyMu.Lock()
	defer c.copyMu.Unlock()
	if c.copyErr == nil {
		c.copyErr = err
	}
}

// finishCopying waits for the copying goroutines, at most waitDelay, then
// stops them, and closes the host's ends.
func (c *Cmd) finishCopying() error {
	done := make(chan struct{})
	go func() {
		c.copying.Wait()
		close(done)
	}()
	t := time.NewTimer(waitDelay)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		for _, f := range c.closeAfterWait {
			_ = f.SetDeadline(time.Now())
		}
		<-done
		c.setCopyErr(exec.ErrWaitDelay)
	}
	closeFiles(c.closeAfterWait)
	c.closeAfterWait = nil
	c.copyMu.Lock()
	defer c.copyMu.Unlock()
	return c.copyErr
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// sameWriter reports whether a and b are the same writer, without
// panicking on incomparable types.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// Bash limits.
const (
	DefaultBashTimeout = 2 * time.Minute
	MaxBashTimeout     = 10 * time.Minute
	DefaultKillGrace   = 2 * time.Second
	// MaxCommandBytes refuses absurdly long commands before they reach a
	// shell.
	MaxCommandBytes = 256 << 10
	// bashHead and bashTail are how much of the output is kept from the
	// beginning and the end; the middle of a longer output is dropped.
	bashHead = 20000
	bashTail = 10000
	// progressEvery throttles tool_call_progress events.
	progressEvery = 200 * time.Millisecond
	// maxProgressChunk bounds one progress event's text.
	maxProgressChunk = 4096
	// pipeDrain is how long the output is read after the command and its
	// process group are gone, for descendants that left the group.
	pipeDrain = time.Second
)

// Bash is the bash tool.
type Bash struct{}

type bashInput struct {
	Command     string `json:"command"`
	TimeoutMS   int64  `json:"timeout_ms,omitempty"`
	Description string `json:"description,omitempty"`
}

// Spec implements Tool.
func (Bash) Spec() ToolSpec {
	return ToolSpec{Name: "bash", Description: description("bash"), Destructive: true, MaxResultBytes: 2 * (bashHead + bashTail),
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command to run with /bin/bash -c"},` +
			`"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"Timeout in milliseconds (default 120000)"},` +
			`"description":{"type":"string","description":"Five to ten words saying what the command does"}},` +
			`"required":["command"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (Bash) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in bashInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return nil, errors.New("command is empty")
	}
	if len(in.Command) > MaxCommandBytes {
		return nil, fmt.Errorf("command is %d bytes, more than %d", len(in.Command), MaxCommandBytes)
	}
	if strings.ContainsRune(in.Command, 0) {
		return nil, errors.New("command contains a NUL byte")
	}
	timeout := env.BashTimeout
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	if in.TimeoutMS < 0 {
		return nil, errors.New("timeout_ms must be positive")
	}
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, MaxBashTimeout)
	}
	sandboxed := env.Sandbox != nil && env.Sandbox.Status().Kind != sandbox.KindNone
	return &bashCall{command: in.Command, timeout: timeout, sandboxed: sandboxed}, nil
}

type bashCall struct {
	command string
	timeout time.Duration
	// sandboxed says an OS sandbox confines the command (under the
	// profile the gate's answer gives it).
	sandboxed bool
}

func (c *bashCall) Request() engine.PermissionRequest {
	return engine.PermissionRequest{Command: c.command, Sandboxed: c.sandboxed}
}

func (c *bashCall) Run(ctx context.Context, rc *RunContext) (string, error) {
	env := rc.Env
	grace := env.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	pr, pw, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	defer func() { _ = pr.Close() }()
	// The command's own context outlives ctx, so that when ctx ends the
	// group first gets SIGTERM and the grace period below; stopping
	// runCtx then kills it. (Under a per-command bwrap the SIGTERM already
	// ends every process of the command: bwrap dies, and the kernel kills
	// its PID namespace. On a sandbox server it reaches the command's
	// group, and SIGKILL every process of the command.)
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	cmd, err := c.buildCommand(runCtx, rc)
	if err != nil {
		_ = pw.Close()
		return "", err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	rc.Emit(engine.Event{Type: engine.EventCommandStarted, Command: c.command})
	if err := cmd.Start(); err != nil {
		_ = pw.Close()
		_ = cmd.SetupError()
		return "", fmt.Errorf("bash: start: %w", err)
	}
	_ = pw.Close()

	out := proc.NewHeadTail(bashHead, bashTail)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		c.pump(pr, out, rc)
	}()

	var waitErr error
	waitDone := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(waitDone)
	}()

	killed := ""
	select {
	case <-waitDone:
	case <-ctx.Done():
		killed = "interrupted"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			killed = fmt.Sprintf("timed out after %s", c.timeout)
		}
		// The hard stop (see WithHardStop) ends the grace at once.
		proc.StopUnless(waitDone, hardStop(ctx), grace, func() { _ = cmd.Signal(syscall.SIGTERM) }, func() { _ = cmd.Signal(syscall.SIGKILL) })
	}
	// The command is over: whatever it left running in its group (a
	// background job) is stopped, so nothing outlives the call.
	_ = cmd.Signal(syscall.SIGKILL)
	select {
	case <-readDone:
	case <-time.After(pipeDrain):
		// A descendant that left the group still holds the pipe; stop
		// reading rather than wait for it.
		_ = pr.SetReadDeadline(time.Now())
		<-readDone
	}

	code := cmd.ExitCode()
	rc.Emit(engine.Event{Type: engine.EventCommandFinished, Command: c.command, ExitCode: &code})
	if err := cmd.SetupError(); err != nil && killed == "" {
		// The sandbox failed before the command ran: what the output
		// holds is the sandbox's own message.
		return strings.TrimSpace(out.String()), fmt.Errorf("bash: %w", err)
	}

	text := out.String()
	var sb strings.Builder
	sb.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		sb.WriteString("\n")
	}
	if killed != "" {
		fmt.Fprintf(&sb, "[command %s; process group killed]\n", killed)
	}
	if code != 0 {
		fmt.Fprintf(&sb, "[exit code %d]\n", code)
	}
	if killed != "" {
		return sb.String(), fmt.Errorf("command %s", killed)
	}
	var exitErr *sandbox.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return sb.String(), fmt.Errorf("bash: %w", waitErr)
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}

// buildCommand builds the command: under the session's sandbox with the
// confinement of the gate's answer (on the sandbox server of that
// confinement where it can), or unconfined in its own process group when
// the session has no sandbox (a machine without one, where the gate asked
// the person first).
func (c *bashCall) buildCommand(ctx context.Context, rc *RunContext) (*sandbox.Cmd, error) {
	env := rc.Env
	argv := []string{"/bin/bash", "-c", c.command}
	cmdEnv := childenv.Build(os.Environ(), childenv.Spec{Pass: env.PassEnv})
	if sb := env.Sandbox; sb != nil {
		cmd, err := sb.Cmd(ctx, rc.Confinement, sandbox.Spec{Argv: argv, Dir: env.WS.Dir(), Env: cmdEnv})
		if err != nil {
			return nil, fmt.Errorf("bash: the command was not run: %w", err)
		}
		return cmd, nil
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = env.WS.Dir(), cmdEnv
	// Own process group, so the whole tree can be signalled at once.
	proc.OwnGroup(cmd)
	return sandbox.Wrap(cmd), nil
}

// pump copies the command's output into out and sends throttled progress
// events.
func (c *bashCall) pump(pr *os.File, out *proc.HeadTail, rc *RunContext) {
	buf := make([]byte, 32<<10)
	var pending strings.Builder
	last := time.Time{}
	flush := func() {
		if pending.Len() == 0 {
			return
		}
		s := pending.String()
		if len(s) > maxProgressChunk {
			s = s[len(s)-maxProgressChunk:]
		}
		rc.Emit(engine.Event{Type: engine.EventToolCallProgress, ToolCallID: rc.ToolCallID, Tool: "bash", Output: s})
		pending.Reset()
		last = time.Now()
	}
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			_, _ = out.Write(buf[:n])
			if pending.Len() < 4*maxProgressChunk {
				pending.Write(buf[:n])
			}
			if time.Since(last) >= progressEvery {
				flush()
			}
		}
		if err != nil {
			break
		}
	}
	flush()
}

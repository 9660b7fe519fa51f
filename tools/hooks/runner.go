package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
)

// Runner runs the configured hooks of one session. It is safe for
// concurrent use.
type Runner struct {
	hooks     []hook
	workspace string
	environ   []string

	mu    sync.RWMutex
	start Starter
}

// Starter starts a hook's process. The session's OS sandbox implements it
// (internal/app), so that hooks run confined like the tools' commands;
// without one, hooks run as plain processes in their own group.
type Starter interface {
	// Command returns an unstarted command running argv in dir with
	// exactly env, in its own process group, killed with that group when
	// ctx ends.
	Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error)
	// SetupError says, after Wait, whether the confinement itself failed
	// (the hook then did not run).
	SetupError(cmd *exec.Cmd) error
}

// Options configure a Runner.
type Options struct {
	// User and Project are the hooks tables of the two config files.
	// Project hooks run only when ProjectTrusted: before the person
	// trusts the folder, nothing from the project starts a process.
	User, Project  Config
	ProjectTrusted bool
	// Workspace is the hooks' working directory and CLAUDE_PROJECT_DIR.
	Workspace string
	// Environ is kz's environment that childenv filters for the hooks;
	// nil means os.Environ().
	Environ []string
}

// New compiles the hooks; a malformed one is an error that names it.
func New(o Options) (*Runner, error) {
	r := &Runner{workspace: o.Workspace, environ: o.Environ, start: plainStarter{}}
	if r.environ == nil {
		r.environ = os.Environ()
	}
	user, err := compile(o.User, SourceUser)
	if err != nil {
		return nil, fmt.Errorf("user hooks: %w", err)
	}
	r.hooks = user
	if o.ProjectTrusted {
		proj, err := compile(o.Project, SourceProject)
		if err != nil {
			return nil, fmt.Errorf("project hooks: %w", err)
		}
		r.hooks = append(r.hooks, proj...)
	}
	return r, nil
}

// SetStarter makes later hooks start through s (the session's sandbox,
// which is built after the gate that holds the runner).
func (r *Runner) SetStarter(s Starter) {
	r.mu.Lock()
	r.start = s
	r.mu.Unlock()
}

// Has reports whether any hook is configured for ev.
func (r *Runner) Has(ev Event) bool {
	if r == nil {
		return false
	}
	for _, h := range r.hooks {
		if h.event == ev {
			return true
		}
	}
	return false
}

// Input is the JSON a hook reads on stdin: Claude Code's fields, and
// kz's own (kz_*) that say which runtime and tool name the call had.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  Event           `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	StopHookActive *bool           `json:"stop_hook_active,omitempty"`
	Source         string          `json:"source,omitempty"`
	Message        string          `json:"message,omitempty"`
	// NotificationType is the Notification hooks' matcher value; kz
	// sends "permission_prompt".
	NotificationType string `json:"notification_type,omitempty"`
	Runtime          string `json:"kz_runtime,omitempty"`
	Tool             string `json:"kz_tool,omitempty"`
}

// Result is what one hook did.
type Result struct {
	// Command is the hook's command line and Source its file.
	Command string
	Source  Source
	// ExitCode is the hook's exit status (2 blocks, with Stderr as the
	// message; any other non-zero status is an error that blocks
	// nothing).
	ExitCode int
	Stderr   string
	// Output is the hook's JSON answer, Text its stdout when that is not
	// JSON.
	Output *Output
	Text   string
	// Err says the hook failed to give an answer: it could not start,
	// ran past its timeout, was cancelled, or wrote malformed JSON.
	Err error
}

// Blocked reports whether the hook exited with status 2.
func (r Result) Blocked() bool { return r.Err == nil && r.ExitCode == 2 }

// maxOutput bounds what kz keeps of a hook's stdout and stderr; an
// answer longer than that is malformed.
const maxOutput = 1 << 20

// Run runs every hook of ev whose matcher matches one of names (the
// Claude Code name of a tool and kz's or the runtime's own; nothing for
// events without a matcher) with in on stdin, all at once as Claude Code
// does, and returns their results in configuration order.
func (r *Runner) Run(ctx context.Context, ev Event, names []string, in Input) []Result {
	if r == nil {
		return nil
	}
	var sel []hook
	for _, h := range r.hooks {
		if h.event == ev && matches(h, names) {
			sel = append(sel, h)
		}
	}
	if len(sel) == 0 {
		return nil
	}
	in.HookEventName = ev
	if in.Cwd == "" {
		in.Cwd = r.workspace
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		// Input holds only strings and JSON already validated.
		return []Result{{Command: sel[0].command, Source: sel[0].source, Err: fmt.Errorf("encode hook input: %w", err)}}
	}
	r.mu.RLock()
	st := r.start
	r.mu.RUnlock()
	out := make([]Result, len(sel))
	var wg sync.WaitGroup
	for i, h := range sel {
		wg.Go(func() { out[i] = r.runOne(ctx, st, h, stdin) })
	}
	wg.Wait()
	return out
}

func matches(h hook, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n != "" && h.match(n) {
			return true
		}
	}
	return false
}

// runOne runs one hook to its end or its timeout.
func (r *Runner) runOne(ctx context.Context, st Starter, h hook, stdin []byte) Result {
	res := Result{Command: h.command, Source: h.source}
	hctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	env := childenv.Build(r.environ, childenv.Spec{})
	env = childenv.Set(env, "CLAUDE_PROJECT_DIR", r.workspace)
	env = childenv.Set(env, "KZ_PROJECT_DIR", r.workspace)
	env = childenv.Set(env, "KZ_HOOK_EVENT", string(h.event))
	cmd, err := st.Command(hctx, []string{"/bin/sh", "-c", h.command}, r.workspace, env)
	if err != nil {
		res.Err = fmt.Errorf("start: %w", err)
		return res
	}
	var stdout, stderr capped
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res.Stderr = strings.TrimSpace(stderr.String())
	switch {
	case ctx.Err() != nil:
		res.Err = fmt.Errorf("cancelled: %w", ctx.Err())
		return res
	case hctx.Err() != nil:
		res.Err = fmt.Errorf("timed out after %s", h.timeout)
		return res
	}
	if serr := st.SetupError(cmd); serr != nil {
		res.Err = fmt.Errorf("sandbox: %w", serr)
		return res
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.Err = fmt.Errorf("killed: %w", err)
		}
		return res
	case err != nil:
		res.Err = fmt.Errorf("run: %w", err)
		return res
	}
	if stdout.over || stderr.over {
		res.Err = fmt.Errorf("its output exceeds %d bytes", maxOutput)
		return res
	}
	res.Output, res.Text, res.Err = parseOutput(stdout.Bytes(), h.event)
	return res
}

// capped keeps the first maxOutput bytes written to it and notes the
// rest, so a hook that floods its output cannot exhaust kz's memory.
type capped struct {
	bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// plainStarter runs a hook without a sandbox, in its own process group.
type plainStarter struct{}

func (plainStarter) Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	proc.OwnGroup(cmd)
	return cmd, nil
}

func (plainStarter) SetupError(*exec.Cmd) error { return nil }

// Package claudecode drives the real Claude Code CLI (`claude`) as a kz
// runtime. The CLI runs as a subprocess in its own process group and speaks
// stream-json on stdin and stdout; every tool call it wants to make arrives
// as a can_use_tool control request, which this package turns into a
// runtime-neutral engine.PermissionRequest so that kz's gate and the person
// decide, whatever Claude's own settings say.
//
// One CLI process is kept alive per kz session across turns (the CLI starts
// a new system/init for each user message); it is restarted with --resume
// when the mode changes, after it died, or when kz asks for another of
// Claude's sessions.
package claudecode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/tools/mcp"
)

// Config configures one Claude Code runtime. The lead maps
// `[runtimes.NAME] kind = "claude-code"` to it.
type Config struct {
	// Name is the runtime's name in kz (e.g. "claude").
	Name string
	// Command is the CLI to run: a name looked up on PATH or a path.
	// Empty means "claude".
	Command string
	// Args are extra arguments placed after kz's own.
	Args []string
	// Env adds to the minimal environment the CLI gets. "K=V" sets a
	// variable; a bare "K" passes the variable through from kz's
	// environment (the way to hand over credentials kz would not pass on
	// its own, such as AWS_* for Bedrock).
	Env []string
	// Models lists the models; the first is the default. Empty means the
	// CLI's own default.
	Models []string
	// Workspace is the directory the CLI runs in when a turn names none.
	Workspace string
	// ProposalPrompt is appended to Claude's system prompt in
	// patch-proposal mode (patch.PromptText()), so that its answer goes to
	// kz's patch review like any other runtime's.
	ProposalPrompt string
	// KillGrace is how long an immediate interrupt waits after SIGINT
	// before SIGKILL. Zero means 2 seconds.
	KillGrace time.Duration
	// Confiner starts the CLI under the OS sandbox (workspace-write with
	// network, its home writable), so that what Claude runs after kz's
	// approval cannot write outside the workspace or into .git. Nil
	// starts it unconfined.
	Confiner agentcli.Confiner
	// MCPServers are kz's MCP servers that may start; Claude gets them
	// with --mcp-config.
	MCPServers []mcp.Spec
	// Logger receives what kz skips (unknown message kinds, malformed
	// lines). Nil means slog.Default().
	Logger *slog.Logger
}

// Runtime is a Claude Code runtime. It implements engine.Runtime and is
// safe for concurrent use by several kz sessions: each gets its own CLI
// process.
type Runtime struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	procs  map[string]*slot
	closed bool
}

// slot holds the CLI process of one kz session; its mutex serialises that
// session's turns.
type slot struct {
	mu sync.Mutex
	p  *process
	// pid mirrors p's process id for observers that must not wait for
	// the running turn (tests, status displays); 0 when there is none.
	pid atomic.Int64
}

// set replaces the slot's process; s.mu must be held.
func (s *slot) set(p *process) {
	s.p = p
	if p == nil {
		s.pid.Store(0)
		return
	}
	s.pid.Store(int64(p.cmd.Process.Pid))
}

// Pid returns the process id of the CLI serving a kz session, or 0.
func (r *Runtime) Pid(sessionID string) int {
	r.mu.Lock()
	s := r.procs[sessionID]
	r.mu.Unlock()
	if s == nil {
		return 0
	}
	return int(s.pid.Load())
}

// New returns a runtime for cfg. It starts nothing: the CLI is spawned by
// the first turn.
func New(cfg Config) *Runtime {
	if cfg.Command == "" {
		cfg.Command = "claude"
	}
	if cfg.Name == "" {
		cfg.Name = "claude"
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 2 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Runtime{cfg: cfg, log: log.With("runtime", cfg.Name), procs: map[string]*slot{}}
}

// Name implements engine.Runtime.
func (r *Runtime) Name() string { return r.cfg.Name }

// IgnoresEnvironment says the turn's environment block never reaches
// Claude Code: it states the OS, date, directory and git status itself,
// and kz hands it the memory files only (modeArgs). The session then runs
// no git status for its turns.
func (r *Runtime) IgnoresEnvironment() bool { return true }

// Capabilities implements engine.Runtime. Claude Code is a full agent: its
// own tool loop, files, shell, MCP and subagents; it streams, can be
// interrupted and resumes its own sessions; its stream-json input takes
// image blocks, which it passes to its (Claude, so vision) model.
func (r *Runtime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{
		Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
			engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapMCP,
			engine.CapSubagents, engine.CapInterrupt, engine.CapResume, engine.CapVision),
		ContextWindow: 200000,
		// Its result carries total_cost_usd, which kz turns into each
		// turn's cost.
		ReportsCost: true,
	}
}

// versionRE is compiled on first use, so that every kz process does not pay
// for it at start.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+\.\d+\S*`) })

// Available reports the CLI's version, or why it cannot run here: the
// error is a *engine.RuntimeError of kind runtime_missing with a message
// that says what to do.
func (r *Runtime) Available() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return r.AvailableContext(ctx)
}

// AvailableContext is Available bounded by ctx.
func (r *Runtime) AvailableContext(ctx context.Context) (string, error) {
	path, err := exec.LookPath(r.cfg.Command)
	if err != nil {
		return "", r.missing(err)
	}
	cmd := exec.CommandContext(ctx, path, "--version")
	// Printing its version needs no credential.
	cmd.Env = childenv.Strip(buildEnv(r.cfg.Env), credSpec.KeyVars...)
	out, err := cmd.Output()
	if err != nil {
		return "", &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name,
			Message: fmt.Sprintf("%s --version failed (%v): reinstall with `npm install -g @anthropic-ai/claude-code`", path, err), Err: err}
	}
	v := versionRE().FindString(string(out))
	if v == "" {
		v = strings.TrimSpace(string(out))
	}
	return v, nil
}

func (r *Runtime) missing(err error) error {
	return &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name,
		Message: fmt.Sprintf("%s not found (install it with `npm install -g @anthropic-ai/claude-code`, or set command = \"/path/to/claude\"): %v", r.cfg.Command, err),
		Err:     err}
}

// Run implements engine.Runtime: it sends the prompt to the session's CLI
// (starting or resuming one as needed) and maps its output to kz events
// until the CLI's result line.
func (r *Runtime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	s, err := r.slotFor(t.SessionID)
	if err != nil {
		return engine.Result{Status: engine.StatusError}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := &turnRun{rt: r, t: t, model: r.modelFor(t)}
	return tr.run(ctx, s)
}

// StartsEarly implements engine.EarlyStarter: the CLI's process starts
// (some 300 ms before it reads anything) while the session records the
// workspace's state, and the prompt waits for it (turnRun.attempt).
func (r *Runtime) StartsEarly() {}

// Close stops every CLI process this runtime started. It is safe to call
// more than once; turns started afterwards fail.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	slots := r.procs
	r.procs = map[string]*slot{}
	r.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		if s.p != nil {
			s.p.shutdown(r.cfg.KillGrace)
			s.set(nil)
		}
		s.mu.Unlock()
	}
	return nil
}

// CloseSession stops the CLI process of one kz session, if any.
func (r *Runtime) CloseSession(sessionID string) {
	r.mu.Lock()
	s := r.procs[sessionID]
	delete(r.procs, sessionID)
	r.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		s.p.shutdown(r.cfg.KillGrace)
		s.set(nil)
	}
}

func (r *Runtime) slotFor(sessionID string) (*slot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &engine.RuntimeError{Kind: engine.ErrInternal, Runtime: r.cfg.Name, Message: "runtime is closed"}
	}
	s := r.procs[sessionID]
	if s == nil {
		s = &slot{}
		r.procs[sessionID] = s
	}
	return s, nil
}

func (r *Runtime) modelFor(t *engine.Turn) string {
	if t.Model != "" {
		return t.Model
	}
	if len(r.cfg.Models) > 0 {
		return r.cfg.Models[0]
	}
	return ""
}

func (r *Runtime) workspaceFor(t *engine.Turn) string {
	if t.Workspace != "" {
		return t.Workspace
	}
	return r.cfg.Workspace
}

// errorf builds a classified error of this runtime.
func (r *Runtime) errorf(kind engine.ErrorKind, model string, err error, format string, args ...any) *engine.RuntimeError {
	return &engine.RuntimeError{Kind: kind, Runtime: r.cfg.Name, Model: model, Message: fmt.Sprintf(format, args...), Err: err}
}

// isMissing reports whether starting the CLI failed because it is not there.
func isMissing(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, errNoSuchFile)
}

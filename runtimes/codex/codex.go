// Package codex drives the OpenAI Codex CLI (`codex app-server`, JSON-RPC
// over stdio) as a kz runtime. Every turn starts the CLI in its own process
// group, opens or resumes a thread with approval policy "untrusted", so that
// every shell command (ls and cat included) and every file change is sent
// to kz for approval first, and maps Codex's item and turn notifications to
// kz events.
//
// The thread's sandbox is workspace-write by default, not read-only:
// Codex 0.169.0 asks for every command under "untrusted" whatever the
// sandbox, and where its sandbox works (bubblewrap with user namespaces)
// an approved command still runs inside it, so under read-only an approved
// `echo hi > f` fails with "Read-only file system" and is not re-run.
// workspace-write lets approved commands change the workspace and nothing
// else, and keeps input a model types into an approved interactive
// command (write_stdin, never approved again) inside the workspace.
//
// An approved command may be re-run by Codex outside its sandbox without a
// second prompt, so kz's gate judges every command as unsandboxed. kz never
// answers with the decision that writes a permanent allow rule into Codex's
// own rules (acceptWithExecpolicyAmendment), nor acceptForSession: every
// call keeps coming to kz's gate, which remembers scopes itself.
package codex

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools/mcp"
)

// Config configures one Codex runtime. The lead maps
// `[runtimes.NAME] kind = "codex"` to it.
type Config struct {
	// Name is the runtime's name in kz. Empty means "codex".
	Name string
	// Command is the CLI: a name looked up on PATH or a path. Empty means
	// "codex".
	Command string
	// Args are extra arguments placed before "app-server" (e.g. "-c",
	// "key=value" overrides).
	Args []string
	// Env adds to the minimal environment the CLI gets: "K=V" sets, a bare
	// "K" passes K through from kz's environment (how credentials such as
	// OPENAI_API_KEY or CODEX_HOME are handed over).
	Env []string
	// Models lists the models; the first is the default. Empty means the
	// CLI's configured default.
	Models []string
	// Workspace is the directory used when a turn names none.
	Workspace string
	// Sandbox is the Codex sandbox of every thread: "read-only",
	// "workspace-write" or "danger-full-access". Empty means
	// workspace-write (see the package comment). Every command is sent to
	// kz for approval whatever the sandbox.
	Sandbox Sandbox
	// HandshakeTimeout bounds start-up (initialize and thread start).
	// Zero means 60 seconds.
	HandshakeTimeout time.Duration
	// MaxRetries bounds the retries of a failing model request kz lets
	// Codex make in one turn (each announced by an error notification with
	// willRetry): past it kz interrupts the turn and fails it with the
	// last error, so that a dead endpoint fails over in seconds whatever
	// Codex's own retry settings. Zero means 2; negative means no bound.
	MaxRetries int
	// KillGrace is how long an interrupt waits for the CLI to wind down
	// before the process group is killed. Zero means 2 seconds.
	KillGrace time.Duration
	// Confiner starts the CLI under kz's OS sandbox (workspace-write with
	// network, CODEX_HOME writable), so that a command Codex runs after
	// kz's approval cannot write outside the workspace or into .git, even
	// when Codex re-runs it outside its own sandbox. Nil starts it
	// unconfined.
	Confiner agentcli.Confiner
	// MCPServers are kz's MCP servers (the trusted, enabled ones) handed
	// to Codex in its own format, every call of their tools asked of
	// kz's gate (mcp.go, elicit.go).
	MCPServers []mcp.Spec
	// Logger receives what kz skips. Nil means slog.Default().
	Logger *slog.Logger
}

// Sandbox is a Codex sandbox mode.
type Sandbox string

// The sandbox modes Codex accepts on thread/start.
const (
	SandboxReadOnly       Sandbox = "read-only"
	SandboxWorkspaceWrite Sandbox = "workspace-write"
	SandboxFullAccess     Sandbox = "danger-full-access"
)

// Runtime is a Codex runtime. It implements engine.Runtime; it is safe for
// concurrent use, each turn running its own CLI process.
type Runtime struct {
	cfg Config
	log *slog.Logger
	// stops are the CLI processes of finished turns still shutting down.
	stops stopper
}

// New returns a runtime for cfg. It starts nothing.
func New(cfg Config) *Runtime {
	if cfg.Name == "" {
		cfg.Name = "codex"
	}
	if cfg.Command == "" {
		cfg.Command = "codex"
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 60 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 2
	}
	if cfg.Sandbox == "" {
		cfg.Sandbox = SandboxWorkspaceWrite
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 2 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Runtime{cfg: cfg, log: log.With("runtime", cfg.Name)}
}

// Name implements engine.Runtime.
func (r *Runtime) Name() string { return r.cfg.Name }

// StartsEarly implements engine.EarlyStarter: the app-server starts and
// opens its thread while the session records the workspace's state; the
// turn/start with the prompt waits for it.
func (r *Runtime) StartsEarly() {}

// IgnoresEnvironment says the turn's environment block never reaches
// Codex: it states its own environment, and kz hands it the memory files
// only. The session then runs no git status for its turns.
func (r *Runtime) IgnoresEnvironment() bool { return true }

// SandboxMode is the configured sandbox of this runtime's threads.
func (r *Runtime) SandboxMode() Sandbox { return r.cfg.Sandbox }

// threadSandbox is the sandbox Codex is asked to run commands in. Under
// kz's bubblewrap, Codex's own sandbox cannot start (it is bubblewrap too,
// and kz's sandbox forbids nested user namespaces: every command then
// fails with "Creating new namespace failed"), and kz's sandbox confines
// every command Codex runs anyway, so Codex runs them without its own.
// Under Landlock or no sandbox, Codex's own applies as configured.
func (r *Runtime) threadSandbox() Sandbox {
	if r.cfg.Confiner != nil && r.cfg.Confiner.Full() {
		return SandboxFullAccess
	}
	return r.cfg.Sandbox
}

// Capabilities implements engine.Runtime. Codex is a full agent with its
// own tool loop, shell and apply_patch; it streams, is interruptible and
// resumes threads (thread/resume). Sandbox is not declared: a command kz
// accepts may be re-run by Codex outside its sandbox without asking again
// (protocol notes, appendix). MCP: kz hands Codex its servers with every
// call asked of kz's gate (mcp.go, elicit.go). Vision: turn/start takes
// image inputs, which Codex passes to its model.
func (r *Runtime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{
		Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
			engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapApplyPatch,
			engine.CapMCP, engine.CapInterrupt, engine.CapResume, engine.CapVision),
	}
}

// envSpec is what Codex gets of kz's environment besides what every agent
// CLI gets: the variables kz reads for its credential and home, taken
// from kz's environment when set (SECURITY.md rule 5 names credentials one
// by one). A key among them reaches Codex only through a credential proxy
// (creds.go).
var envSpec = childenv.Spec{Pass: []string{"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME", "OPENAI_BASE_URL"}}

// buildEnv returns the environment of a Codex process with the configured
// entries cfgEnv.
func buildEnv(cfgEnv []string) []string { return agentcli.Env(envSpec, cfgEnv) }

// markerVar names the variable that marks every process descended from one
// CLI, so that children which left its process group are killed too.
const markerVar = "KZ_CODEX_RUN"

// isDelta reports the notifications that stream an item piece by piece
// (item/agentMessage/delta, item/reasoning/textDelta,
// item/commandExecution/outputDelta and the like): the only lines the
// reader may hold for a frame.
func isDelta(m jsonrpc.Message) bool {
	return strings.HasSuffix(m.Method, "/delta") || strings.HasSuffix(m.Method, "Delta")
}

// versionRE is compiled on first use, so that every kz process does not pay
// for it at start.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+\.\d+\S*`) })

// Available reports the CLI's version, or a *engine.RuntimeError of kind
// runtime_missing saying what to do.
func (r *Runtime) Available() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	path, err := exec.LookPath(r.cfg.Command)
	if err != nil {
		return "", r.missing(err)
	}
	// Printing its version needs no credential.
	bin, env := r.native(path, childenv.Strip(buildEnv(r.cfg.Env), builtinKeyVars...))
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name,
			Message: fmt.Sprintf("%s --version failed (%v): reinstall with `npm install -g @openai/codex`", path, err), Err: err}
	}
	if v := versionRE().FindString(string(out)); v != "" {
		return v, nil
	}
	return strings.TrimSpace(string(out)), nil
}

// NativeCommand is the command and environment that start Codex: the
// native binary and the launcher's environment when command (a name on
// PATH or a path) is the npm launcher kz knows (nativeCodex), else command
// and env as they are.
func NativeCommand(command string, env []string) (string, []string) {
	path, err := exec.LookPath(command)
	if err != nil {
		return command, env
	}
	bin, nenv, ok := nativeCodex(path, env)
	if !ok {
		return command, env
	}
	return bin, nenv
}

// native is NativeCommand, logged.
func (r *Runtime) native(command string, env []string) (string, []string) {
	bin, nenv := NativeCommand(command, env)
	if bin != command {
		r.log.Debug("codex: starting the native binary of the npm launcher", "launcher", command, "binary", bin)
	}
	return bin, nenv
}

func (r *Runtime) missing(err error) error {
	return &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name,
		Message: fmt.Sprintf("%s not found (install it with `npm install -g @openai/codex`, or set command = \"/path/to/codex\"): %v", r.cfg.Command, err),
		Err:     err}
}

// Run implements engine.Runtime.
func (r *Runtime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	model := t.Model
	if model == "" && len(r.cfg.Models) > 0 {
		model = r.cfg.Models[0]
	}
	dir := t.Workspace
	if dir == "" {
		dir = r.cfg.Workspace
	}
	switch r.cfg.Sandbox {
	case SandboxReadOnly, SandboxWorkspaceWrite, SandboxFullAccess:
	default:
		return engine.Result{Status: engine.StatusError, Model: model}, r.errorf(engine.ErrCapability, model, nil,
			"unknown codex sandbox %q (want read-only, workspace-write or danger-full-access)", r.cfg.Sandbox)
	}
	if _, err := exec.LookPath(r.cfg.Command); err != nil {
		return engine.Result{Status: engine.StatusError, Model: model}, r.missing(err)
	}
	// A turn that resumes a thread whose previous process is still
	// shutting down waits for it (see stopper).
	if err := r.stops.await(ctx, t.NativeID); err != nil {
		return engine.Result{Status: engine.StatusInterrupted, Model: model}, r.errorf(engine.ErrInterrupted, model, err, "interrupted")
	}
	sh, err := shield(buildEnv(r.cfg.Env), r.cfg.Args, r.log)
	if err != nil {
		return engine.Result{Status: engine.StatusError, Model: model},
			&engine.RuntimeError{Kind: engine.ErrCrashed, Runtime: r.cfg.Name, Model: model, Message: "start codex: " + err.Error(), Err: err}
	}
	// The proxy outlives the process: closed once Codex has been reaped.
	closeProxy := func() {
		if sh.proxy != nil {
			_ = sh.proxy.Close()
		}
	}
	args := append(append(append(append([]string(nil), r.cfg.Args...), sh.args...), untrustArgs(dir)...), "app-server")
	command, env := r.native(r.cfg.Command, sh.env)
	c, err := jsonrpc.Start(r.cfg.Confiner, []string{codexHome(sh.env)}, command, args, dir, env, markerVar, isDelta, r.log)
	if err != nil {
		closeProxy()
		return engine.Result{Status: engine.StatusError, Model: model},
			&engine.RuntimeError{Kind: engine.ErrCrashed, Runtime: r.cfg.Name, Model: model, Message: "start codex: " + err.Error(), Err: err}
	}
	tr := &turnRun{rt: r, t: t, c: c, model: model, dir: dir, items: map[string]*item{}}
	res, err := tr.run(ctx)
	switch {
	case ctx.Err() != nil:
		// An immediate interrupt kills at once: nothing of the turn may
		// run on once it is reported interrupted.
		c.KillNow()
		closeProxy()
		return res, err
	case c.Exited(), tr.stopping:
		// A CLI that died has nothing to shut down, and what it left
		// behind is killed before the crash is reported. A turn kz asked
		// to stop (a graceful interrupt, too many retries) may leave
		// commands Codex did not kill: they are killed with the group
		// before the turn is reported interrupted.
		c.Stop(r.cfg.KillGrace)
		closeProxy()
		return res, err
	}
	// The turn completed on its own and Codex has reported everything of
	// it, so its result does not wait for Codex's shutdown: the process
	// is stopped in the background, and Close waits for it.
	r.stops.stop(c, tr.threadID, r.cfg.KillGrace, closeProxy)
	return res, err
}

// Close waits for the CLI processes of finished turns to stop (each
// bounded by the kill grace, then killed), so that none outlives kz. It
// is safe to call more than once; turns that end afterwards stop their
// process before returning.
func (r *Runtime) Close() error {
	r.stops.close(r.cfg.KillGrace + time.Second)
	return nil
}

func (r *Runtime) errorf(kind engine.ErrorKind, model string, err error, format string, args ...any) *engine.RuntimeError {
	return &engine.RuntimeError{Kind: kind, Runtime: r.cfg.Name, Model: model, Message: fmt.Sprintf(format, args...), Err: err}
}

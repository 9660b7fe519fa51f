// Package acp drives any Agent Client Protocol agent (JSON-RPC 2.0 over
// stdio; Gemini CLI with --acp first) as a kz runtime. Every turn starts
// the agent in its own process group, opens a session (loading the stored
// one where the agent offers it, else a new one primed with kz's
// transcript), sends the prompt and maps session/update notifications to
// kz events. Permission requests go through kz's gate and are answered
// with the matching offered option; kz offers the client file-system
// capability for writes and serves them through its own workspace
// (confined, gated, atomic).
package acp

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/credproxy"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools"
)

// Config configures one ACP runtime. The lead maps
// `[runtimes.NAME] kind = "acp"` to it.
type Config struct {
	// Name is the runtime's name in kz. Required (there is no default
	// agent); GeminiPreset fills it.
	Name string
	// Command is the agent: a name looked up on PATH or a path.
	Command string
	// Args are the agent's arguments (e.g. "--acp").
	Args []string
	// Env adds to the minimal environment the agent gets: "K=V" sets, a
	// bare "K" passes K through from kz's environment (how credentials
	// are handed over).
	Env []string
	// Models lists the models; the first is the default. A turn's model
	// is selected with session/set_model when the agent offers it.
	Models []string
	// Workspace is the directory used when a turn names none.
	Workspace string
	// AuthMethod is the id of the authMethods entry to authenticate with
	// after initialize (e.g. "gemini-api-key"); empty skips authenticate.
	AuthMethod string
	// SessionMode is a session mode to set on every session (e.g.
	// "default", which asks permission for every risky tool call); empty
	// keeps the agent's own.
	SessionMode string
	// PlanMode is the agent's read-only mode, set for kz's analysis-only
	// mode when offered. Empty means "plan".
	PlanMode string
	// HandshakeTimeout bounds start-up (initialize, authenticate, session
	// creation). Zero means 60 seconds (agents can be slow to start).
	HandshakeTimeout time.Duration
	// KillGrace is how long an interrupt waits for the agent to wind down
	// before its processes are killed. Zero means 2 seconds.
	KillGrace time.Duration
	// MaxAttempts bounds how many times Gemini CLI tries one model
	// request (its general.maxAttempts, 10 by default, 5 to 30 s apart),
	// so that a dead endpoint fails over in seconds. kz applies it through
	// a temporary GEMINI_CLI_HOME overlay of the user's Gemini directory
	// (geminihome.go) and never edits the user's settings; a lower value
	// of the user's is kept. Zero leaves the agent's own; only meaningful
	// for Gemini CLI (GeminiPreset sets 2).
	MaxAttempts int
	// Credentials says which variables of the agent's environment hold
	// its provider key and which one its endpoint, given that
	// environment. Each key found there is replaced by the placeholder of
	// a credential proxy that kz runs for the agent process, so that
	// neither the agent nor the commands it runs hold the key. Nil
	// proxies nothing (GeminiPreset sets it).
	Credentials func(env []string) credproxy.Spec
	// Homes lists, given the agent's environment, the directories the
	// agent keeps its own state in, which it must be able to write when
	// confined. Nil means none (GeminiPreset sets it).
	Homes func(env []string) []string
	// Confiner starts the agent under kz's OS sandbox (workspace-write
	// with network, its homes writable), so that a command it runs after
	// kz's approval cannot write outside the workspace or into .git. Nil
	// starts it unconfined.
	Confiner agentcli.Confiner
	// Snapshots stores the old content of every file kz writes for the
	// agent (fs/write_text_file), so that the write can be undone. Nil
	// refuses delegated writes: kz never changes a file it could not undo.
	Snapshots tools.SnapshotSaver
	// Logger receives what kz skips. Nil means slog.Default().
	Logger *slog.Logger
}

// GeminiPreset is the configuration for Gemini CLI (`gemini --acp`,
// protocol notes §2–§3): one process (no relaunch child), API-key
// authentication and the credentials and endpoint variables taken from
// kz's environment, the key reaching the agent only through a credential
// proxy (geminiCredentials).
func GeminiPreset() Config {
	return Config{
		Name:        "gemini",
		Command:     "gemini",
		Args:        []string{"--acp"},
		AuthMethod:  "gemini-api-key",
		MaxAttempts: 2,
		Credentials: geminiCredentials,
		Homes:       geminiHomes,
		Env: []string{"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL",
			"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS"},
	}
}

// Runtime is an ACP runtime. It implements engine.Runtime; it is safe for
// concurrent use, each turn running its own agent process.
type Runtime struct {
	cfg Config
	log *slog.Logger
}

// New returns a runtime for cfg. It starts nothing.
func New(cfg Config) *Runtime {
	if cfg.Name == "" {
		cfg.Name = "acp"
	}
	if cfg.PlanMode == "" {
		cfg.PlanMode = "plan"
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 60 * time.Second
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

// Capabilities implements engine.Runtime. An ACP agent runs its own tool
// loop with file and shell tools, streams, and can be cancelled. Resume is
// not declared because it is not guaranteed: kz loads the stored session
// where the agent offers session/load, but Gemini CLI 0.61 fails to load a
// session whose next turn starts within the same minute as its last one
// (its chat files are named by the minute, and session/load starts a new
// recording of the loaded id that resets that very file; see
// TestRealGeminiTextAndLoad), and kz then primes a new session with its
// transcript instead (nothing is lost, but it is not the agent's own
// resume).
func (r *Runtime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{
		Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
			engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapInterrupt),
	}
}

// markerVar names the variable that marks every process descended from one
// agent, so that children which left its process group are killed too.
const markerVar = "KZ_ACP_RUN"

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+\S*`)

// Available reports the agent's version (from --version), or a
// *engine.RuntimeError of kind runtime_missing saying what to do.
func (r *Runtime) Available() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	path, err := exec.LookPath(r.cfg.Command)
	if err != nil {
		return "", r.missing(err)
	}
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = agentcli.Env(childenv.Spec{}, r.cfg.Env)
	if r.cfg.Credentials != nil {
		// Printing its version needs no credential.
		cmd.Env = childenv.Strip(cmd.Env, r.cfg.Credentials(cmd.Env).KeyVars...)
	}
	out, err := cmd.Output()
	if err != nil {
		return "", &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name,
			Message: fmt.Sprintf("%s --version failed (%v)%s", path, err, r.installHint()), Err: err}
	}
	if v := versionRE.FindString(string(out)); v != "" {
		return v, nil
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *Runtime) installHint() string {
	if r.cfg.Command == "gemini" {
		return ": install it with `npm install -g @google/gemini-cli`"
	}
	return ""
}

func (r *Runtime) missing(err error) error {
	return &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name,
		Message: fmt.Sprintf("%s not found%s (or set command = \"/path/to/agent\"): %v", r.cfg.Command, r.installHint(), err),
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
	if r.cfg.Command == "" {
		return engine.Result{Status: engine.StatusError, Model: model},
			&engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: r.cfg.Name, Message: "no command configured for this ACP agent"}
	}
	if _, err := exec.LookPath(r.cfg.Command); err != nil {
		return engine.Result{Status: engine.StatusError, Model: model}, r.missing(err)
	}
	env := agentcli.Env(childenv.Spec{}, r.cfg.Env)
	var proxy *credproxy.Proxy
	if r.cfg.Credentials != nil {
		var err error
		env, proxy, err = credproxy.Shield(env, r.cfg.Credentials(env), r.log)
		if err != nil {
			return engine.Result{Status: engine.StatusError, Model: model},
				&engine.RuntimeError{Kind: engine.ErrCrashed, Runtime: r.cfg.Name, Model: model, Message: "start agent: " + err.Error(), Err: err}
		}
		if proxy != nil {
			// Closed after Stop or KillNow below, which return once the
			// agent has been reaped.
			defer func() { _ = proxy.Close() }()
		}
	}
	var homes []string
	if r.cfg.Homes != nil {
		homes = r.cfg.Homes(env)
	}
	if r.cfg.MaxAttempts > 0 {
		o, err := newGeminiOverlay(env, r.cfg.MaxAttempts, r.log)
		if err != nil {
			// The agent still runs, with its own retry bound.
			r.log.Warn("acp: could not bound the agent's retries", "err", err)
		} else {
			env = append(childenv.Strip(env, "GEMINI_CLI_HOME"), o.env())
			// Gemini writes its overlay home too (what it creates there
			// is kept by Close).
			homes = append(homes, o.root)
			defer func() {
				if err := o.Close(); err != nil {
					r.log.Warn("acp: gemini overlay home", "err", err)
				}
			}()
		}
	}
	c, err := jsonrpc.Start(r.cfg.Confiner, homes, r.cfg.Command, r.cfg.Args, dir, env, markerVar, r.log)
	if err != nil {
		return engine.Result{Status: engine.StatusError, Model: model},
			&engine.RuntimeError{Kind: engine.ErrCrashed, Runtime: r.cfg.Name, Model: model, Message: "start agent: " + err.Error(), Err: err}
	}
	tr := &turnRun{rt: r, t: t, c: c, model: model, dir: dir, tools: map[string]*toolState{},
		allowedWrites: map[string]allowedWrite{}, written: map[string]bool{}}
	res, err := tr.run(ctx)
	if tr.ws != nil {
		_ = tr.ws.Close()
	}
	if ctx.Err() != nil {
		c.KillNow()
	} else {
		c.Stop(r.cfg.KillGrace)
	}
	return res, err
}

func (r *Runtime) errorf(kind engine.ErrorKind, model string, err error, format string, args ...any) *engine.RuntimeError {
	return &engine.RuntimeError{Kind: kind, Runtime: r.cfg.Name, Model: model, Message: fmt.Sprintf(format, args...), Err: err}
}

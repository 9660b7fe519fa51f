// Package acp drives any Agent Client Protocol agent (JSON-RPC 2.0 over
// stdio; Gemini CLI with --acp first) as a kz runtime. The agent runs in
// its own process group, one process per kz session kept across its turns
// (agent.go): the first turn opens a session (loading the stored one where
// the agent offers it, else a new one primed with kz's transcript), later
// turns prompt the same session, and session/update notifications map to
// kz events. Permission requests go through kz's gate and are answered
// with the matching offered option; kz offers the client file-system
// capability for writes and serves them through its own workspace
// (confined, gated, atomic).
package acp

import (
	"bytes"
	"context"
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
	"github.com/kaizen-code/kz/runtimes/credproxy"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/mcp"
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
	// ReadsMemory names the project memory files the agent reads itself
	// (with their @imports), which kz then does not repeat: "GEMINI.md"
	// for Gemini CLI. Empty: the agent gets every memory file from kz.
	ReadsMemory string
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
	// HomesDir is where the overlay home of each kz session is kept (see
	// geminihome.go), in a directory named by the session's id, so that a
	// later agent process of the session, in this kz or a later one, runs
	// with the same home and can load the agent's session. Empty makes a
	// temporary overlay per kz session instead, removed when its agent is
	// closed.
	HomesDir string
	// MCPServers are kz's MCP servers that may start. Every session the
	// agent opens gets them (mcpServers of session/new and session/load),
	// and the agent's calls of their tools reach kz's gate as
	// mcp__NAME__tool (mcp.go).
	MCPServers []mcp.Spec
	// TrustVar is the agent's variable that decides whether it trusts its
	// workspace, outranking its own trust rules (Gemini CLI's
	// GEMINI_CLI_TRUST_WORKSPACE). With ProjectConfig, kz sets it for every
	// process: trusted only when the workspace holds none of the agent's
	// own configuration, which a trusted agent would run (trust.go).
	// Empty leaves the agent's own rules.
	TrustVar string
	// ProjectConfig lists, for a workspace dir and the agent's
	// environment, the agent's configuration there that it would run or
	// that would loosen its approvals in a trusted workspace; localEnv
	// says it reads local .env files. GeminiPreset sets
	// geminiProjectConfig.
	ProjectConfig func(dir string, env []string, localEnv bool) []string
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
		ReadsMemory: "GEMINI.md",
		AuthMethod:  "gemini-api-key",
		MaxAttempts: 2,
		Credentials: geminiCredentials,
		Homes:       geminiHomes,
		// Verified with Gemini CLI 0.61 (TestRealGeminiProjectConfigNeverRuns):
		// a trusted workspace's .gemini/settings.json starts its MCP
		// servers, discovery command and hooks under kz, unasked.
		TrustVar:      geminiTrustVar,
		ProjectConfig: geminiProjectConfig,
		Env: []string{"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL",
			"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS"},
	}
}

// Runtime is an ACP runtime. It implements engine.Runtime; it is safe for
// concurrent use, each kz session having its own agent process (agent.go).
type Runtime struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	closed bool
	slots  map[string]*slot
	// noImages records that the agent's initialize declared no image
	// prompts: vision is declared until an agent says otherwise, since
	// kz cannot know before it starts one.
	noImages atomic.Bool
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
	return &Runtime{cfg: cfg, log: log.With("runtime", cfg.Name), slots: map[string]*slot{}}
}

// Name implements engine.Runtime.
func (r *Runtime) Name() string { return r.cfg.Name }

// StartsEarly implements engine.EarlyStarter: the agent starts and opens
// its session while the session records the workspace's state; the
// session/prompt waits for it.
func (r *Runtime) StartsEarly() {}

// IgnoresEnvironment says the turn's environment block never reaches an
// ACP agent: the agent knows its own environment, and kz hands it the
// memory files only. The session then runs no git status for its turns.
func (r *Runtime) IgnoresEnvironment() bool { return true }

// Capabilities implements engine.Runtime. An ACP agent runs its own tool
// loop with file and shell tools, streams, and can be cancelled. Resume is
// not declared because it is not guaranteed across processes: the turns
// of a kz session continue the agent's own session in the process kept
// for them (agent.go), but a new process (after kz restarted, the session
// switched runtime or the agent died) has to session/load it, and Gemini
// CLI 0.61 fails to load a session whose next turn starts within the same
// minute as its last one (its chat files are named by the minute, and
// session/load starts a new recording of the loaded id that resets that
// very file; see TestRealGeminiTextAndLoad). kz then primes a new session
// with its transcript instead (nothing is lost, but it is not the agent's
// own resume).
//
// MCP is declared: every ACP agent takes stdio MCP servers in
// session/new (the schema requires it), and their calls pass kz's gate.
//
// Vision is declared until an agent's initialize says it takes no image
// prompts (promptCapabilities.image false): Gemini CLI declares them, and
// kz cannot ask an agent before starting it. A turn with images on an
// agent that refuses them fails before anything is sent.
func (r *Runtime) Capabilities(string) engine.Capabilities {
	set := engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapMCP, engine.CapInterrupt)
	if !r.noImages.Load() {
		set |= engine.NewCapSet(engine.CapVision)
	}
	return engine.Capabilities{Set: set}
}

// markerVar names the variable that marks every process descended from one
// agent, so that children which left its process group are killed too.
const markerVar = "KZ_ACP_RUN"

// versionRE is compiled on first use, so that every kz process does not pay
// for it at start.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+\.\d+\S*`) })

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
	if v := versionRE().FindString(string(out)); v != "" {
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

// Run implements engine.Runtime: it sends the prompt to the kz session's
// agent process, starting one (and opening or loading its session) when
// none runs, and maps what the agent sends to kz events until the
// prompt's result.
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
	s, err := r.slotFor(t.SessionID)
	if err != nil {
		return engine.Result{Status: engine.StatusError, Model: model}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := &turnRun{rt: r, t: t, model: model, dir: dir, tools: map[string]*toolState{},
		allowedWrites: map[string]allowedWrite{}, written: map[string]bool{}}
	res, err := tr.run(ctx, s)
	if tr.ws != nil {
		_ = tr.ws.Close()
	}
	if a := s.a; a != nil && (!tr.keep || !a.alive()) {
		// An agent kz cannot vouch for is stopped: at once after an
		// immediate interrupt, politely otherwise. The next turn starts
		// another.
		a.stop(ctx.Err() != nil, r.cfg.KillGrace)
		s.a = nil
	}
	return res, err
}

// spawn starts the agent process of slot s: a minimal environment whose
// credentials are replaced by the placeholders of a credential proxy of
// the process's own, the session's overlay home when the runtime bounds
// Gemini's retries, and the OS sandbox with the agent's homes writable.
func (r *Runtime) spawn(s *slot, t *engine.Turn, dir string) (*agent, error) {
	env := agentcli.Env(childenv.Spec{}, r.cfg.Env)
	var proxy *credproxy.Proxy
	if r.cfg.Credentials != nil {
		var err error
		if env, proxy, err = credproxy.Shield(env, r.cfg.Credentials(env), r.log); err != nil {
			return nil, err
		}
	}
	var homes []string
	if r.cfg.Homes != nil {
		homes = r.cfg.Homes(env)
	}
	// Without an overlay home the agent reads local .env files, whose
	// variables a trusted agent takes in whole.
	localEnv := true
	if r.cfg.MaxAttempts > 0 {
		if o, err := r.overlay(s, t, env); err != nil {
			// The agent still runs, with its own retry bound.
			r.log.Warn("acp: could not bound the agent's retries", "err", err)
		} else {
			env = append(childenv.Strip(env, "GEMINI_CLI_HOME"), o.env())
			// Gemini writes its overlay home too.
			homes = append(homes, o.root)
			localEnv = false
		}
	}
	env, trust := r.decideTrust(dir, env, localEnv)
	c, err := jsonrpc.Start(r.cfg.Confiner, homes, r.cfg.Command, r.cfg.Args, dir, env, markerVar, isChunk, r.log)
	if err != nil {
		if proxy != nil {
			_ = proxy.Close()
		}
		return nil, err
	}
	return &agent{c: c, proxy: proxy, dir: dir, trust: trust}, nil
}

// overlay prepares the overlay home of slot s for a new agent process:
// the kz session's kept home under HomesDir, or a temporary one made for
// the slot's first process and removed with the slot.
func (r *Runtime) overlay(s *slot, t *engine.Turn, env []string) (*geminiOverlay, error) {
	if r.cfg.HomesDir != "" {
		o, err := openGeminiHome(env, r.cfg.MaxAttempts, homeDir(r.cfg.HomesDir, t.SessionID), r.log)
		if err != nil {
			return nil, err
		}
		s.home = o
		return o, nil
	}
	if s.home == nil {
		o, err := newGeminiOverlay(env, r.cfg.MaxAttempts, r.log)
		if err != nil {
			return nil, err
		}
		s.home = o
	}
	return s.home, nil
}

func (r *Runtime) errorf(kind engine.ErrorKind, model string, err error, format string, args ...any) *engine.RuntimeError {
	return &engine.RuntimeError{Kind: kind, Runtime: r.cfg.Name, Model: model, Message: fmt.Sprintf(format, args...), Err: err}
}

// isChunk reports a session/update that streams the agent's text or
// thought piece by piece (agent_message_chunk, agent_thought_chunk): the
// only lines the reader may hold for a frame. The kind is looked for in
// the raw parameters; a chunk whose text names it is still a chunk, and a
// line taken for one only waits a frame.
func isChunk(m jsonrpc.Message) bool {
	return m.Method == "session/update" &&
		(bytes.Contains(m.Params, []byte(`"agent_message_chunk"`)) || bytes.Contains(m.Params, []byte(`"agent_thought_chunk"`)))
}

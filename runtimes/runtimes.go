// Package runtimes builds the configured runtimes. Each kind lives in its
// own sub-package; this package maps configuration to them and says, for
// each, whether it can run on this machine and why not.
package runtimes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/acp"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/claudecode"
	"github.com/kaizen-code/kz/runtimes/codex"
	"github.com/kaizen-code/kz/runtimes/completion"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/native"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// Presets are the runtimes kz offers without any configuration. Each is
// available only when its binary or API key is present.
var Presets = map[string]config.Runtime{
	"claude":     {Kind: config.KindClaudeCode, Command: "claude"},
	"codex":      {Kind: config.KindCodex, Command: "codex"},
	"gemini":     {Kind: config.KindACP, Command: "gemini", Args: []string{"--acp"}},
	"anthropic":  {Kind: config.KindNative, Provider: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY", Models: []string{"claude-sonnet-4-5"}},
	"openai":     {Kind: config.KindNative, Provider: "openai", APIKeyEnv: "OPENAI_API_KEY", Models: []string{"gpt-5"}},
	"gemini-api": {Kind: config.KindNative, Provider: "gemini", APIKeyEnv: "GEMINI_API_KEY", Models: []string{"gemini-2.5-pro"}},
	"ollama":     {Kind: config.KindNative, Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1", Models: []string{"qwen2.5-coder"}},
}

// Options are what building a runtime needs besides its configuration.
type Options struct {
	Workspace string
	// ConfigDir resolves relative script paths of the user config.
	ConfigDir string
	// Snapshots and Artifacts back the tools of kz's own agent loop: a
	// write is refused when its snapshot cannot be saved. Nil when the
	// runtimes are only listed.
	Snapshots tools.SnapshotSaver
	Artifacts tools.ArtifactSaver
	// Sandbox is the session's OS sandbox: kz's own bash runs every
	// command under it. Nil when the runtimes are only listed.
	Sandbox *sandbox.Sandbox
	// Probe also checks that an API endpoint answers (kz runtimes).
	Probe bool
	// DenyTool says a deny rule removes a tool entirely, so kz's own loop
	// never shows it to the model.
	DenyTool func(name string) bool
	// Catalog is the model catalog with the configured [[models]] entries;
	// BuildAll fills it from the configuration, nil means the embedded one.
	Catalog *llm.Catalog
	// ReadPolicy judges every entry kz's own grep, glob and list_dir
	// meet: the gate's Read rules hold inside their results too.
	ReadPolicy tools.ReadPolicy
	// FetchPolicy names the hosts kz's own web_fetch may reach at a
	// loopback or private address (the gate's WebFetch allow rules); nil
	// means none.
	FetchPolicy tools.FetchPolicy
	// PostHooks runs the PostToolUse hooks after the native runtime's
	// tool calls.
	PostHooks tools.PostToolHooks
	// StateDir is kz's state directory: an ACP agent that kz gives an
	// overlay home (Gemini CLI) keeps one per kz session under its
	// gemini-homes folder. Empty gives each session a temporary one.
	StateDir string
	// Reasoning (the --reasoning flag), when set, replaces the reasoning
	// setting of every native and completion runtime.
	Reasoning string
	// Confiner starts the agent CLIs (Claude Code, Codex, ACP agents)
	// under the OS sandbox; nil starts them unconfined, as kz runtimes
	// then says (CLIConfinement).
	Confiner agentcli.Confiner
	// MCP is the session's MCP client: kz's own loop offers its servers'
	// tools. MCPServers are the servers kz may start, which the agent
	// CLIs get in their own formats. Both are empty when none is
	// configured or trusted.
	MCP        native.ToolSource
	MCPServers []mcp.Spec
}

// GeminiHomes is the folder of kz's state directory that holds the
// Gemini overlay home of each kz session, named by the session's id.
const GeminiHomes = "gemini-homes"

// CLIConfinement says in one line how the agent CLI processes run with
// these options, for kz runtimes.
func CLIConfinement(opt Options) string { return agentcli.Describe(opt.Confiner) }

// Build makes the runtime entry for one configured runtime. A runtime that
// cannot run here still gets an entry, with Unavailable saying why, so that
// kz runtimes and the picker can show it; every entry carries its one-line
// Description.
func Build(name string, rc config.Runtime, opt Options) (engine.RuntimeEntry, error) {
	e, err := build(name, rc, opt)
	if err != nil {
		return e, err
	}
	e.Description = Describe(rc, e)
	return e, nil
}

func build(name string, rc config.Runtime, opt Options) (engine.RuntimeEntry, error) {
	switch rc.Kind {
	case config.KindScripted:
		path := rc.Script
		if !filepath.IsAbs(path) && opt.ConfigDir != "" {
			path = filepath.Join(opt.ConfigDir, path)
		}
		rt, err := scripted.Load(name, path)
		if err != nil {
			return engine.RuntimeEntry{}, fmt.Errorf("runtime %s: %w", name, err)
		}
		models := rc.Models
		if len(models) == 0 {
			models = []string{rt.Model()}
		}
		return engine.RuntimeEntry{Runtime: rt, Models: models, FixedModels: true}, nil
	case config.KindNative, config.KindCompletion:
		return buildLLM(name, rc, opt)
	case config.KindCodex:
		sb := codex.Sandbox(rc.Sandbox)
		switch sb {
		case "", codex.SandboxReadOnly, codex.SandboxWorkspaceWrite, codex.SandboxFullAccess:
		default:
			return engine.RuntimeEntry{}, fmt.Errorf("runtime %s: sandbox %q: want read-only, workspace-write or danger-full-access", name, rc.Sandbox)
		}
		rt := codex.New(codex.Config{Name: name, Command: rc.Command, Args: rc.Args, Env: childenv.FromMap(rc.Env),
			Models: rc.Models, Workspace: opt.Workspace, Sandbox: sb, Confiner: opt.Confiner, MCPServers: opt.MCPServers})
		return cliEntry(rt, rc, opt), nil
	case config.KindACP:
		cfg := acp.Config{}
		if filepath.Base(rc.Command) == "gemini" {
			// Gemini CLI needs its flags, auth method and variables.
			cfg = acp.GeminiPreset()
		}
		cfg.Name, cfg.Workspace, cfg.Confiner = name, opt.Workspace, opt.Confiner
		cfg.MCPServers = opt.MCPServers
		// The agent's writes go through kz's write_file tool, which
		// snapshots first so that they can be undone.
		cfg.Snapshots = opt.Snapshots
		if rc.Command != "" {
			cfg.Command = rc.Command
		}
		if len(rc.Args) > 0 {
			cfg.Args = rc.Args
		}
		if len(rc.Models) > 0 {
			cfg.Models = rc.Models
		}
		cfg.Env = append(cfg.Env, childenv.FromMap(rc.Env)...)
		if rc.MaxAttempts > 0 {
			cfg.MaxAttempts = rc.MaxAttempts
		}
		if opt.StateDir != "" {
			cfg.HomesDir = filepath.Join(opt.StateDir, GeminiHomes)
		}
		return cliEntry(acp.New(cfg), rc, opt), nil
	case config.KindClaudeCode:
		rt := claudecode.New(claudecode.Config{Name: name, Command: rc.Command, Args: rc.Args, Env: childenv.FromMap(rc.Env),
			Models: rc.Models, Workspace: opt.Workspace, ProposalPrompt: patch.PromptText(), Confiner: opt.Confiner, MCPServers: opt.MCPServers})
		return cliEntry(rt, rc, opt), nil
	}
	u := &unavailable{name: name, kind: rc.Kind}
	u.reason = availability(rc)
	if u.reason == "" {
		u.reason = fmt.Sprintf("runtime kind %s is not supported by this build of kz yet", rc.Kind)
	}
	return engine.RuntimeEntry{Runtime: u, Models: rc.Models, Unavailable: u.reason}, nil
}

// buildLLM builds kz's own agent loop (native) or the text-only runtime
// (completion) over an LLM API.
func buildLLM(name string, rc config.Runtime, opt Options) (engine.RuntimeEntry, error) {
	lc, err := llm.ConfigFrom(rc)
	if err != nil {
		return engine.RuntimeEntry{}, fmt.Errorf("runtime %s: %w", name, err)
	}
	var caps engine.CapSet
	for _, c := range rc.Capabilities {
		caps |= engine.NewCapSet(engine.Capability(c))
	}
	thinking, perModel, err := reasoningOf(rc, opt.Reasoning)
	if err != nil {
		return engine.RuntimeEntry{}, fmt.Errorf("runtime %s: %w", name, err)
	}
	search, err := webSearchTool(rc, lc, opt.Catalog)
	if err != nil {
		return engine.RuntimeEntry{}, fmt.Errorf("runtime %s: %w", name, err)
	}
	var rt engine.Runtime
	if rc.Kind == config.KindCompletion {
		rt, err = completion.New(completion.Config{Name: name, LLM: lc, Models: rc.Models, Catalog: opt.Catalog,
			ProposalSchema: json.RawMessage(patch.JSONSchema()), ProposalPrompt: patch.PromptText(), Reasoning: thinking})
	} else {
		rt, err = native.New(native.Config{Name: name, LLM: lc, Models: rc.Models, Capabilities: caps, Catalog: opt.Catalog,
			Tools: nativeTools(opt, search...), ProposalPrompt: patch.PromptText(), Reasoning: thinking, ModelReasoning: perModel,
			WebSearch: len(search) > 0})
	}
	if err != nil {
		return engine.RuntimeEntry{}, fmt.Errorf("runtime %s: %w", name, err)
	}
	e := engine.RuntimeEntry{Runtime: rt, Models: rc.Models}
	if err := lc.Check(); err != nil {
		e.Unavailable = reason(err)
	} else if opt.Probe || isLocal(lc.BaseURL) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := lc.Reachable(ctx); err != nil {
			e.Unavailable = reason(err)
		}
	}
	return e, nil
}

// reasoningOf reads a runtime's reasoning settings. override (the
// --reasoning flag), when set, replaces them all.
func reasoningOf(rc config.Runtime, override string) (llm.ReasoningSetting, map[string]llm.ReasoningSetting, error) {
	if override != "" {
		s, err := llm.ParseReasoning(override)
		return s, nil, err
	}
	s, err := llm.ParseReasoning(rc.Reasoning)
	if err != nil {
		return s, nil, err
	}
	var per map[string]llm.ReasoningSetting
	for model, v := range rc.ModelReasoning {
		ms, err := llm.ParseReasoning(v)
		if err != nil {
			return s, nil, fmt.Errorf("model_reasoning %s: %w", model, err)
		}
		if per == nil {
			per = map[string]llm.ReasoningSetting{}
		}
		per[model] = ms
	}
	return s, per, nil
}

// Reasoner is a runtime whose reasoning setting a session can change
// between turns (the TUI's /reasoning).
type Reasoner interface {
	SetReasoning(llm.ReasoningSetting)
}

// SetReasoning parses a reasoning setting and gives it to every runtime
// of entries that takes one; it returns how many did.
func SetReasoning(entries []engine.RuntimeEntry, setting string) (int, error) {
	s, err := llm.ParseReasoning(setting)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if r, ok := e.Runtime.(Reasoner); ok {
			r.SetReasoning(s)
			n++
		}
	}
	return n, nil
}

// versioned is a CLI runtime that can report its version.
type versioned interface {
	engine.Runtime
	Available() (string, error)
}

// cliEntry builds the entry of a CLI runtime: only kz runtimes asks the CLI
// its version (which starts it); a turn only needs it on PATH.
func cliEntry(rt versioned, rc config.Runtime, opt Options) engine.RuntimeEntry {
	e := engine.RuntimeEntry{Runtime: rt, Models: rc.Models}
	if opt.Probe {
		if v, err := rt.Available(); err != nil {
			e.Unavailable = reason(err)
		} else {
			e.Version = v
			// Installed is not enough: a CLI that is not logged in fails
			// its first turn. Its own status command says so now.
			if l := CheckLogin(context.Background(), rc); l.State == LoginMissing {
				e.Unavailable = l.Hint
			}
		}
	} else if reason := availability(rc); reason != "" {
		e.Unavailable = reason
	}
	return e
}

// Entry returns the entry of the named runtime, or a zero entry.
func Entry(entries []engine.RuntimeEntry, name string) engine.RuntimeEntry {
	for _, e := range entries {
		if e.Runtime.Name() == name {
			return e
		}
	}
	return engine.RuntimeEntry{}
}

// Infos describes the entries for the TUI's first-run text and pickers.
func Infos(entries []engine.RuntimeEntry) []engine.RuntimeInfo {
	out := make([]engine.RuntimeInfo, 0, len(entries))
	for _, x := range entries {
		out = append(out, engine.RuntimeInfo{Name: x.Runtime.Name(), Description: x.Description, Models: x.Models, Unavailable: x.Unavailable})
	}
	return out
}

// Failover turns the configured chain into links, leaving out the runtime
// a turn starts on (its own models come first anyway) and names that are
// not configured.
func Failover(chain []string, entries []engine.RuntimeEntry, first string) []engine.ChainLink {
	var out []engine.ChainLink
	for _, n := range chain {
		e := Entry(entries, n)
		if n == first || e.Runtime == nil {
			continue
		}
		out = append(out, engine.ChainLink{Runtime: n, Models: e.Models})
	}
	return out
}

// Close stops every runtime that keeps processes between turns.
func Close(entries []engine.RuntimeEntry) {
	for _, e := range entries {
		if c, ok := e.Runtime.(interface{ Close() }); ok {
			c.Close()
		} else if c, ok := e.Runtime.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}

// availability says why a runtime's prerequisites are missing, or "".
func availability(rc config.Runtime) string {
	if rc.Command != "" {
		if _, err := exec.LookPath(rc.Command); err != nil {
			return fmt.Sprintf("%s is not on PATH (install it, or set command = \"/path/to/%s\")", rc.Command, filepath.Base(rc.Command))
		}
	}
	if rc.APIKeyEnv != "" && os.Getenv(rc.APIKeyEnv) == "" {
		return fmt.Sprintf("%s is not set", rc.APIKeyEnv)
	}
	return ""
}

// BuildAll builds every runtime of cfg plus the presets it does not
// override, in a stable order: configured runtimes first.
func BuildAll(cfg *config.Config, opt Options) ([]engine.RuntimeEntry, error) {
	if opt.Catalog == nil {
		cat, err := llm.CatalogFrom(cfg.Models)
		if err != nil {
			return nil, err
		}
		opt.Catalog = cat
	}
	jobs := make([]buildJob, 0, len(cfg.RuntimeOrder)+len(Presets))
	for _, name := range cfg.RuntimeOrder {
		jobs = append(jobs, buildJob{name: name, rc: cfg.Runtimes[name]})
	}
	var presets []string
	for n := range Presets {
		if _, ok := cfg.Runtimes[n]; !ok {
			presets = append(presets, n)
		}
	}
	slices.Sort(presets)
	for _, n := range presets {
		jobs = append(jobs, buildJob{name: n, rc: Presets[n]})
	}
	return buildInOrder(jobs, probeParallelism, func(j buildJob) (engine.RuntimeEntry, error) {
		return Build(j.name, j.rc, opt)
	})
}

// unavailable stands in for a runtime that cannot run here, so that it can
// be listed with its reason. Run always fails with runtime_missing, which
// the failover chain treats as retryable.
type unavailable struct {
	name   string
	kind   config.RuntimeKind
	reason string
}

func (u *unavailable) Name() string { return u.name }

func (u *unavailable) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: kindCapabilities[u.kind]}
}

func (u *unavailable) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	return engine.Result{}, &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Runtime: u.name, Model: t.Model, Message: u.reason}
}

// kindCapabilities is what each kind declares when it runs; listed for
// runtimes that cannot run here so the person sees what they would get.
var kindCapabilities = map[config.RuntimeKind]engine.CapSet{
	config.KindNative: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFunctionTools, engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapMCP, engine.CapInterrupt),
	config.KindCompletion: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapStructuredOutput),
	config.KindClaudeCode: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapMCP, engine.CapSubagents,
		engine.CapInterrupt, engine.CapResume),
	config.KindCodex: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapApplyPatch, engine.CapSandbox,
		engine.CapInterrupt, engine.CapResume),
	config.KindACP: engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapInterrupt),
}

// nativeTools builds kz's own tools for one native runtime, with the
// runtime's own extra ones (web_search).
func nativeTools(opt Options, extra ...tools.Tool) *native.ExecutorTools {
	reg := tools.NewBuiltinRegistry()
	// The task tool delegates to a subagent on any configured runtime;
	// the session runs it (engine.Turn.SpawnChild).
	_ = reg.Register(tools.Task{})
	for _, t := range extra {
		_ = reg.Register(t)
	}
	if _, ok := opt.Artifacts.(tools.ArtifactReader); ok {
		// read_artifact is offered only where results are stored, so the
		// model can read back what the preview cut.
		_ = reg.Register(tools.ReadArtifact{})
	}
	t := native.PerSessionTools(reg.Filter(opt.DenyTool), opt.Snapshots, opt.Artifacts, opt.Sandbox)
	t.ReadPolicy, t.FetchPolicy, t.PostHooks = opt.ReadPolicy, opt.FetchPolicy, opt.PostHooks
	t.Source, t.Deny = opt.MCP, opt.DenyTool
	return t
}

// reason is why a runtime cannot run, from the error that says so, for
// one line of kz runtimes and the first-run screen: a classified error
// gives its message alone, since the line already names the runtime and
// "runtime_missing: " or "auth: " says nothing more.
func reason(err error) string {
	var re *engine.RuntimeError
	if errors.As(err, &re) {
		if re.Message != "" {
			return re.Message
		}
		if re.Err != nil {
			return re.Err.Error()
		}
	}
	return err.Error()
}

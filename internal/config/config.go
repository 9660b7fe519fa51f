// Package config loads kz's TOML configuration: the user file in the XDG
// config directory and the project file .kz/config.toml.
//
// Project configuration is code someone else wrote. Until the person trusts
// the folder (kz trust), it may only add restrictions: deny and ask rules.
// Allow rules, runtimes (which start processes), the data directory and
// the failover chain from an untrusted project are refused with a warning.
// Trust is tied to the hash of the project file, so changing the file
// withdraws it.
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/hooks"
	"github.com/kaizen-code/kz/tools/permission"
)

// RuntimeKind names how a runtime is implemented.
type RuntimeKind string

// Runtime kinds.
const (
	KindScripted   RuntimeKind = "scripted"
	KindNative     RuntimeKind = "native"
	KindCompletion RuntimeKind = "completion"
	KindClaudeCode RuntimeKind = "claude-code"
	KindCodex      RuntimeKind = "codex"
	KindACP        RuntimeKind = "acp"
)

// Kinds lists the runtime kinds kz knows.
var Kinds = []RuntimeKind{KindScripted, KindNative, KindCompletion, KindClaudeCode, KindCodex, KindACP}

// Duration is a time.Duration written as "30s" or "5m" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (use e.g. 30s, 5m, 1h): %w", b, err)
	}
	if v < 0 {
		return fmt.Errorf("bad duration %q: negative", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Runtime is one configured runtime.
type Runtime struct {
	Kind RuntimeKind `toml:"kind" json:"kind"`
	// Models lists the models: the first is the default, the rest are the
	// fallbacks of the failover chain.
	Models []string `toml:"models" json:"models,omitempty"`
	// Command and Args start a CLI runtime; Env adds to its environment.
	Command string            `toml:"command" json:"command,omitempty"`
	Args    []string          `toml:"args" json:"args,omitempty"`
	Env     map[string]string `toml:"env" json:"env,omitempty"`
	// Provider, BaseURL and APIKeyEnv configure an LLM API runtime. The key
	// is read from the named environment variable, or from APIKeyFile, a
	// file of the person's own (mode 0600, written by kz's setup screen);
	// never from a file in the project.
	Provider  string `toml:"provider" json:"provider,omitempty"`
	BaseURL   string `toml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv string `toml:"api_key_env" json:"api_key_env,omitempty"`
	// APIKeyFile is only honoured in the user config; a relative path is
	// resolved against the user config's directory.
	APIKeyFile string   `toml:"api_key_file" json:"api_key_file,omitempty"`
	Timeout    Duration `toml:"timeout" json:"timeout,omitzero"`
	// API picks the wire API of provider "openai": "chat" (Chat
	// Completions, every compatible server) or "responses" (OpenAI's
	// Responses API). Empty means responses for OpenAI itself and chat for
	// any other base URL.
	API string `toml:"api" json:"api,omitempty"`
	// Script is the JSONL file of a scripted runtime.
	Script string `toml:"script" json:"script,omitempty"`
	// Capabilities overrides what the runtime declares (for a model the
	// catalog does not know).
	Capabilities []string `toml:"capabilities" json:"capabilities,omitempty"`
	// MaxAttempts bounds how many times Gemini CLI (kind "acp") tries one
	// model request, so that a dead endpoint fails over in seconds; zero
	// keeps the preset's 2.
	MaxAttempts int `toml:"max_attempts" json:"max_attempts,omitempty"`
	// Sandbox is the sandbox of a "codex" runtime's threads:
	// "workspace-write" (the default), "read-only" or "danger-full-access".
	// Codex sends every command and file change to kz for approval in each
	// of them; under read-only an approved command that writes fails.
	Sandbox string `toml:"sandbox" json:"sandbox,omitempty"`
	// Reasoning asks a native or completion runtime's models that reason
	// for thinking: "off", "low", "medium", "high", or a budget in tokens
	// (at least 1024). Empty leaves the provider's default.
	// ModelReasoning sets it per model id.
	Reasoning      string            `toml:"reasoning" json:"reasoning,omitempty"`
	ModelReasoning map[string]string `toml:"model_reasoning" json:"model_reasoning,omitempty"`
	// WebSearch offers a native runtime's model the web_search tool, a
	// search its provider runs on its own servers (Anthropic, OpenAI's
	// Responses API, Gemini). Each search is asked through the gate (the
	// WebSearch rule).
	WebSearch bool `toml:"web_search" json:"web_search,omitempty"`
}

// Model is one [[models]] entry: it adds a model to kz's catalog or
// overrides fields of a known one (limits, prices per million tokens,
// capability flags). Unset fields keep the catalog's value, or the
// conservative defaults of an unknown model.
type Model struct {
	ID                string   `toml:"id"`
	Provider          string   `toml:"provider"`
	ContextWindow     *int     `toml:"context_window"`
	MaxOutput         *int     `toml:"max_output"`
	InputPerMTok      *float64 `toml:"input_per_mtok"`
	OutputPerMTok     *float64 `toml:"output_per_mtok"`
	CacheReadPerMTok  *float64 `toml:"cache_read_per_mtok"`
	CacheWritePerMTok *float64 `toml:"cache_write_per_mtok"`
	// WebSearchPerCall is the USD the provider charges for each
	// server-side web search, besides its tokens.
	WebSearchPerCall *float64 `toml:"web_search_per_call"`
	Tools            *bool    `toml:"tools"`
	ParallelTools    *bool    `toml:"parallel_tools"`
	Vision           *bool    `toml:"vision"`
	Reasoning        *bool    `toml:"reasoning"`
	StructuredOutput *bool    `toml:"structured_output"`
}

// Limits bound each turn.
type Limits struct {
	MaxCycles int      `toml:"max_cycles"`
	BudgetUSD float64  `toml:"budget_usd"`
	Timeout   Duration `toml:"timeout"`
}

// Permissions are rule lists in Claude Code's syntax, e.g. Bash(git status:*).
type Permissions struct {
	Allow []string `toml:"allow"`
	Ask   []string `toml:"ask"`
	Deny  []string `toml:"deny"`
}

// File is one configuration file as written.
type File struct {
	DefaultRuntime string   `toml:"default_runtime"`
	DefaultMode    string   `toml:"default_mode"`
	PermissionMode string   `toml:"permission_mode"`
	Strategy       string   `toml:"strategy"`
	Failover       []string `toml:"failover"`
	DataDir        string   `toml:"data_dir"`
	Theme          string   `toml:"theme"`
	// PatchRetries is how many times a failed proposal (edits that do not
	// match, a failed verification) goes back to the model; nil leaves
	// engine.DefaultPatchRetries, 0 turns retries off.
	PatchRetries *int               `toml:"patch_retries"`
	Limits       Limits             `toml:"limits"`
	Permissions  Permissions        `toml:"permissions"`
	Runtimes     map[string]Runtime `toml:"runtimes"`
	Models       []Model            `toml:"models"`
	// Sandbox is the [sandbox] table: the OS sandbox of shell commands.
	Sandbox SandboxFile `toml:"sandbox"`
	// TUI is the [tui] table.
	TUI TUIFile `toml:"tui"`
	// Hooks is the [hooks] table, Claude Code's hooks setting in TOML
	// ([[hooks.PreToolUse]] matcher = "Bash" with [[hooks.PreToolUse.hooks]]).
	Hooks hooks.Config `toml:"hooks"`
	// MCP is the [mcp] table: the MCP servers of every runtime.
	MCP MCPFile `toml:"mcp"`
	// Subagents is the [subagents] table: child turn defaults.
	Subagents SubagentsFile `toml:"subagents"`
}

// Config is the merged configuration.
type Config struct {
	DefaultRuntime string
	Mode           engine.Mode
	PermissionMode engine.PermissionMode
	Strategy       engine.Strategy
	Failover       []string
	DataDir        string
	Theme          string
	// Notify is the merged [tui] notify ("auto" unless set).
	Notify string
	Limits Limits
	// Subagents is the merged [subagents] table.
	Subagents Subagents
	// PatchRetries is the merged patch_retries; nil means not configured
	// (the engine's default).
	PatchRetries *int
	// Permissions holds the rules by source, so the gate can tell a user's
	// allow rule from a project's.
	UserPermissions    Permissions
	ProjectPermissions Permissions
	// UserHooks and ProjectHooks are the [hooks] tables by source; the
	// project's is empty until the folder is trusted.
	UserHooks, ProjectHooks hooks.Config
	Runtimes                map[string]Runtime
	// Sandbox is the merged [sandbox] table (network on by default).
	Sandbox Sandbox
	// Models are the [[models]] catalog entries, user file first, so a
	// trusted project's entry wins.
	Models []Model
	// RuntimeOrder lists the configured runtimes in the order the files
	// define them, the user file's first; a project that redefines a
	// runtime keeps its place. Selection strategies break ties by it.
	RuntimeOrder []string
	// ProjectTrusted says the project file may do everything the user
	// file may.
	ProjectTrusted bool
	// Warnings are things the person should see (refused project keys).
	Warnings []string
	// Untrusted lists what the project file asks for and gets only once
	// the folder is trusted ("default_mode", "allow rules", ...): the
	// TUI's trust question says what trusting would enable, and is not
	// asked when this is empty.
	Untrusted []string
	// Sources lists the files that were read.
	Sources []string
	// MCPServers are the [mcp.servers.*] of both files, sorted by name
	// within each file, the user file's first.
	MCPServers []MCPServer

	// failoverLines locates the entries of Failover, and defaultLines the
	// default_runtime key, for ValidateRuntimeNames.
	failoverLines keyLines
	defaultLines  keyLines
}

// Paths locates kz's files.
type Paths struct {
	UserConfig string // $XDG_CONFIG_HOME/kz/config.toml
	DataDir    string // $XDG_DATA_HOME/kz
	// StateDir holds what kz keeps between runs that is neither
	// configuration nor sessions: the log (kz.log) and the agent homes of
	// sessions (gemini-homes/<session id>).
	StateDir    string // $XDG_STATE_HOME/kz
	ProjectFile string // <workspace>/.kz/config.toml
}

// DefaultPaths follows the XDG base directory spec.
func DefaultPaths(workspace string) (Paths, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Paths{}, fmt.Errorf("find home directory: %w", err)
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = filepath.Join(home, ".config")
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" || !filepath.IsAbs(data) {
		data = filepath.Join(home, ".local", "share")
	}
	state, err := StateDir()
	if err != nil {
		return Paths{}, err
	}
	return Paths{
		UserConfig:  filepath.Join(cfg, "kz", "config.toml"),
		DataDir:     filepath.Join(data, "kz"),
		StateDir:    state,
		ProjectFile: filepath.Join(workspace, ".kz", "config.toml"),
	}, nil
}

// StateDir is kz's state directory, $XDG_STATE_HOME/kz (by default
// ~/.local/state/kz). It needs no configuration, so that the log can be
// opened before the configuration is read.
func StateDir() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" || !filepath.IsAbs(state) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find home directory: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "kz"), nil
}

// Load reads the user and project files (either may be missing) and merges
// them. Unknown keys and bad values are errors naming file:line.
func Load(p Paths) (*Config, error) {
	cfg := &Config{
		Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk, Strategy: engine.StrategyAuto,
		DataDir: p.DataDir, Theme: "dark", Notify: "auto", Runtimes: map[string]Runtime{}, Sandbox: Sandbox{Network: true},
	}
	user, userLines, err := readFile(p.UserConfig)
	if err != nil {
		return nil, err
	}
	if user != nil {
		cfg.Sources = append(cfg.Sources, p.UserConfig)
		if err := cfg.apply(user, userLines, true, true); err != nil {
			return nil, err
		}
		cfg.UserPermissions = user.Permissions
	}
	proj, projLines, err := readFile(p.ProjectFile)
	if err != nil {
		return nil, err
	}
	if proj != nil {
		cfg.Sources = append(cfg.Sources, p.ProjectFile)
		cfg.ProjectTrusted, err = IsTrusted(p.DataDir, p.ProjectFile)
		if err != nil {
			return nil, err
		}
		if err := cfg.apply(proj, projLines, cfg.ProjectTrusted, false); err != nil {
			return nil, err
		}
		cfg.ProjectPermissions = Permissions{Ask: proj.Permissions.Ask, Deny: proj.Permissions.Deny}
		if cfg.ProjectTrusted {
			cfg.ProjectPermissions.Allow = proj.Permissions.Allow
		} else if len(proj.Permissions.Allow) > 0 {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: allow rules ignored until you trust this folder (kz trust)", p.ProjectFile))
			cfg.Untrusted = append(cfg.Untrusted, "allow rules")
		}
	}
	return cfg, nil
}

// readFile decodes one file strictly, and indexes the lines of its keys
// for the checks that follow; a missing file is nil.
func readFile(path string) (*File, keyLines, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, keyLines{}, nil
	}
	if err != nil {
		return nil, keyLines{}, fmt.Errorf("read config: %w", err)
	}
	var f File
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, keyLines{}, positioned(path, err)
	}
	return &f, indexLines(path, data), nil
}

// positioned turns a decoder error into "file:line: message".
func positioned(path string, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		var msgs []string
		for i := range sm.Errors {
			row, _ := sm.Errors[i].Position()
			msgs = append(msgs, fmt.Sprintf("%s:%d: unknown key %q", path, row, strings.Join(sm.Errors[i].Key(), ".")))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	if de, ok := errorsAsDecode(err); ok {
		row, _ := de.Position()
		return fmt.Errorf("%s:%d: %s", path, row, decodeMessage(de))
	}
	return fmt.Errorf("%s: %w", path, err)
}

// apply merges one file into cfg. full is false for an untrusted project;
// user is true for the user's own file. Errors name the file, the line and
// the key (lines says where each key is).
func (cfg *Config) apply(f *File, lines keyLines, full, user bool) error {
	path := lines.file
	refuse := func(what string) {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %s ignored until you trust this folder (kz trust)", path, what))
		cfg.Untrusted = append(cfg.Untrusted, what)
	}
	if f.DefaultMode != "" {
		m, err := engine.ParseMode(f.DefaultMode)
		if err != nil {
			return lines.wrap("default_mode", err)
		}
		cfg.Mode = m
	}
	if f.PermissionMode != "" {
		pm, err := engine.ParsePermissionMode(f.PermissionMode)
		if err != nil {
			return lines.wrap("permission_mode", err)
		}
		// An untrusted project may make kz stricter, never laxer.
		if full || strictness(pm) > strictness(cfg.PermissionMode) {
			cfg.PermissionMode = pm
		} else {
			refuse("permission_mode " + f.PermissionMode)
		}
	}
	if f.Strategy != "" {
		st, err := engine.ParseStrategy(f.Strategy)
		if err != nil {
			return lines.wrap("strategy", err)
		}
		cfg.Strategy = st
	}
	if f.Theme != "" {
		cfg.Theme = f.Theme
	}
	if err := cfg.applyLimits(f.Limits, lines, full); err != nil {
		return err
	}
	if err := cfg.applySubagents(f.Subagents, lines, full); err != nil {
		return err
	}
	if err := cfg.applySandbox(f.Sandbox, lines, full, user); err != nil {
		return err
	}
	if err := cfg.applyTUI(f.TUI, lines); err != nil {
		return err
	}
	if err := cfg.applyHooks(f.Hooks, lines, full, user); err != nil {
		return err
	}
	if err := cfg.applyMCP(f.MCP, lines, full); err != nil {
		return err
	}
	if f.PatchRetries != nil {
		n := *f.PatchRetries
		if err := ValidatePatchRetries(n); err != nil {
			return lines.wrap("patch_retries", err)
		}
		// Every retry is another model call the person pays for, so an
		// untrusted project may lower the count like any limit, never
		// raise it above what the user set (or the engine's default).
		cur := engine.DefaultPatchRetries
		if cfg.PatchRetries != nil {
			cur = *cfg.PatchRetries
		}
		if full || n <= cur {
			cfg.PatchRetries = &n
		} else {
			refuse(fmt.Sprintf("patch_retries %d (above %d)", n, cur))
		}
	}
	for _, name := range lines.runtimeOrder(slices.Collect(maps.Keys(f.Runtimes))) {
		rt := f.Runtimes[name]
		if err := validateRuntime(name, rt, lines); err != nil {
			return err
		}
		if !full {
			refuse("runtime " + name)
			continue
		}
		if rt.APIKeyFile != "" {
			if !user {
				// A project naming a file to send as a key could send any
				// of the person's files to a server of its choice.
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: runtime %s: api_key_file can only be set in the user config", path, name))
				rt.APIKeyFile = ""
			} else if !filepath.IsAbs(rt.APIKeyFile) {
				rt.APIKeyFile = filepath.Join(filepath.Dir(path), rt.APIKeyFile)
			}
		}
		if _, redefined := cfg.Runtimes[name]; !redefined {
			cfg.RuntimeOrder = append(cfg.RuntimeOrder, name)
		}
		cfg.Runtimes[name] = rt
	}
	for i, m := range f.Models {
		if err := validateModel(m, fmt.Sprintf("models.%d", i), lines); err != nil {
			return err
		}
	}
	if len(f.Models) > 0 {
		if full {
			cfg.Models = append(cfg.Models, f.Models...)
		} else {
			// Prices and capability flags steer cost accounting and the
			// mode checks, so only the person's own files may set them.
			refuse("[[models]]")
		}
	}
	if f.DefaultRuntime != "" {
		if full {
			cfg.DefaultRuntime = f.DefaultRuntime
			cfg.defaultLines = lines
		} else {
			refuse("default_runtime")
		}
	}
	if len(f.Failover) > 0 {
		if full {
			cfg.Failover = f.Failover
			cfg.failoverLines = lines
		} else {
			refuse("failover")
		}
	}
	if f.DataDir != "" {
		if user {
			cfg.DataDir = f.DataDir
		} else {
			// Where kz keeps its data (sessions, grants) is the user's
			// choice alone, trusted project or not.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: data_dir can only be set in the user config", path))
		}
	}
	// The rules are parsed here, as the gate will parse them, so that a
	// malformed one is reported with its file and line. An untrusted
	// project's allow rules are ignored, not used, so they are not judged.
	for _, l := range []struct {
		key    string
		rules  []string
		action permission.Action
	}{{"permissions.deny", f.Permissions.Deny, permission.ActionDeny}, {"permissions.ask", f.Permissions.Ask, permission.ActionAsk},
		{"permissions.allow", f.Permissions.Allow, permission.ActionAllow}} {
		if l.action == permission.ActionAllow && !full {
			continue
		}
		if err := checkRules(l.rules, l.key, l.action, lines); err != nil {
			return err
		}
	}
	return nil
}

// checkRules parses each rule of one list as the gate will.
func checkRules(rules []string, key string, action permission.Action, lines keyLines) error {
	for i, r := range rules {
		at := fmt.Sprintf("%s.%d", key, i)
		if strings.TrimSpace(r) == "" {
			return fmt.Errorf("%s: %s: empty rule", lines.at(at), key)
		}
		if _, err := permission.ParseRule(r, action, permission.SourceUser); err != nil {
			return fmt.Errorf("%s: %s: %w", lines.at(at), key, err)
		}
	}
	return nil
}

// validateModel checks what the model catalog would refuse later, without
// the file's name: limits that are not positive and prices that are not
// finite non-negative numbers.
func validateModel(m Model, key string, lines keyLines) error {
	if strings.TrimSpace(m.ID) == "" {
		return fmt.Errorf("%s: [[models]] entry without an id", lines.at(key))
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"context_window", m.ContextWindow}, {"max_output", m.MaxOutput}} {
		if f.v != nil && *f.v <= 0 {
			return lines.errorf(key+"."+f.name, "model %q: must be positive, not %d", m.ID, *f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"input_per_mtok", m.InputPerMTok}, {"output_per_mtok", m.OutputPerMTok},
		{"cache_read_per_mtok", m.CacheReadPerMTok}, {"cache_write_per_mtok", m.CacheWritePerMTok},
		{"web_search_per_call", m.WebSearchPerCall}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0) || *f.v < 0) {
			return lines.errorf(key+"."+f.name, "model %q: want a price of 0 or more USD, not %v", m.ID, *f.v)
		}
	}
	return nil
}

// MaxPatchRetries bounds patch_retries and --patch-retries: beyond a few
// rounds a model that cannot produce a matching proposal only spends money.
const MaxPatchRetries = 10

// ValidatePatchRetries checks a patch retry count: 0 (no retries) to
// MaxPatchRetries.
func ValidatePatchRetries(n int) error {
	if n < 0 || n > MaxPatchRetries {
		return fmt.Errorf("%d is out of range (0 to %d)", n, MaxPatchRetries)
	}
	return nil
}

// EnginePatchRetries maps a configured count to engine.Config.PatchRetries,
// where 0 means the default and a negative value none: nil stays the
// default, 0 becomes -1.
func EnginePatchRetries(n *int) int {
	switch {
	case n == nil:
		return 0
	case *n == 0:
		return -1
	default:
		return *n
	}
}

func (cfg *Config) applyLimits(l Limits, lines keyLines, full bool) error {
	if l.MaxCycles < 0 {
		return lines.errorf("limits.max_cycles", "cannot be negative (0 means no limit)")
	}
	// NaN compares false with everything and +Inf is above any cost: either
	// would silently turn the budget off.
	if math.IsNaN(l.BudgetUSD) || math.IsInf(l.BudgetUSD, 0) {
		return lines.errorf("limits.budget_usd", "want a number of USD, not %v", l.BudgetUSD)
	}
	if l.BudgetUSD < 0 {
		return lines.errorf("limits.budget_usd", "cannot be negative (0 means no limit)")
	}
	// A project may tighten limits, never loosen them.
	tighter := func(cur, v float64) bool { return cur == 0 || v < cur }
	if l.MaxCycles > 0 && (full || tighter(float64(cfg.Limits.MaxCycles), float64(l.MaxCycles))) {
		cfg.Limits.MaxCycles = l.MaxCycles
	}
	if l.BudgetUSD > 0 && (full || tighter(cfg.Limits.BudgetUSD, l.BudgetUSD)) {
		cfg.Limits.BudgetUSD = l.BudgetUSD
	}
	if l.Timeout.Duration > 0 && (full || tighter(float64(cfg.Limits.Timeout.Duration), float64(l.Timeout.Duration))) {
		cfg.Limits.Timeout = l.Timeout
	}
	return nil
}

func strictness(p engine.PermissionMode) int {
	switch p {
	case engine.PermissionDeny:
		return 3
	case engine.PermissionAsk:
		return 2
	case engine.PermissionAcceptEdits:
		return 1
	default:
		return 0
	}
}

func validateRuntime(name string, rt Runtime, lines keyLines) error {
	key := "runtimes." + name
	if name == "" || strings.ContainsAny(name, " \t/") {
		return fmt.Errorf("%s: runtime name %q: use letters, digits, - and _", lines.at(key), name)
	}
	if !slices.Contains(Kinds, rt.Kind) {
		return fmt.Errorf("%s: runtime %s: unknown kind %q (one of scripted, native, completion, claude-code, codex, acp)",
			lines.at(key+".kind"), name, rt.Kind)
	}
	for i, c := range rt.Capabilities {
		if _, err := engine.ParseCapability(c); err != nil {
			return fmt.Errorf("%s: runtime %s: %w", lines.at(fmt.Sprintf("%s.capabilities.%d", key, i)), name, err)
		}
	}
	if rt.Kind == KindScripted && rt.Script == "" {
		return fmt.Errorf("%s: runtime %s: a scripted runtime needs script = \"file.jsonl\"", lines.at(key), name)
	}
	return nil
}

// ValidateRuntimeNames checks that default_runtime and every runtime the
// failover chain names are known (configured or a preset), reporting the
// file:line of the first that is not. Unknown names would otherwise be
// skipped quietly, and kz would run another runtime than the one asked for.
func (cfg *Config) ValidateRuntimeNames(known func(name string) bool) error {
	if name := cfg.DefaultRuntime; name != "" && !known(name) {
		err := fmt.Errorf("unknown runtime %q (configure it under [runtimes.%s], or use a preset: kz runtimes lists them)", name, name)
		if cfg.defaultLines.file == "" {
			return fmt.Errorf("default_runtime: %w", err)
		}
		return fmt.Errorf("%s: default_runtime: %w", cfg.defaultLines.at("default_runtime"), err)
	}
	for i, name := range cfg.Failover {
		if known(name) {
			continue
		}
		err := fmt.Errorf("unknown runtime %q (configure it under [runtimes.%s], or use a preset: kz runtimes lists them)", name, name)
		if cfg.failoverLines.file == "" {
			return fmt.Errorf("failover: %w", err)
		}
		return fmt.Errorf("%s: failover: %w", cfg.failoverLines.at(fmt.Sprintf("failover.%d", i)), err)
	}
	return nil
}

// trustFile lists trusted project files with the hash they had when trusted.
func trustFile(dataDir string) string { return filepath.Join(dataDir, "trusted.json") }

func hashFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func readTrust(dataDir string) (map[string]string, error) {
	m := map[string]string{}
	b, err := os.ReadFile(trustFile(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trust list: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read trust list %s: %w", trustFile(dataDir), err)
	}
	return m, nil
}

// IsTrusted reports whether the project file is trusted as it is now.
func IsTrusted(dataDir, projectFile string) (bool, error) {
	m, err := readTrust(dataDir)
	if err != nil {
		return false, err
	}
	want, ok := m[projectFile]
	if !ok {
		return false, nil
	}
	got, err := hashFile(projectFile)
	if err != nil {
		return false, err
	}
	return got == want, nil
}

// Trust records the project file as trusted with its current hash. The list
// is written atomically with mode 0600.
func Trust(dataDir, projectFile string) error {
	m, err := readTrust(dataDir)
	if err != nil {
		return err
	}
	h, err := hashFile(projectFile)
	if err != nil {
		return err
	}
	m[projectFile] = h
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write trust list: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("write trust list: %w", err)
	}
	tmp, err := os.CreateTemp(dataDir, ".trusted-*.json")
	if err != nil {
		return fmt.Errorf("write trust list: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write trust list: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write trust list: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write trust list: %w", err)
	}
	if err := os.Rename(tmp.Name(), trustFile(dataDir)); err != nil {
		return fmt.Errorf("write trust list: %w", err)
	}
	return nil
}

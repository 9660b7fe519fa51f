package app

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// UsageError is a wrong call of kz found while wiring it (the scripted
// runtime without --script): the command line reports it as a usage
// error.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// RuntimesFor says what the runtimes are built with. Store, Sandbox and
// Gate are nil when the runtimes are only listed (kz runtimes).
type RuntimesFor struct {
	// Script is a JSONL script (--script) that adds, or replaces, the
	// scripted runtime named Runtime ("scripted" by default).
	Script, Runtime string
	// Probe also checks that each API endpoint answers.
	Probe   bool
	Store   *store.Store
	Sandbox *sandbox.Sandbox
	Gate    *permission.Gate
	// Reasoning (--reasoning) replaces every LLM runtime's reasoning.
	Reasoning string
	// MCP is the session's MCP client (Env.MCP); nil when the runtimes
	// are only listed.
	MCP *mcp.Manager
}

// Runtimes builds every configured runtime and every preset.
func (e *Env) Runtimes(r RuntimesFor) ([]engine.RuntimeEntry, error) {
	opt := runtimes.Options{Workspace: e.Workspace, ConfigDir: filepath.Dir(e.Paths.UserConfig), Probe: r.Probe, Sandbox: r.Sandbox,
		StateDir: e.Paths.StateDir, Reasoning: r.Reasoning}
	if r.Gate != nil {
		opt.DenyTool, opt.ReadPolicy, opt.FetchPolicy = r.Gate.DeniesTool, r.Gate, r.Gate
	}
	if e.hooks != nil {
		opt.PostHooks = e.hooks
	}
	if r.Sandbox != nil {
		// The agent CLIs run confined too: what they run after kz's yes
		// cannot write outside the workspace or into .git.
		opt.Confiner = agentcli.NewConfiner(r.Sandbox)
	}
	if r.Store != nil {
		opt.Snapshots, opt.Artifacts = toolSnapshots{st: r.Store}, r.Store
	}
	if r.MCP != nil {
		// kz's own loop gets the servers' tools from kz's client; the
		// agent CLIs get the servers kz may start, to start themselves.
		opt.MCP = r.MCP
		opt.MCPServers = mcp.Runnable(mcp.FromConfig(e.Config.MCPServers))
	}
	entries, err := runtimes.BuildAll(e.Config, opt)
	if err != nil {
		return nil, err
	}
	if r.Script == "" {
		if r.Runtime == "scripted" && runtimes.Entry(entries, "scripted").Runtime == nil {
			return nil, &UsageError{"the scripted runtime needs --script FILE"}
		}
		return entries, nil
	}
	name := r.Runtime
	if name == "" || name == "auto" {
		name = "scripted"
	}
	if fi, err := os.Stat(r.Script); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("--script %s: is a directory, not a script file", r.Script)
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--script %s: no such file", r.Script)
	}
	rt, err := scripted.Load(name, r.Script)
	if err != nil {
		return nil, err
	}
	out := []engine.RuntimeEntry{{Runtime: rt, Models: []string{rt.Model()}, FixedModels: true,
		Description: "scripted replay of " + filepath.Base(r.Script)}}
	for _, x := range entries {
		if x.Runtime.Name() != name {
			out = append(out, x)
		}
	}
	return out, nil
}

// choose picks the runtime and model for a turn: --runtime (or auto), the
// resumed session's runtime, the configured default, then the strategy.
func (e *Env) choose(entries []engine.RuntimeEntry, o Options, mode engine.Mode, resumed store.SessionInfo) (string, string, error) {
	cfg := e.Config
	cands := e.Candidates(entries)
	// --runtime auto means "let the configuration choose": the configured
	// strategy with the configured default runtime, as without the flag.
	strategy, preferred := cmp.Or(cfg.Strategy, engine.StrategyAuto), cfg.DefaultRuntime
	switch {
	case o.Runtime != "" && o.Runtime != "auto":
		strategy, preferred = engine.StrategyPreferred, o.Runtime
	case o.Runtime == "auto":
		// The configuration's strategy and default, set above.
	case o.Script != "":
		strategy, preferred = engine.StrategyPreferred, "scripted"
	case resumed.Runtime != "":
		strategy, preferred = engine.StrategyAuto, resumed.Runtime
	}
	c, err := engine.SelectFor(strategy, mode, o.Needs, preferred, cands)
	if err != nil {
		var re *engine.RuntimeError
		if errors.As(err, &re) && re.Kind == engine.ErrRuntimeMissing && len(cfg.Failover) > 0 {
			// The chain may still serve the turn; the session fails over.
			return preferred, o.Model, nil
		}
		return "", "", err
	}
	model := c.Model
	if o.Model != "" {
		model = o.Model
	} else if resumed.Runtime == c.Runtime && resumed.Model != "" {
		model = resumed.Model
	}
	return c.Runtime, model, nil
}

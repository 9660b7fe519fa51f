package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
)

// The permission rules given on the command line and kz policy check:
// both build the gate exactly as a session does.

// cliRules are the permission rules given with --allow, --ask and --deny.
// They are the gate's CLI source: checked like user rules, and recorded
// as source "cli" in every decision they make.
type cliRules struct{ permission.Rules }

// register adds the three repeatable rule flags to fs.
func (r *cliRules) register(fs *flag.FlagSet) {
	fs.Var(ruleFlag{action: permission.ActionAllow, list: &r.Allow}, "allow", "")
	fs.Var(ruleFlag{action: permission.ActionAsk, list: &r.Ask}, "ask", "")
	fs.Var(ruleFlag{action: permission.ActionDeny, list: &r.Deny}, "deny", "")
}

// ruleFlag is one repeatable rule flag. Each value is checked with the
// gate's own rule parser when it is given, so a malformed rule is a usage
// error naming the flag instead of a failure deep in the gate.
type ruleFlag struct {
	action permission.Action
	list   *[]string
}

func (f ruleFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ", ")
}

func (f ruleFlag) Set(v string) error {
	if _, err := permission.ParseRule(v, f.action, permission.SourceCLI); err != nil {
		// The flag package prefixes this with the flag's name and value.
		return err
	}
	*f.list = append(*f.list, v)
	return nil
}

// gate builds the permission gate from the rules of every source: the
// user's config, the "always allow" grants file beside it, and the
// project's config (allow rules only once the folder is trusted), and the
// --allow/--ask/--deny flags of this invocation.
func (e *env) gate(headless bool, cli permission.Rules) (*permission.Gate, error) {
	grants := config.NewGrantsFile(e.paths)
	always, err := grants.Rules()
	if err != nil {
		return nil, err
	}
	up, proj := e.cfg.UserPermissions, e.cfg.ProjectPermissions
	g, err := permission.New(permission.Options{
		User:           permission.Rules{Allow: append(slices.Clone(up.Allow), always...), Ask: up.Ask, Deny: up.Deny},
		Project:        permission.Rules{Allow: proj.Allow, Ask: proj.Ask, Deny: proj.Deny},
		CLI:            cli,
		ProjectTrusted: e.cfg.ProjectTrusted, Headless: headless,
		ConfigDir: filepath.Dir(e.paths.UserConfig), DataDir: e.dataDir, Writer: grants,
		// The gate lets a command run without a person's yes only as far
		// as the OS sandbox makes its analysis true: with less than full
		// enforcement it auto-allows only commands whose every option it
		// knows.
		Enforcement: enforcement(ossandbox.Probe()), Network: e.cfg.Sandbox.Network,
	})
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	return g, nil
}

// cmdPolicy answers "what would the gate do with this call" with exactly
// the gate's code: kz policy check --tool T --input JSON. The mode and the
// permission mode are the configuration's (default_mode, permission_mode),
// as for kz itself, unless --mode or --permission-mode overrides them.
func cmdPolicy(ctx context.Context, args []string, stdout io.Writer) error {
	const use = "usage: kz policy check --tool NAME --input JSON [--mode M] [--permission-mode P] [--allow R] [--ask R] [--deny R] [--json]"
	if len(args) == 0 || args[0] != "check" {
		return usagef(use)
	}
	fs := flag.NewFlagSet("policy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tool := fs.String("tool", "", "")
	input := fs.String("input", "", "")
	// Empty means "as configured"; the configuration is read only once
	// the flags are known to be good.
	modeFlag := fs.String("mode", "", "")
	pmodeFlag := fs.String("permission-mode", "", "")
	asJSON := fs.Bool("json", false, "")
	var rules cliRules
	rules.register(fs)
	if err := fs.Parse(args[1:]); err != nil {
		// The flag package's message names the flag and, for a malformed
		// rule, the rule and what is wrong with it.
		return usagef("%v; %s", err, use)
	}
	if fs.NArg() > 0 || *tool == "" || *input == "" {
		return usagef(use)
	}
	var mode engine.Mode
	var pmode engine.PermissionMode
	var err error
	if *modeFlag != "" {
		if mode, err = engine.ParseMode(*modeFlag); err != nil {
			return usagef("--mode: %v", err)
		}
	}
	if *pmodeFlag != "" {
		if pmode, err = engine.ParsePermissionMode(*pmodeFlag); err != nil {
			return usagef("--permission-mode: %v", err)
		}
	}
	if !knownPolicyTool(*tool) {
		return usagef("--tool %q: unknown tool; kz's tools are %s; other agents' tools the gate reads are %s; MCP tools are named %sSERVER__TOOL",
			*tool, strings.Join(tools.NewBuiltinRegistry().Names(), ", "), strings.Join(agentTools(), ", "), permission.MCPToolPrefix)
	}
	if !json.Valid([]byte(*input)) {
		return usagef("--input is not valid JSON")
	}
	e, err := loadEnv("")
	if err != nil {
		return err
	}
	if mode == "" {
		mode = e.cfg.Mode
	}
	if pmode == "" {
		pmode = e.cfg.PermissionMode
	}
	g, err := e.gate(false, rules.Rules)
	if err != nil {
		return err
	}
	rep, err := tools.PolicyCheck(ctx, g, permission.PolicyInput{Tool: *tool, Input: json.RawMessage(*input), Mode: mode, PermissionMode: pmode, Workspace: e.workspace})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	_, err = io.WriteString(stdout, rep.Text())
	return err
}

// knownPolicyTool reports whether kz policy check can judge a call of
// tool: one of kz's tools, a tool of another agent whose input the gate
// reads (Claude Code's Bash or Write, Gemini CLI's run_shell_command), or
// an MCP tool. Any other name would be judged as a tool that touches
// nothing, so a typo ("write" for write_file) would get an answer that
// says nothing about the real tool.
func knownPolicyTool(name string) bool {
	_, builtin := tools.NewBuiltinRegistry().Lookup(name)
	return builtin || permission.KnownTool(name)
}

// agentTools lists the known tool names that are not kz's own.
func agentTools() []string {
	reg := tools.NewBuiltinRegistry()
	return slices.DeleteFunc(permission.KnownTools(), func(n string) bool {
		_, ok := reg.Lookup(n)
		return ok
	})
}

// enforcement maps what the machine's sandbox can do to what the gate may
// count on.
func enforcement(st ossandbox.Status) permission.Enforcement {
	switch {
	case st.Full:
		return permission.EnforcementFull
	case st.Kind == ossandbox.KindLandlock:
		return permission.EnforcementPartial
	}
	return permission.EnforcementNone
}

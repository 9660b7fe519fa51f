package cli

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
)

// cmdPolicy answers "what would the gate do with this call" with exactly
// the gate's code, built exactly as a session builds it.
var cmdPolicy = &Command{
	Name:      "policy",
	UsageLine: "kz policy check --tool NAME --input JSON [--mode M] [--permission-mode P] [--allow R] [--ask R] [--deny R] [--json]",
	Short: []Usage{{"kz policy check --tool T --input JSON [--mode M] [--permission-mode P]\n               [--allow R] [--ask R] [--deny R] [--json]",
		"what the permission gate decides, and why"}},
	Long: `kz policy check judges one tool call with the permission gate a session
would use: the rules of the user's config, of the grants file, of the
project's config (allow rules only once the folder is trusted) and of
--allow, --ask and --deny, in the mode and permission mode of the
configuration (default_mode, permission_mode) unless --mode or
--permission-mode says otherwise. It prints the decision, the stage and
rule that made it and why, the sandbox profile a command would run under,
and what the gate read of the call (a command's parts, the paths it
touches); --json prints the same as JSON. The PreToolUse hooks of the
configuration ([hooks], a project's only once trusted) run as they would
in a session, without the sandbox, and their answer is the "hook" stage.

--tool names one of kz's tools, a tool of another agent whose input the
gate reads (Claude Code's Bash or Write, Gemini CLI's run_shell_command),
or an MCP tool (mcp__SERVER__TOOL); --input is the call's input as JSON.
`,
	Run: runPolicy,
}

func runPolicy(ctx context.Context, inv *Invocation, args []string) error {
	use := "usage: " + inv.Command.UsageLine
	if len(args) == 0 || args[0] != "check" {
		return usagef("%s", use)
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
		return usagef("%s", use)
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
	e, err := app.Load("")
	if err != nil {
		return err
	}
	if mode == "" {
		mode = e.Config.Mode
	}
	if pmode == "" {
		pmode = e.Config.PermissionMode
	}
	g, err := e.Gate(false, rules.Rules)
	if err != nil {
		return err
	}
	rep, err := tools.PolicyCheck(ctx, g, permission.PolicyInput{Tool: *tool, Input: json.RawMessage(*input), Mode: mode, PermissionMode: pmode, Workspace: e.Workspace})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(inv.Stdout).Encode(rep)
	}
	_, err = io.WriteString(inv.Stdout, rep.Text())
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

package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/tools/mcp"
)

// cmdMCP lists the configured MCP servers.
var cmdMCP = &Command{
	Name:      "mcp",
	UsageLine: "kz mcp list [--json]",
	Short:     []Usage{{"kz mcp list [--json]", "the MCP servers: state, tools, errors"}},
	Long: `kz mcp list starts every configured MCP server that may start (those of
the user config, and a project's only once the folder is trusted), each
within its startup_timeout, and prints its state, its tools as the model
sees them (mcp__NAME__TOOL; "read-only" when the server marks a tool
readOnlyHint and trust_annotations is set) and the error of a server that
did not start, then which runtimes get the servers (Codex none yet). The
servers are stopped before kz exits.

--json prints one object per server: name, transport, state, tools,
error and source (the file that defines it).
`,
	Run: runMCP,
}

func runMCP(ctx context.Context, inv *Invocation, args []string) error {
	if len(args) == 0 || args[0] != "list" {
		return usagef("usage: %s", inv.Command.UsageLine)
	}
	fs := flag.NewFlagSet("mcp list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		return usagef("usage: %s", inv.Command.UsageLine)
	}
	e, err := app.Load("")
	if err != nil {
		return err
	}
	m := e.MCP(nil)
	defer m.Close()
	m.Start(ctx)
	st := m.Statuses()
	if st == nil {
		st = []mcp.Status{}
	}
	if *asJSON {
		enc := json.NewEncoder(inv.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	if len(st) == 0 {
		_, err := fmt.Fprintln(inv.Stdout, "no MCP servers configured (add [mcp.servers.NAME] to the config; see README.md)")
		return err
	}
	if err := writeMCPList(inv.Stdout, st); err != nil {
		return err
	}
	_, err = io.WriteString(inv.Stdout, mcpReach)
	return err
}

// mcpReach says which runtimes get the listed servers, so that the list
// does not suggest that every runtime can call them.
const mcpReach = "\nThese servers reach the native runtime, Claude Code and ACP agents (Gemini CLI only in a workspace without its own .gemini/);\n" +
	"Codex gets none of them yet (README, MCP servers).\n"

// writeMCPList prints one block per server: its name, transport and
// state, then its tools or its error.
func writeMCPList(w io.Writer, st []mcp.Status) error {
	var b strings.Builder
	for _, s := range st {
		fmt.Fprintf(&b, "%s (%s): %s\n", s.Name, s.Transport, s.State)
		if s.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", s.Error)
		}
		for _, t := range s.Tools {
			ro := ""
			if t.ReadOnly {
				ro = " (read-only)"
			}
			fmt.Fprintf(&b, "  %s%s\n", t.Name, ro)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

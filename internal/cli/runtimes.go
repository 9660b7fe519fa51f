package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
)

// cmdRuntimes lists the runtimes kz knows, whether each can run here, and
// what it can do.
var cmdRuntimes = &Command{
	Name:      "runtimes",
	UsageLine: "kz runtimes [--json]",
	Short:     []Usage{{"kz runtimes [--json]", "configured runtimes, availability, capabilities"}},
	Long: `kz runtimes lists every configured runtime and every preset: whether it
can run here (and if not, why: a CLI not on PATH, an API key not set, an
endpoint that does not answer), its version, its models and its
capabilities, then what confines the shell commands kz runs (the OS
sandbox) and the agent CLIs. --json prints one object per runtime; its
selected_by says, per selection strategy, the modes for which that
strategy would pick the runtime with this configuration.
`,
	Run: runRuntimes,
}

func runRuntimes(_ context.Context, inv *Invocation, args []string) error {
	fs := flag.NewFlagSet("runtimes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usagef("usage: %s", inv.Command.UsageLine)
	}
	e, err := app.Load("")
	if err != nil {
		return err
	}
	// What the configuration ignored (an untrusted folder's runtimes, say)
	// is said here as kz -p says it: a runtime missing from the table
	// without a word would look like a bug.
	e.Warn(inv.Stderr)
	entries, err := e.Runtimes(app.RuntimesFor{Probe: true})
	if err != nil {
		return err
	}
	type row struct {
		Name         string              `json:"name"`
		Version      string              `json:"version,omitempty"`
		Available    bool                `json:"available"`
		Why          string              `json:"why,omitempty"`
		Models       []string            `json:"models,omitempty"`
		Capabilities engine.Capabilities `json:"capabilities"`
		// Sandbox is what confines the shell commands kz runs for the
		// runtime: the same for every runtime, repeated so that each row
		// stands alone.
		Sandbox ossandbox.Status `json:"sandbox"`
		// SelectedBy lists, per strategy, the modes for which that
		// strategy picks this runtime with the current configuration.
		SelectedBy map[engine.Strategy][]engine.Mode `json:"selected_by,omitempty"`
	}
	sb := ossandbox.Probe()
	picks := e.Picks(entries)
	var rows []row
	for _, x := range entries {
		m := ""
		if len(x.Models) > 0 {
			m = x.Models[0]
		}
		rows = append(rows, row{Name: x.Runtime.Name(), Version: x.Version, Available: x.Unavailable == "", Why: x.Unavailable, Models: x.Models, Capabilities: x.Runtime.Capabilities(m), Sandbox: sb,
			SelectedBy: selectedBy(picks, x.Runtime.Name())})
	}
	if *asJSON {
		enc := json.NewEncoder(inv.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(inv.Stdout, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "RUNTIME\tAVAILABLE\tMODELS\tCAPABILITIES")
	for _, r := range rows {
		avail := "yes"
		if r.Version != "" {
			avail = "yes (" + r.Version + ")"
		}
		if !r.Available {
			avail = "no: " + r.Why
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, avail, strings.Join(r.Models, ", "), r.Capabilities.Set)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(inv.Stdout, "\nsandbox: %s\nagent CLIs: %s\n", sb.Reason, agentcli.DescribeStatus(sb))
	return nil
}

// selectedBy inverts the selector's picks (strategy → mode → runtime) for
// one runtime: the modes each strategy picks it for, in the modes' order.
func selectedBy(picks map[engine.Strategy]map[engine.Mode]string, name string) map[engine.Strategy][]engine.Mode {
	out := map[engine.Strategy][]engine.Mode{}
	for _, st := range engine.Strategies {
		for _, mode := range engine.Modes {
			if picks[st][mode] == name {
				out[st] = append(out[st], mode)
			}
		}
	}
	return out
}

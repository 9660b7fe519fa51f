package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
)

// cmdRuntimes lists the runtimes kz knows, whether each can run here, and
// what it can do.
var cmdRuntimes = &Command{
	Name:      "runtimes",
	UsageLine: "kz runtimes [--verbose] [--json]",
	Short:     []Usage{{"kz runtimes [--verbose] [--json]", "configured runtimes and whether each can run here"}},
	Long: `kz runtimes lists every configured runtime and every preset, one line of
at most 80 columns each: its name, whether it can run here, and one short
reason (a CLI not on PATH or not logged in, an API key not set, an
endpoint that does not answer; or its version and model when it can),
then what confines the shell commands kz runs (the OS sandbox) and the
agent CLIs. --verbose adds the models and capabilities of each runtime;
--json prints one object per runtime with all of it; its selected_by
says, per selection strategy, the modes for which that strategy would
pick the runtime with this configuration.
`,
	Run: runRuntimes,
}

func runRuntimes(_ context.Context, inv *Invocation, args []string) error {
	fs := flag.NewFlagSet("runtimes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	verbose := fs.Bool("verbose", false, "")
	fs.BoolVar(verbose, "v", false, "")
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
	sb := ossandbox.Probe()
	picks := e.Picks(entries)
	var rows []runtimeRow
	for _, x := range entries {
		m := ""
		if len(x.Models) > 0 {
			m = x.Models[0]
		}
		rows = append(rows, runtimeRow{Name: x.Runtime.Name(), Version: x.Version, Available: x.Unavailable == "", Why: x.Unavailable, Models: x.Models, Capabilities: x.Runtime.Capabilities(m), Sandbox: sb,
			SelectedBy: selectedBy(picks, x.Runtime.Name())})
	}
	if *asJSON {
		enc := json.NewEncoder(inv.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if *verbose {
		if err := writeVerboseRuntimes(inv.Stdout, rows); err != nil {
			return err
		}
	} else {
		lines := make([]runtimeLine, len(rows))
		for i, r := range rows {
			lines[i] = runtimeLine{Name: r.Name, Ready: r.Available, Why: r.Why}
			if r.Available {
				lines[i].Why = readyReason(r.Version, r.Models)
			}
		}
		if err := writeRuntimeLines(inv.Stdout, lines, runtimesWidth); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(inv.Stdout, "\n%s\n%s\n", fitLine("sandbox: "+sb.Reason, runtimesWidth, *verbose),
		fitLine("agent CLIs: "+agentcli.DescribeStatus(sb), runtimesWidth, *verbose))
	return err
}

// runtimeRow is one runtime of kz runtimes, as --json prints it.
type runtimeRow struct {
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

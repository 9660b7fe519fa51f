package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/config"
)

// cmdTrust trusts the folder's .kz/config.toml as it is now.
var cmdTrust = &Command{
	Name:      "trust",
	UsageLine: "kz trust",
	Short:     []Usage{{"kz trust", "trust this folder's .kz/config.toml as it is now"}},
	Long: `kz trust trusts the project configuration of this folder, .kz/config.toml,
as it is now. Until then it can add deny and ask rules and tighten limits,
but it cannot add allow rules, loosen the permission mode, define runtimes
(which start processes), change the failover chain or move kz's data; the
folder's custom commands are not offered either. Trust is tied to the
file's hash: editing the file withdraws it.
`,
	Run: runTrust,
}

func runTrust(_ context.Context, inv *Invocation, args []string) error {
	if len(args) > 0 {
		return usagef("kz trust takes no arguments")
	}
	e, err := app.Load("")
	if err != nil {
		return err
	}
	if _, err := os.Stat(e.Paths.ProjectFile); err != nil {
		return fmt.Errorf("nothing to trust: %w", err)
	}
	if err := config.Trust(e.Paths.DataDir, e.Paths.ProjectFile); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(inv.Stdout, "trusted %s as it is now; changing it withdraws the trust\n", e.Paths.ProjectFile)
	return nil
}

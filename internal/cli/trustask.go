package cli

import (
	"context"
	"fmt"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/tui"
)

// askTrustQuestion is the TUI's trust question; tests replace it.
var askTrustQuestion = tui.AskTrust

// askTrust asks, before the TUI opens, whether to trust a project
// configuration that asks for more than an untrusted project may have
// (config.Config.Untrusted). A yes trusts the file as `kz trust` does and
// opens the session again, so that the whole file applies to it (its
// runtimes and rules are read when the session opens); a no keeps the
// session as it is, and the TUI says that the folder is not trusted. On an
// error a is closed.
func askTrust(ctx context.Context, a *app.App, opts app.Options) (*app.App, error) {
	cfg := a.Env.Config
	if cfg.ProjectTrusted || len(cfg.Untrusted) == 0 {
		return a, nil
	}
	file := a.Env.Paths.ProjectFile
	yes, err := askTrustQuestion(ctx, tui.TrustQuestion{File: file, Enables: cfg.Untrusted})
	if err != nil {
		a.Close()
		return nil, err
	}
	if !yes {
		note := fmt.Sprintf("%s is not trusted: only its deny and ask rules and stricter limits apply. Run kz trust to trust it as it is.", file)
		if a.Welcome != "" {
			note = a.Welcome + "\n" + note
		}
		a.Welcome = note
		return a, nil
	}
	err = config.Trust(a.Env.Paths.DataDir, file)
	a.Close()
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, opts)
}

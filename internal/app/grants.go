package app

import (
	"context"
	"fmt"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tui"
)

// grantManager is /permissions in the TUI: the gate's session grants and
// the "always allow" rules of the grants file.
type grantManager struct {
	gate *permission.Gate
	file *config.GrantsFile
}

// ListGrants implements tui.GrantManager.
func (g grantManager) ListGrants(context.Context) ([]tui.Grant, error) {
	var out []tui.Grant
	for _, k := range g.gate.SessionGrants() {
		out = append(out, tui.Grant{Scope: "session", Rule: k})
	}
	rules, err := g.file.Rules()
	if err != nil {
		return out, err
	}
	for _, r := range rules {
		out = append(out, tui.Grant{Scope: "always", Rule: r})
	}
	return out, nil
}

// RevokeGrant implements tui.GrantManager.
func (g grantManager) RevokeGrant(ctx context.Context, gr tui.Grant) error {
	if gr.Scope == "session" {
		if !g.gate.RevokeSessionGrant(gr.Rule) {
			return fmt.Errorf("no session grant %q", gr.Rule)
		}
		return nil
	}
	ok, err := g.file.RemoveAllowRule(ctx, gr.Rule)
	if err != nil {
		return err
	}
	g.gate.RevokeAllowRule(gr.Rule)
	if !ok {
		return fmt.Errorf("no persisted grant %q", gr.Rule)
	}
	return nil
}

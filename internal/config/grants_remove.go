package config

import (
	"context"
	"fmt"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// RemoveAllowRule revokes one persisted rule, rewriting the file
// atomically; it reports whether the rule was there.
func (g *GrantsFile) RemoveAllowRule(_ context.Context, rule string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	rules, err := g.read()
	if err != nil {
		return false, err
	}
	kept := slices.DeleteFunc(slices.Clone(rules), func(r string) bool { return r == rule })
	if len(kept) == len(rules) {
		return false, nil
	}
	body, err := toml.Marshal(grantsDoc{Allow: kept})
	if err != nil {
		return false, fmt.Errorf("write grants: %w", err)
	}
	body = append([]byte("# Rules allowed with \"always allow\" in kz. Edit or delete lines to revoke them.\n"), body...)
	return true, writeAtomic(g.Path, body)
}

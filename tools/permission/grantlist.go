package permission

import (
	"slices"
	"sort"
)

// SessionGrants lists the keys remembered by "allow for session" (for
// example "bash:git status" or "write:/abs/path"), sorted.
func (g *Gate) SessionGrants() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]string, 0, len(g.grants))
	for k, ok := range g.grants {
		if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// RevokeSessionGrant forgets one session grant; it reports whether the
// gate had it.
func (g *Gate) RevokeSessionGrant(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.grants[key]
	delete(g.grants, key)
	return ok
}

// RevokeAllowRule drops the allow rule raw that "always allow" added, in
// this session or an earlier one (persisted rules load as user rules),
// from the rules in effect; the caller removes it from the grants file.
// It reports whether a rule went.
func (g *Gate) RevokeAllowRule(raw string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.rules)
	g.rules = slices.DeleteFunc(g.rules, func(r Rule) bool {
		return r.Action == ActionAllow && r.Raw == raw && (r.Source == SourceAlways || r.Source == SourceUser)
	})
	return len(g.rules) < n
}

package permission

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// memoryGrants is the RuleWriter of these tests: the grants file kz uses
// (internal/config.GrantsFile, tested there) imports this package to check
// rule syntax, so a test here cannot import it back.
type memoryGrants struct {
	mu    sync.Mutex
	rules []string
}

func (m *memoryGrants) AddAllowRule(_ context.Context, rule string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.rules, rule) {
		m.rules = append(m.rules, rule)
	}
	return nil
}

func (m *memoryGrants) RemoveAllowRule(_ context.Context, rule string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.rules)
	m.rules = slices.DeleteFunc(m.rules, func(r string) bool { return r == rule })
	return len(m.rules) < n, nil
}

func (m *memoryGrants) Rules() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.rules), nil
}

// TestRevokeGrants: a session grant and an "always" rule, listed and then
// revoked, stop allowing; the always rule also leaves the grants file.
func TestRevokeGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	file := &memoryGrants{}
	g := f.gate(t, Options{Writer: file})
	touch, gotest := bashQuery(f.ws, "touch a.txt"), bashQuery(f.ws, "go test ./...")
	if err := g.Remember(ctx, touch, engine.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if err := g.Remember(ctx, gotest, engine.ScopeAlways); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g.SessionGrants(), ","); !strings.HasPrefix(got, "bash:go test ./...,bash:touch a.txt,write:") || !strings.HasSuffix(got, "/a.txt") {
		t.Fatalf("session grants %q", got)
	}
	if !g.RevokeSessionGrant("bash:touch a.txt") || g.RevokeSessionGrant("bash:touch a.txt") {
		t.Fatal("revoking a session grant twice")
	}
	if d := g.Check(ctx, touch).Decision; d != engine.DecisionAsk {
		t.Fatalf("touch after revoke: %s, want ask", d)
	}

	// The always rule: gone from the file and from the gate. The session
	// key "always" also added goes with its own revoke.
	ok, err := file.RemoveAllowRule(ctx, "Bash(go test ./...)")
	if err != nil || !ok {
		t.Fatalf("remove from file: %v %v", ok, err)
	}
	if rules, err := file.Rules(); err != nil || len(rules) != 0 {
		t.Fatalf("file still has %q (%v)", rules, err)
	}
	if !g.RevokeAllowRule("Bash(go test ./...)") || !g.RevokeSessionGrant("bash:go test ./...") {
		t.Fatal("the always rule was not in the gate")
	}
	if d := g.Check(ctx, gotest).Decision; d != engine.DecisionAsk {
		t.Fatalf("go test after revoke: %s, want ask", d)
	}
}

package permission

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestWebFetchGrantIsPerHost (class: remembering a fetch): "allow for this
// session" and "always allow" on a fetch cover its host, for kz's
// web_fetch and Claude Code's WebFetch alike, and never every fetch.
func TestWebFetchGrantIsPerHost(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"web_fetch", "WebFetch"} {
		f := newFixture(t)
		w := &memWriter{}
		g := f.gate(t, Options{Writer: w})
		ctx := context.Background()
		q := fetchQuery(f.ws, tool, urlInput("https://Docs.Example.com/a"))
		v := g.Check(ctx, q)
		if v.Decision != engine.DecisionAsk || !strings.Contains(v.Reason, "docs.example.com") ||
			!strings.Contains(v.Reason, "WebFetch(domain:docs.example.com)") {
			t.Fatalf("%s: first fetch %+v, want an ask naming the host and the rule", tool, v)
		}
		if !slices.Equal(v.Grants, []string{"WebFetch(domain:docs.example.com)"}) {
			t.Errorf("%s: grants offered %v", tool, v.Grants)
		}
		if err := g.Remember(ctx, q, engine.ScopeSession); err != nil {
			t.Fatal(err)
		}
		if v := g.Check(ctx, fetchQuery(f.ws, tool, urlInput("https://docs.example.com/other"))); v.Decision != engine.DecisionAllow {
			t.Errorf("%s: same host after the grant: %+v", tool, v)
		}
		for _, other := range []string{"https://example.com/", "https://evil.docs.example.com/", "https://docs.example.com.evil.test/"} {
			if v := g.Check(ctx, fetchQuery(f.ws, tool, urlInput(other))); v.Decision != engine.DecisionAsk {
				t.Errorf("%s: %s after a grant for docs.example.com: %s", tool, other, v.Decision)
			}
		}
		if g.PrivateHostAllowed("docs.example.com") {
			t.Errorf("%s: a session grant lifted the private-address refusal", tool)
		}
		if err := g.Remember(ctx, fetchQuery(f.ws, tool, urlInput("http://api.test:8080/x")), engine.ScopeAlways); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w.rules, []string{"WebFetch(domain:api.test)"}) {
			t.Errorf("%s: always allow persisted %v", tool, w.rules)
		}
		if err := g.Remember(ctx, fetchQuery(f.ws, tool, urlInput("file:///etc/passwd")), engine.ScopeSession); err == nil {
			t.Errorf("%s: a URL that cannot be judged was granted", tool)
		}
	}
}

// TestPrivateHostAllowed (class: which rules lift the private-address
// refusal): only an allow rule naming the host, exactly or as a
// subdomain pattern, in any spelling of the host; never a rule for every
// host, and never a host a deny rule names.
func TestPrivateHostAllowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: Rules{
		Allow: []string{"WebFetch(domain:localhost)", "WebFetch(domain:127.0.0.1)", "WebFetch(domain:*.lan.test)", "WebFetch(domain:[::1])",
			"WebFetch(domain:*)", "WebFetch", "WebFetch(domain:both.test)"},
		Deny: []string{"WebFetch(domain:both.test)"},
	}})
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "localhost.": true, "127.0.0.1": true, "2130706433": true,
		"::1": true, "[::1]": true, "nas.lan.test": true, "lan.test": false,
		"127.0.0.2": false, "example.com": false, "both.test": false, "": false, "bad host": false,
	} {
		if got := g.PrivateHostAllowed(host); got != want {
			t.Errorf("PrivateHostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
	untrusted := f.gate(t, Options{Project: Rules{Allow: []string{"WebFetch(domain:localhost)"}}})
	if untrusted.PrivateHostAllowed("localhost") {
		t.Error("an untrusted project's allow rule lifted the refusal")
	}
}

// TestWebFetchInEveryMode: a fetch writes nothing, so the mode stage lets
// it through in analysis-only and patch-proposal mode; the domain rules
// and the default ask decide there as everywhere.
func TestWebFetchInEveryMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: Rules{Allow: []string{"WebFetch(domain:ok.test)"}, Deny: []string{"WebFetch(domain:bad.test)"}}})
	for _, m := range []engine.Mode{engine.ModeAnalysisOnly, engine.ModePatchProposal, engine.ModeFullAutonomous} {
		for u, want := range map[string]engine.Decision{
			"https://ok.test/": engine.DecisionAllow, "https://bad.test/": engine.DecisionDeny, "https://new.test/": engine.DecisionAsk,
		} {
			q := fetchQuery(f.ws, "web_fetch", urlInput(u))
			q.Mode = m
			if v := g.Check(context.Background(), q); v.Decision != want {
				t.Errorf("%s %s: %s (%s), want %s", m, u, v.Decision, v.Reason, want)
			}
		}
	}
}

// TestWebSearchRuleCoversEveryAgentsSearch (class: one rule per kind of
// tool): a WebSearch rule allows, asks about or denies kz's web_search,
// Claude Code's WebSearch, Codex's web_search and Gemini CLI's
// google_web_search alike; with no rule each is asked, in every mode, and
// a bare deny rule removes kz's tool before the model sees it.
func TestWebSearchRuleCoversEveryAgentsSearch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	q := func(tool string, m engine.Mode) engine.GateQuery {
		return engine.GateQuery{Workspace: f.ws, Mode: m, PermissionMode: engine.PermissionAsk,
			Request: engine.PermissionRequest{Tool: tool, Input: []byte(`{"query":"go 1.26"}`)}}
	}
	for _, c := range []struct {
		rules Rules
		want  engine.Decision
	}{
		{Rules{}, engine.DecisionAsk},
		{Rules{Allow: []string{"WebSearch"}}, engine.DecisionAllow},
		{Rules{Allow: []string{"WebSearch"}, Ask: []string{"WebSearch"}}, engine.DecisionAsk},
		{Rules{Allow: []string{"WebSearch"}, Deny: []string{"WebSearch"}}, engine.DecisionDeny},
	} {
		g := f.gate(t, Options{User: c.rules})
		for _, tool := range []string{"web_search", "WebSearch", "google_web_search"} {
			for _, m := range []engine.Mode{engine.ModeFullAutonomous, engine.ModeAnalysisOnly} {
				if v := g.Check(context.Background(), q(tool, m)); v.Decision != c.want {
					t.Errorf("rules %+v, %s in %s: %s (%s), want %s", c.rules, tool, m, v.Decision, v.Reason, c.want)
				}
			}
		}
		if got := g.DeniesTool("web_search"); got != (len(c.rules.Deny) > 0) {
			t.Errorf("rules %+v: DeniesTool(web_search) = %v", c.rules, got)
		}
	}
}

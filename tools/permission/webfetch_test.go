package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func fetchQuery(ws, tool, input string) engine.GateQuery {
	return engine.GateQuery{Workspace: ws, Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk,
		Request: engine.PermissionRequest{Tool: tool, Input: json.RawMessage(input)}}
}

func urlInput(u string) string {
	b, _ := json.Marshal(map[string]string{"url": u, "prompt": "summarise"})
	return string(b)
}

// TestWebFetchHostSpellings (class: WebFetch host spellings): a domain
// rule matches the host the fetch reaches, however the URL spells it, and
// nothing else; a URL that cannot be judged is denied with a reason.
func TestWebFetchHostSpellings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rules := Rules{
		Allow: []string{"WebFetch(domain:ok.com)", "WebFetch(domain:*.docs.test)", "WebFetch(domain:bücher.example)", "WebFetch(domain:[2001:db8::1])"},
		Deny:  []string{"WebFetch(domain:evil.com)", "WebFetch(domain:127.0.0.1)", "WebFetch(domain:*.internal.test)"},
	}
	g := f.gate(t, Options{User: rules})
	cases := []struct {
		url    string
		want   engine.Decision
		reason string
	}{
		// Allowed host, spelled many ways.
		{"https://ok.com/x", engine.DecisionAllow, ""},
		{"https://OK.COM/x", engine.DecisionAllow, ""},
		{"https://ok.com./x", engine.DecisionAllow, ""},
		{"https://ok.com:8443/x", engine.DecisionAllow, ""},
		{"https://user:pw@ok.com/x", engine.DecisionAllow, ""},
		{"HTTPS://Ok.Com", engine.DecisionAllow, ""},
		{"https://ｏｋ.com/", engine.DecisionAllow, ""},
		{"https://xn--bcher-kva.example/", engine.DecisionAllow, ""},
		{"https://BÜCHER.example/", engine.DecisionAllow, ""},
		{"https://[2001:db8:0:0:0:0:0:1]/", engine.DecisionAllow, ""},
		{"https://api.docs.test/", engine.DecisionAllow, ""},
		// Not the allowed host.
		{"https://sub.ok.com/", engine.DecisionAsk, ""},
		{"https://ok.com.evil.test/", engine.DecisionAsk, ""},
		{"https://docs.test/", engine.DecisionAsk, ""},
		{"https://notok.com/", engine.DecisionAsk, ""},
		// Userinfo that looks like the allowed host: the host is evil.com.
		{"http://ok.com@evil.com/", engine.DecisionDeny, "matches the rule"},
		{"http://ok.com:443@evil.com/", engine.DecisionDeny, ""},
		{"https://EVIL.com./", engine.DecisionDeny, ""},
		{"https://evil.com:8080/", engine.DecisionDeny, ""},
		{"https://ｅｖｉｌ.com/", engine.DecisionDeny, ""},
		// IPv4 in every notation is 127.0.0.1.
		{"http://127.0.0.1/", engine.DecisionDeny, ""},
		{"http://2130706433/", engine.DecisionDeny, ""},
		{"http://0x7f.1/", engine.DecisionDeny, ""},
		{"http://0177.0.0.01/", engine.DecisionDeny, ""},
		{"http://127.1/", engine.DecisionDeny, ""},
		{"http://0x7F000001/", engine.DecisionDeny, ""},
		{"http://a.internal.test/", engine.DecisionDeny, ""},
		// Bad URLs.
		{"http://ok.com\\@evil.com/", engine.DecisionDeny, "backslash"},
		{"file:///etc/passwd", engine.DecisionDeny, "not http or https"},
		{"ftp://ok.com/", engine.DecisionDeny, "not http or https"},
		{"https:///x", engine.DecisionDeny, "names no host"},
		{"not a url", engine.DecisionDeny, ""},
		{"http://ok..com/", engine.DecisionDeny, "empty label"},
		{"http://256.256.256.256/", engine.DecisionDeny, "above 255"},
		{"http://ok.com%0a.evil/", engine.DecisionDeny, ""},
		{"http://1.2.3.4.5/", engine.DecisionDeny, "too many parts"},
	}
	for _, c := range cases {
		rep := g.Evaluate(context.Background(), fetchQuery(f.ws, "WebFetch", urlInput(c.url)))
		if rep.Decision != c.want {
			t.Errorf("%s: %s, want %s (stage %s, reason %s)", c.url, rep.Decision, c.want, rep.Stage, rep.Reason)
			continue
		}
		if !strings.Contains(rep.Reason, c.reason) {
			t.Errorf("%s: reason %q does not say %q", c.url, rep.Reason, c.reason)
		}
		if !rep.Confinement.IsZero() {
			t.Errorf("%s: a fetch got confinement %v", c.url, rep.Confinement)
		}
	}
}

// TestWebFetchRuleForms (class: WebFetch host spellings): rules are
// normalised when they are parsed; malformed ones are refused.
func TestWebFetchRuleForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, bad := range []string{"WebFetch(example.com)", "WebFetch(domain:)", "WebFetch(domain:a..b)", "WebFetch(domain:ex*ample.com)",
		"WebFetch(domain:a b)", "WebFetch(domain:*.)"} {
		if _, err := New(Options{User: allow(bad)}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	for _, c := range []struct {
		rule, url string
		want      engine.Decision
	}{
		{"WebFetch(domain:EXAMPLE.COM.)", "https://example.com/", engine.DecisionAllow},
		{"WebFetch(domain:*)", "https://anything.test/", engine.DecisionAllow},
		{"WebFetch(domain:0x7f.1)", "http://127.0.0.1/", engine.DecisionAllow},
		{"WebFetch(domain:::1)", "http://[::1]:8080/", engine.DecisionAllow},
		{"WebFetch", "https://anything.test/", engine.DecisionAllow},
		{"WebFetch(domain:*.example.com)", "https://example.com/", engine.DecisionAsk},
	} {
		g := f.gate(t, Options{User: allow(c.rule)})
		if got := g.Check(context.Background(), fetchQuery(f.ws, "WebFetch", urlInput(c.url))).Decision; got != c.want {
			t.Errorf("%s on %s: %s, want %s", c.rule, c.url, got, c.want)
		}
	}
}

// TestWebFetchGeminiPrompt: Gemini CLI's web_fetch names its URLs in a
// prompt; a deny rule on any of them denies, an allow rule must cover all.
func TestWebFetchGeminiPrompt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: Rules{Allow: []string{"WebFetch(domain:ok.com)"}, Deny: []string{"WebFetch(domain:evil.com)"}}})
	for prompt, want := range map[string]engine.Decision{
		"Summarise https://ok.com/a and https://OK.com./b.": engine.DecisionAllow,
		"Compare https://ok.com/a with https://other.test/": engine.DecisionAsk,
		"Read (https://ok.com/a), then http://EVIL.com/x":   engine.DecisionDeny,
		"No address here": engine.DecisionDeny,
	} {
		in, _ := json.Marshal(map[string]string{"prompt": prompt})
		if got := g.Check(context.Background(), fetchQuery(f.ws, "web_fetch", string(in))).Decision; got != want {
			t.Errorf("%q: %s, want %s", prompt, got, want)
		}
	}
}

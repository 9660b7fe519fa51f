package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadMessagesNameFileLineAndKey: every error a configuration file can
// cause says where (file:line) and which key, in TOML's terms, never Go's.
func TestLoadMessagesNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ body, want string }{
		{"[limits]\nmax_cycles = \"ten\"\n", `config.toml:2: limits.max_cycles: want an integer, got a string`},
		{"[limits]\nbudget_usd = \"x\"\n", `config.toml:2: limits.budget_usd: want a number, got a string`},
		{"failover = \"claude\"\n", `config.toml:1: failover: want an array, got a string`},
		{"patch_retries = 1.5\n", `config.toml:1: patch_retries: want an integer, got a float`},
		{"\n[runtimes.a]\nkind = 3\n", `config.toml:3: runtimes.a.kind: want a string, got an integer`},
		{"[[models]]\nid = \"x\"\ntools = \"yes\"\n", `config.toml:3: models.tools: want true or false, got a string`},
		{"limits = 3\n", `config.toml:1: limits: want a table, got an integer`},
		{"[limits]\ntimeout = \"5x\"\n", `config.toml:2: limits.timeout: bad duration "5x"`},
		{"# limits\n[limits]\nbudget_usd = 1\nmax_cycles = -1\n", `config.toml:4: limits.max_cycles: cannot be negative`},
		{"[limits]\nbudget_usd = -1.5\n", `config.toml:2: limits.budget_usd: cannot be negative`},
		{"[limits]\nbudget_usd = nan\n", `config.toml:2: limits.budget_usd: want a number of USD, not NaN`},
		{"[limits]\nbudget_usd = inf\n", `config.toml:2: limits.budget_usd: want a number of USD, not +Inf`},
		{"limits = { budget_usd = -inf }\n", `config.toml:1: limits.budget_usd: want a number of USD, not -Inf`},
		{"theme = \"x\"\n\n[runtimes.demo]\nscript = \"d.jsonl\"\nkind = \"bogus\"\n", `config.toml:5: runtime demo: unknown kind "bogus"`},
		{"[runtimes.demo]\nkind = \"scripted\"\n", `config.toml:1: runtime demo: a scripted runtime needs script`},
		{"[runtimes.n]\nkind = \"native\"\ncapabilities = [\n  \"shell\",\n  \"telepathy\",\n]\n", `config.toml:5: runtime n: unknown capability "telepathy"`},
		{"default_mode = \"fast\"\n", `config.toml:1: default_mode: unknown mode "fast"`},
		{"\npermission_mode = \"sometimes\"\n", `config.toml:2: permission_mode:`},
		{"\n\nstrategy = \"random\"\n", `config.toml:3: strategy:`},
		{"patch_retries = 11\n", `config.toml:1: patch_retries: 11 is out of range`},
		{"[permissions]\nallow = [\"Read(**)\",\n  \"Bash(\"]\n", `config.toml:3: permissions.allow: rule "Bash(": missing closing parenthesis`},
		{"[permissions]\ndeny = [\"\"]\n", `config.toml:2: permissions.deny: empty rule`},
		{"[[models]]\nid = \"a\"\n[[models]]\nid = \"x\"\ncontext_window = 0\n", `config.toml:5: models.1.context_window: model "x": must be positive, not 0`},
		{"[[models]]\nid = \"x\"\ninput_per_mtok = nan\n", `config.toml:3: models.0.input_per_mtok: model "x": want a price of 0 or more USD, not NaN`},
		{"[[models]]\nid = \"x\"\nweb_search_per_call = -1.0\n", `config.toml:3: models.0.web_search_per_call: model "x": want a price of 0 or more USD, not -1`},
		{"[[models]]\nprovider = \"openai\"\n", `config.toml:1: [[models]] entry without an id`},
	}
	for _, c := range cases {
		p := paths(t)
		write(t, p.UserConfig, c.body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.body, err, c.want)
			continue
		}
		for _, leak := range []string{"config.", "Go ", "struct field", "float64", "toml:"} {
			if strings.Contains(strings.TrimPrefix(err.Error(), p.UserConfig), leak) {
				t.Errorf("%q: %v leaks %q", c.body, err, leak)
			}
		}
	}
}

// TestUntrustedProjectAllowRulesAreNotJudged: an untrusted project's allow
// rules are ignored with a warning, so a malformed one is not an error,
// while its deny rules, which apply, are checked.
func TestUntrustedProjectAllowRulesAreNotJudged(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.ProjectFile, "[permissions]\nallow = [\"Bash(\"]\n")
	if _, err := Load(p); err != nil {
		t.Fatal(err)
	}
	write(t, p.ProjectFile, "[permissions]\ndeny = [\"Bash(\"]\n")
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p.ProjectFile+":2: permissions.deny") {
		t.Fatalf("%v", err)
	}
}

func TestValidateRuntimeNames(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, "theme = \"dark\"\nfailover = [\n  \"claude\",\n  \"mine\",\n  \"nosuch\",\n]\n[runtimes.mine]\nkind = \"native\"\n")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	known := func(n string) bool { return n == "claude" || n == "mine" }
	err = c.ValidateRuntimeNames(known)
	if err == nil || !strings.Contains(err.Error(), p.UserConfig+`:5: failover: unknown runtime "nosuch"`) {
		t.Fatalf("%v", err)
	}
	c.Failover = c.Failover[:2]
	if err := c.ValidateRuntimeNames(known); err != nil {
		t.Fatal(err)
	}
	// An unknown default runtime is named with its line, not reported as
	// "no runtime can serve this mode".
	p2 := paths(t)
	write(t, p2.UserConfig, "theme = \"dark\"\ndefault_runtime = \"nosuch\"\n")
	c2, err := Load(p2)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.ValidateRuntimeNames(known); err == nil || !strings.Contains(err.Error(), p2.UserConfig+`:2: default_runtime: unknown runtime "nosuch"`) {
		t.Fatalf("%v", err)
	}
	// A chain from elsewhere (no file) still names the key.
	empty := &Config{Failover: []string{"x"}}
	if err := empty.ValidateRuntimeNames(known); err == nil || !strings.HasPrefix(err.Error(), `failover: unknown runtime "x"`) {
		t.Fatalf("%v", err)
	}
}

func TestGrantsFileRulesAreChecked(t *testing.T) {
	t.Parallel()
	p := paths(t)
	g := NewGrantsFile(p)
	if err := os.MkdirAll(filepath.Dir(g.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, g.Path, "# grants\nallow = [\n  \"Read(src/**)\",\n  \"Bash(\",\n]\n")
	if _, err := g.Rules(); err == nil || !strings.Contains(err.Error(), g.Path+`:4: allow: rule "Bash(": missing closing parenthesis`) {
		t.Fatalf("%v", err)
	}
	// The bad rule can still be revoked.
	if ok, err := g.RemoveAllowRule(t.Context(), "Bash("); err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	if rules, err := g.Rules(); err != nil || len(rules) != 1 {
		t.Fatalf("%v %v", rules, err)
	}
}

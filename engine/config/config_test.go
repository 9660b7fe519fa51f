package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(t *testing.T) Paths {
	dir := t.TempDir()
	return Paths{UserConfig: filepath.Join(dir, "cfg", "kz", "config.toml"), DataDir: filepath.Join(dir, "data"), ProjectFile: filepath.Join(dir, "proj", ".kz", "config.toml")}
}

func TestLoadMergesUserAndProject(t *testing.T) {
	p := paths(t)
	write(t, p.UserConfig, `
default_runtime = "fast"
default_mode = "analysis-only"
permission_mode = "accept-edits"
failover = ["slow"]
[limits]
max_cycles = 40
budget_usd = 2.5
timeout = "10m"
[permissions]
allow = ["Bash(git status:*)"]
[runtimes.fast]
kind = "native"
provider = "anthropic"
api_key_env = "ANTHROPIC_API_KEY"
models = ["a", "b"]
[runtimes.slow]
kind = "claude-code"
command = "claude"
`)
	write(t, p.ProjectFile, `
[limits]
max_cycles = 100
budget_usd = 1.0
[permissions]
deny = ["Bash(rm:*)"]
allow = ["Bash(*)"]
`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.DefaultRuntime != "fast" || c.Mode != engine.ModeAnalysisOnly || c.PermissionMode != engine.PermissionAcceptEdits {
		t.Fatalf("%+v", c)
	}
	if c.Limits.MaxCycles != 40 || c.Limits.BudgetUSD != 1.0 || c.Limits.Timeout.Duration != 10*time.Minute {
		t.Fatalf("limits %+v: an untrusted project may tighten, never loosen", c.Limits)
	}
	if len(c.ProjectPermissions.Allow) != 0 || c.ProjectPermissions.Deny[0] != "Bash(rm:*)" {
		t.Fatalf("project permissions %+v", c.ProjectPermissions)
	}
	if strings.Join(c.RuntimeOrder, ",") != "fast,slow" || c.Runtimes["fast"].Models[1] != "b" {
		t.Fatalf("runtimes %v", c.RuntimeOrder)
	}
	if err := Trust(p.DataDir, p.ProjectFile); err != nil {
		t.Fatal(err)
	}
	c, err = Load(p)
	if err != nil || !c.ProjectTrusted || c.Limits.MaxCycles != 100 || len(c.ProjectPermissions.Allow) != 1 {
		t.Fatalf("trusted project: %v %+v", err, c)
	}
	if fi, err := os.Stat(filepath.Join(p.DataDir, "trusted.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trust file: %v %v", err, fi)
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ body, want string }{
		{"default_mode = \"full-autonomous\"\nthemee = \"x\"\n", `config.toml:2: unknown key "themee"`},
		{"[runtimes.x]\nkind = \"native\"\nmodel = \"a\"\n", `config.toml:3: unknown key "runtimes.x.model"`},
		{"default_mode = \"turbo\"\n", `default_mode: unknown mode "turbo"`},
		{"[runtimes.x]\nkind = \"warp\"\n", `runtime x: unknown kind "warp"`},
		{"[runtimes.x]\nkind = \"scripted\"\n", "needs script"},
		{"[limits]\ntimeout = \"soon\"\n", "config.toml:2"},
		{"[limits]\nmax_cycles = \"ten\"\n", "config.toml:2"},
		{"permission_mode = [", "config.toml:1"},
	}
	for _, c := range cases {
		p := paths(t)
		write(t, p.UserConfig, c.body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
}

func TestGrantsFilePersistsAlwaysAllowRules(t *testing.T) {
	p := paths(t)
	g := NewGrantsFile(p)
	if rules, err := g.Rules(); err != nil || len(rules) != 0 {
		t.Fatalf("%v %v", rules, err)
	}
	for _, r := range []string{"Bash(make test)", "Edit(./src/a.go)", "Bash(make test)"} {
		if err := g.AddAllowRule(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := NewGrantsFile(p).Rules()
	if err != nil || strings.Join(rules, ",") != "Bash(make test),Edit(./src/a.go)" {
		t.Fatalf("%v %v", rules, err)
	}
	if fi, err := os.Stat(g.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	write(t, g.Path, "allow = [\"x\"]\nbogus = 1\n")
	if _, err := g.Rules(); err == nil || !strings.Contains(err.Error(), "grants.toml:2") {
		t.Fatalf("bad file: %v", err)
	}
}

package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/config"
)

// cliFor finds the pinned CLI the Makefile installs (KZ_CLAUDE_BIN,
// KZ_CODEX_BIN); without it the test skips, unless KZ_REQUIRE_CLIS says
// it must run.
func cliFor(t *testing.T, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		if os.Getenv("KZ_REQUIRE_CLIS") != "" {
			t.Fatalf("%s is not set (make test installs the CLI)", env)
		}
		t.Skipf("%s is not set", env)
	}
	return p
}

// TestCheckLoginRealCLIsUnderAnEmptyHome runs the real status commands
// of Claude Code and Codex with a HOME of their own, holding no login and
// no key: both must say "not logged in" with the command to run. With
// ANTHROPIC_API_KEY set, Claude Code counts as logged in.
func TestCheckLoginRealCLIsUnderAnEmptyHome(t *testing.T) {
	cases := []struct {
		env  string
		kind config.RuntimeKind
		name string
		hint string
	}{
		{"KZ_CLAUDE_BIN", config.KindClaudeCode, "claude", "run `claude auth login`"},
		{"KZ_CODEX_BIN", config.KindCodex, "codex", "run `codex login`"},
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := cliFor(t, c.env)
			// The status command is found by the name kz shows.
			dir := t.TempDir()
			if err := os.Symlink(bin, filepath.Join(dir, c.name)); err != nil {
				t.Fatal(err)
			}
			l := CheckLogin(context.Background(), config.Runtime{Kind: c.kind, Command: filepath.Join(dir, c.name)})
			want := c.name + " is installed but not logged in: " + c.hint
			if l.State != LoginMissing || l.Hint != want {
				t.Fatalf("login = %+v, want %q", l, want)
			}
		})
	}
	t.Run("claude with a key", func(t *testing.T) {
		bin := cliFor(t, "KZ_CLAUDE_BIN")
		t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
		if l := CheckLogin(context.Background(), config.Runtime{Kind: config.KindClaudeCode, Command: bin}); l.State != LoginOK {
			t.Fatalf("with ANTHROPIC_API_KEY: %+v", l)
		}
	})
}

// TestCheckLoginReadsExitAndAnswer checks the class of outcomes with
// small status commands: exit 0, the "not logged in" answer with exit 1,
// exit 1 with another answer, another exit code, a CLI that cannot start,
// and a runtime kind without a status command.
func TestCheckLoginReadsExitAndAnswer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		rc   config.Runtime
		want LoginState
	}{
		{"claude ok", config.Runtime{Kind: config.KindClaudeCode, Command: script("c0", `echo '{"loggedIn": true}'`)}, LoginOK},
		{"claude out", config.Runtime{Kind: config.KindClaudeCode, Command: script("c1", `echo '{"loggedIn": false}'; exit 1`)}, LoginMissing},
		{"claude other", config.Runtime{Kind: config.KindClaudeCode, Command: script("c2", `echo 'unknown command auth'; exit 1`)}, LoginUnknown},
		{"codex out", config.Runtime{Kind: config.KindCodex, Command: script("x1", `echo 'Not logged in' >&2; echo 'Not logged in'; exit 1`)}, LoginMissing},
		{"codex crash", config.Runtime{Kind: config.KindCodex, Command: script("x2", `exit 2`)}, LoginUnknown},
		{"missing", config.Runtime{Kind: config.KindCodex, Command: filepath.Join(dir, "nope")}, LoginUnknown},
		{"acp", config.Runtime{Kind: config.KindACP, Command: script("g", "exit 1")}, LoginUnknown},
	}
	for _, c := range cases {
		l := CheckLogin(context.Background(), c.rc)
		if l.State != c.want {
			t.Errorf("%s: state %s, want %s", c.name, l.State, c.want)
		}
		if (l.State == LoginMissing) != strings.Contains(l.Hint, "not logged in") {
			t.Errorf("%s: hint %q", c.name, l.Hint)
		}
	}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	if l := CheckLogin(context.Background(), config.Runtime{Kind: config.KindCodex, Command: script("x3", "exit 1")}); l.State != LoginOK {
		t.Errorf("codex with OPENAI_API_KEY: %+v", l)
	}
}

// TestCheckLoginRunsCodexWithoutItsLauncher: where the configured codex
// is the npm launcher, the status command runs the native binary it
// would run, as a turn does. The launcher here fails if run; the binary
// answers "Not logged in".
func TestCheckLoginRunsCodexWithoutItsLauncher(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	triple := map[string]string{"linux/amd64": "x86_64-unknown-linux-musl", "linux/arm64": "aarch64-unknown-linux-musl",
		"darwin/amd64": "x86_64-apple-darwin", "darwin/arm64": "aarch64-apple-darwin"}[runtime.GOOS+"/"+runtime.GOARCH]
	if triple == "" {
		t.Skipf("no Codex build for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	nm := filepath.Join(t.TempDir(), "lib", "node_modules")
	write := func(path, text string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(nm, "@openai", "codex")
	write(filepath.Join(root, "package.json"), `{"name":"@openai/codex"}`, 0o644)
	write(filepath.Join(root, "bin", "codex.js"), "#!/bin/sh\n# CODEX_MANAGED_PACKAGE_ROOT CODEX_MANAGED_BY_NPM\nexit 97\n", 0o755)
	write(filepath.Join(root, "vendor", triple, "bin", "codex"), "#!/bin/sh\necho 'Not logged in' >&2\nexit 1\n", 0o755)
	l := CheckLogin(context.Background(), config.Runtime{Kind: config.KindCodex, Command: filepath.Join(root, "bin", "codex.js")})
	if l.State != LoginMissing || !strings.HasPrefix(l.Hint, "codex.js is installed but not logged in") {
		t.Fatalf("login = %+v, want the binary's not-logged-in answer", l)
	}
}

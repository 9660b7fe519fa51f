package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var setupRuntime = &Runtime{Kind: KindNative, Provider: "anthropic", BaseURL: "http://127.0.0.1:9/x",
	APIKeyFile: "/home/u/.config/kz/keys/anthropic.key", Models: []string{"claude-sonnet-4-5"}}

// loadUser loads path as the user config (no project file).
func loadUser(t *testing.T, path string) *Config {
	t.Helper()
	cfg, err := Load(Paths{UserConfig: path, ProjectFile: filepath.Join(t.TempDir(), "none.toml"), DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("load the written config: %v", err)
	}
	return cfg
}

func TestSetDefaultRuntimeWritesANewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kz", "config.toml")
	if err := SetDefaultRuntime(path, "anthropic", setupRuntime); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", st.Mode().Perm())
	}
	cfg := loadUser(t, path)
	if cfg.DefaultRuntime != "anthropic" {
		t.Errorf("default runtime %q", cfg.DefaultRuntime)
	}
	got := cfg.Runtimes["anthropic"]
	if got.APIKeyFile != setupRuntime.APIKeyFile || got.BaseURL != setupRuntime.BaseURL || got.Models[0] != "claude-sonnet-4-5" {
		t.Errorf("runtime read back as %+v", got)
	}
	assertNoTemp(t, filepath.Dir(path))
}

// TestSetDefaultRuntimeKeepsTheFile merges into files people write: every
// line of the old file is still there (as written, or commented out when
// it is the replaced runtime), and the file reads back as the old
// configuration plus the new runtime.
func TestSetDefaultRuntimeKeepsTheFile(t *testing.T) {
	cases := []struct {
		name, old string
		// commented are old lines that must now be comments.
		commented []string
	}{
		{"top-level keys and tables", "# my settings\ntheme = \"light\" # I like it\nfailover = [\n  \"openai\",\n]\n\n[limits]\nmax_cycles = 7\n\n[runtimes.openai]\nkind = \"native\"\nprovider = \"openai\"\n", nil},
		{"only tables", "# only tables\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n", nil},
		{"a default already", "default_runtime = \"openai\" # old\ntheme = \"light\"\n[runtimes.openai]\nkind = \"native\"\nprovider = \"openai\"\n",
			[]string{"default_runtime = \"openai\" # old"}},
		{"the same runtime already", "theme = \"light\"\n[runtimes.anthropic]\nkind = \"native\"\nprovider = \"anthropic\"\n# its env\n[runtimes.anthropic.env]\nFOO = \"1\"\n[limits]\nmax_cycles = 3\n",
			[]string{"[runtimes.anthropic]", "[runtimes.anthropic.env]", "FOO = \"1\""}},
		{"crlf", "theme = \"light\"\r\n[limits]\r\nmax_cycles = 2\r\n", nil},
		{"no final newline", "theme = \"light\"", nil},
		{"empty", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.toml")
			if err := os.WriteFile(path, []byte(c.old), 0o644); err != nil {
				t.Fatal(err)
			}
			before := loadUser(t, path)
			if err := SetDefaultRuntime(path, "anthropic", setupRuntime); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			for _, l := range strings.Split(strings.ReplaceAll(c.old, "\r\n", "\n"), "\n") {
				if l == "" {
					continue
				}
				commented := false
				for _, cl := range c.commented {
					commented = commented || cl == l
				}
				if commented {
					if !strings.Contains(text, "# "+l) {
						t.Errorf("line %q is not kept as a comment:\n%s", l, text)
					}
				} else if !strings.Contains(text, l) {
					t.Errorf("line %q was lost:\n%s", l, text)
				}
			}
			after := loadUser(t, path)
			if after.DefaultRuntime != "anthropic" || after.Runtimes["anthropic"].APIKeyFile != setupRuntime.APIKeyFile {
				t.Errorf("the new runtime is not the default: %q %+v", after.DefaultRuntime, after.Runtimes["anthropic"])
			}
			if after.Theme != before.Theme || after.Limits != before.Limits || len(after.Failover) != len(before.Failover) {
				t.Errorf("other settings changed: %+v → %+v", before, after)
			}
			if rt, ok := before.Runtimes["openai"]; ok && after.Runtimes["openai"].Provider != rt.Provider {
				t.Errorf("the other runtime was lost")
			}
			if strings.Contains(c.old, "\r\n") && strings.Count(text, "\n") != strings.Count(text, "\r\n") {
				t.Errorf("line endings mixed:\n%q", text)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// TestSetDefaultRuntimeRefuses leaves a file it cannot edit safely as it
// was, and says what to add by hand.
func TestSetDefaultRuntimeRefuses(t *testing.T) {
	cases := []struct{ name, old, want string }{
		{"broken file", "theme = \n", "fix it first"},
		{"unknown key", "colour = \"red\"\n", "fix it first"},
		{"runtime as an inline table", "[runtimes]\nanthropic = { kind = \"native\", provider = \"anthropic\" }\n", "by hand"},
		{"runtime as dotted keys", "runtimes.anthropic.kind = \"native\"\n", "by hand"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(c.old), 0o600); err != nil {
				t.Fatal(err)
			}
			err := SetDefaultRuntime(path, "anthropic", setupRuntime)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if data, _ := os.ReadFile(path); string(data) != c.old {
				t.Errorf("the file changed:\n%s", data)
			}
			assertNoTemp(t, filepath.Dir(path))
		})
	}
	if err := SetDefaultRuntime(filepath.Join(t.TempDir(), "c.toml"), "a b", nil); err == nil {
		t.Error("a runtime name with a space was accepted")
	}
}

func TestSetDefaultRuntimePresetOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	old := "[runtimes.claude]\nkind = \"claude-code\"\ncommand = \"/opt/claude\"\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SetDefaultRuntime(path, "claude", nil); err != nil {
		t.Fatal(err)
	}
	cfg := loadUser(t, path)
	if cfg.DefaultRuntime != "claude" || cfg.Runtimes["claude"].Command != "/opt/claude" {
		t.Errorf("got default %q, claude %+v", cfg.DefaultRuntime, cfg.Runtimes["claude"])
	}
}

func TestWriteKeyFile(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteKeyFile(dir, "openrouter", "  sk-or-v1-abc\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "keys", "openrouter.key"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "sk-or-v1-abc\n" {
		t.Errorf("key file holds %q (%v)", data, err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, st.Mode().Perm(), err, want)
		}
	}
	// A second key replaces the first whole.
	if _, err := WriteKeyFile(dir, "openrouter", "sk-2"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "sk-2\n" {
		t.Errorf("replaced key file holds %q", data)
	}
	assertNoTemp(t, filepath.Dir(path))
	for _, bad := range []string{"", "   ", "sk-a\nsk-b", "sk a", "sk-\x1b[31m"} {
		if _, err := WriteKeyFile(dir, "bad", bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "keys", "bad.key")); !os.IsNotExist(err) {
		t.Errorf("a refused key left a file (%v)", err)
	}
}

// TestWriteKeyFileStaysInTheConfigDir: a keys folder that is a symlink
// out of the config directory is not followed.
func TestWriteKeyFileStaysInTheConfigDir(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "keys")); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteKeyFile(dir, "anthropic", "sk-1"); err == nil {
		t.Error("wrote through a symlink out of the config directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files written outside: %v", entries)
	}
}

// TestAPIKeyFileOnlyFromTheUser: a relative api_key_file of the user
// config is resolved against its folder; a project's is dropped with a
// warning even when the folder is trusted.
func TestAPIKeyFileOnlyFromTheUser(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user", "config.toml")
	proj := filepath.Join(dir, "ws", ".kz", "config.toml")
	for p, body := range map[string]string{
		user: "[runtimes.a]\nkind = \"native\"\nprovider = \"anthropic\"\napi_key_file = \"keys/a.key\"\n",
		proj: "[runtimes.b]\nkind = \"native\"\nprovider = \"anthropic\"\napi_key_file = \"/home/u/.ssh/id_ed25519\"\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	if err := Trust(data, proj); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Paths{UserConfig: user, ProjectFile: proj, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Runtimes["a"].APIKeyFile, filepath.Join(dir, "user", "keys", "a.key"); got != want {
		t.Errorf("user key file %q, want %q", got, want)
	}
	if got := cfg.Runtimes["b"].APIKeyFile; got != "" {
		t.Errorf("the project's key file was kept: %q", got)
	}
	if !strings.Contains(strings.Join(cfg.Warnings, "\n"), "api_key_file can only be set in the user config") {
		t.Errorf("no warning: %v", cfg.Warnings)
	}
}

// assertNoTemp fails when a temporary file of an atomic write is left.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

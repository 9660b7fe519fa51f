package config

import (
	"os"
	"strings"
	"testing"
)

// TestCodexSandboxKey: a codex runtime's sandbox key is read from the user
// file (runtimes.BuildAll checks its value).
func TestCodexSandboxKey(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, "[runtimes.cx]\nkind = \"codex\"\ncommand = \"codex\"\nsandbox = \"read-only\"\n")
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Runtimes["cx"].Sandbox; got != "read-only" {
		t.Errorf("sandbox %q, want read-only", got)
	}
}

// TestSandboxSection: [sandbox] network defaults to true and the user file
// may turn it off; writable takes absolute and ~/ paths from the user
// file; an untrusted project may turn the network off but not on, and
// may add no writable directory (a trusted one neither); bad values are
// errors naming file:line.
func TestSandboxSection(t *testing.T) {
	t.Parallel()
	p := paths(t)
	c, err := Load(p)
	if err != nil || !c.Sandbox.Network || len(c.Sandbox.Writable) != 0 {
		t.Fatalf("defaults: %v %+v", err, c.Sandbox)
	}
	write(t, p.UserConfig, "[sandbox]\nnetwork = false\nwritable = [\"~/.cache/go-build\", \"/var/cache/x\"]\n")
	c, err = Load(p)
	if err != nil || c.Sandbox.Network || strings.Join(c.Sandbox.Writable, ",") != "~/.cache/go-build,/var/cache/x" {
		t.Fatalf("user: %v %+v", err, c.Sandbox)
	}

	// An untrusted project turns the network off, not on, and adds no
	// writable directory.
	write(t, p.UserConfig, "[sandbox]\nnetwork = true\n")
	write(t, p.ProjectFile, "[sandbox]\nnetwork = false\n")
	if c, err = Load(p); err != nil || c.Sandbox.Network {
		t.Fatalf("project turning the network off: %v %+v", err, c.Sandbox)
	}
	write(t, p.UserConfig, "[sandbox]\nnetwork = false\n")
	write(t, p.ProjectFile, "[sandbox]\nnetwork = true\nwritable = [\"/\"]\n")
	c, err = Load(p)
	if err != nil || c.Sandbox.Network || len(c.Sandbox.Writable) != 0 {
		t.Fatalf("untrusted project: %v %+v", err, c.Sandbox)
	}
	warned := strings.Join(c.Warnings, "\n")
	for _, w := range []string{"[sandbox] network = true ignored until you trust this folder", "[sandbox] writable can only be set in the user config"} {
		if !strings.Contains(warned, w) {
			t.Errorf("no warning %q in:\n%s", w, warned)
		}
	}
	// Trusted, the project may turn the network on; writable stays the
	// user's.
	if err := Trust(p.DataDir, p.ProjectFile); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(p); err != nil || !c.Sandbox.Network || len(c.Sandbox.Writable) != 0 {
		t.Fatalf("trusted project: %v %+v", err, c.Sandbox)
	}

	_ = os.Remove(p.ProjectFile)
	for body, want := range map[string]string{
		"[sandbox]\nnetwork = \"yes\"\n":                    "config.toml:2",
		"[sandbox]\nwritable = \"/x\"\n":                    "config.toml:2",
		"\n[sandbox]\nwritable = [\"/ok\", \"relative\"]\n": "config.toml:3: sandbox.writable.1",
		"[sandbox]\nwritable = [\"\"]\n":                    "config.toml:2: sandbox.writable.0: empty path",
		"[sandbox]\nwritable = [\"~user/x\"]\n":             "sandbox.writable.0: \"~user/x\"",
		"[sandbox]\nnetwrok = true\n":                       "config.toml:2: unknown key \"sandbox.netwrok\"",
	} {
		write(t, p.UserConfig, body)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

package config

import "testing"

// TestCodexSandboxKey: a codex runtime's sandbox key is read from the user
// file (runtimes.BuildAll checks its value).
func TestCodexSandboxKey(t *testing.T) {
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

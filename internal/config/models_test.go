package config

import (
	"strings"
	"testing"
)

// TestModelsEntries: [[models]] from the user file reach the merged
// configuration with unset fields left nil; an untrusted project's entries
// are refused with a warning, an entry without id is an error.
func TestModelsEntries(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, `
[runtimes.local]
kind = "native"
provider = "openai"
base_url = "http://127.0.0.1:11434/v1"
api = "chat"
models = ["qwen2.5-coder:14b"]

[[models]]
id = "qwen2.5-coder:14b"
context_window = 32768
input_per_mtok = 0.5
web_search_per_call = 0.025
tools = false
`)
	write(t, p.ProjectFile, "[[models]]\nid = \"qwen2.5-coder:14b\"\ninput_per_mtok = 0.0\n")
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Models) != 1 {
		t.Fatalf("models %+v", cfg.Models)
	}
	m := cfg.Models[0]
	if m.ID != "qwen2.5-coder:14b" || *m.ContextWindow != 32768 || *m.InputPerMTok != 0.5 || *m.WebSearchPerCall != 0.025 || *m.Tools || m.MaxOutput != nil || m.Vision != nil {
		t.Errorf("entry %+v", m)
	}
	if cfg.Runtimes["local"].API != "chat" {
		t.Errorf("api %q", cfg.Runtimes["local"].API)
	}
	if !strings.Contains(strings.Join(cfg.Warnings, "\n"), "[[models]] ignored until you trust this folder") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	write(t, p.UserConfig, "[[models]]\ncontext_window = 1\n")
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "without an id") {
		t.Errorf("entry without id: %v", err)
	}
}

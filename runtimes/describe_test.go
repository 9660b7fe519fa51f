package runtimes

import (
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
)

// TestBuildDescribesEachKind: every entry Build makes carries a one-line
// description of what the runtime is, whether or not it can run here.
func TestBuildDescribesEachKind(t *testing.T) {
	t.Setenv("KZ_DESCRIBE_TEST_KEY", "k")
	for _, c := range []struct {
		name string
		rc   config.Runtime
		want string
	}{
		{"claude", config.Runtime{Kind: config.KindClaudeCode, Command: "/nonexistent/claude"}, "Claude Code CLI"},
		{"codex", config.Runtime{Kind: config.KindCodex, Command: "/nonexistent/codex"}, "Codex CLI"},
		{"gemini", config.Runtime{Kind: config.KindACP, Command: "/nonexistent/gemini"}, "Gemini CLI (ACP)"},
		{"goose", config.Runtime{Kind: config.KindACP, Command: "/opt/bin/goose", Args: []string{"acp"}}, "ACP agent goose"},
		{"api", config.Runtime{Kind: config.KindNative, Provider: "anthropic", APIKeyEnv: "KZ_DESCRIBE_TEST_KEY",
			Models: []string{"claude-sonnet-4-5"}}, "native · anthropic claude-sonnet-4-5"},
		{"oai", config.Runtime{Kind: config.KindCompletion, Provider: "openai", APIKeyEnv: "KZ_DESCRIBE_TEST_KEY",
			Models: []string{"gpt-4o"}}, "completion, text only · openai gpt-4o"},
	} {
		e, err := Build(c.name, c.rc, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if e.Description != c.want {
			t.Errorf("%s: description %q, want %q", c.name, e.Description, c.want)
		}
		if got := Infos([]engine.RuntimeEntry{e})[0].Description; got != c.want {
			t.Errorf("%s: Infos dropped the description: %q", c.name, got)
		}
	}
}

// TestDescribeAddsTheCLIVersion: a version kz asked the CLI for (kz
// runtimes probes) is added as its number.
func TestDescribeAddsTheCLIVersion(t *testing.T) {
	for v, want := range map[string]string{
		"2.0.14 (Claude Code)": "Claude Code CLI 2.0.14",
		"v2.1.0":               "Claude Code CLI 2.1.0",
		"":                     "Claude Code CLI",
		"unknown":              "Claude Code CLI",
	} {
		got := Describe(config.Runtime{Kind: config.KindClaudeCode}, engine.RuntimeEntry{Version: v})
		if got != want {
			t.Errorf("version %q: %q, want %q", v, got, want)
		}
	}
	if got := Describe(config.Runtime{Kind: config.KindCodex}, engine.RuntimeEntry{Version: "codex-cli 0.46.0"}); got != "Codex CLI 0.46.0" {
		t.Errorf("codex: %q", got)
	}
}

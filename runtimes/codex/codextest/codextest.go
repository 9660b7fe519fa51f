// Package codextest writes the offline configuration of a real Codex CLI
// driven against a fake Responses API on 127.0.0.1 (protocol notes §3):
// the CODEX_HOME of the Codex integration tests and of kz's whole-process
// benchmark. Only tests import it.
package codextest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Model is the model name the fake provider serves and Home's catalog
// holds.
const Model = "fake-model"

// KeyEnv names the variable FakeProvider's provider sends as its key; a
// Codex run with Home's configuration needs it set (any value).
const KeyEnv = "FAKE_OPENAI_API_KEY"

// Offline is the [features] table Home writes, to keep a Codex run on
// 127.0.0.1: with its plugins on, Codex 0.169 syncs the curated plugin
// marketplace at every start (it runs `git ls-remote
// https://github.com/openai/plugins.git`, as `codex exec` and as the
// app-server), and other features fetch or start things of their own.
// Tests send traffic to 127.0.0.1 only; a configuration a test writes
// itself appends Offline too.
const Offline = `
[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
tool_suggest = false
skill_mcp_dependency_install = false
image_generation = false
daemon_auto_start = false
in_app_updates = false
goals = false
`

// HomeOptions say what Home writes.
type HomeOptions struct {
	// Bin is the Codex binary, asked for its bundled model catalog.
	Bin string
	// Home is HOME and CodexHome is CODEX_HOME (made if missing).
	Home, CodexHome string
	// Workspace is the project Codex trusts.
	Workspace string
	// Provider is the model provider's TOML (model_provider and its
	// [model_providers.*] table), e.g. FakeProvider's.
	Provider string
	// Sandbox is Codex's sandbox_mode; empty is read-only.
	Sandbox string
	// Extra is more TOML, written after the provider's tables.
	Extra string
}

// FakeProvider is the provider configuration that sends KeyEnv's value
// to the Responses API at baseURL, with no retries, so that a test's
// failure is the first one.
func FakeProvider(baseURL string) string {
	return fmt.Sprintf(`model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
env_key = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
`, baseURL, KeyEnv)
}

// Home writes o.CodexHome/config.toml and a model catalog that serves
// Model with the settings of a bundled model (gpt-5.5 where the CLI has
// it), so that Codex never asks a server for its models. The catalog is
// kept in CODEX_HOME, which a confined Codex can see (the sandbox gives
// it a private /tmp).
func Home(t testing.TB, o HomeOptions) {
	t.Helper()
	if err := os.MkdirAll(o.CodexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(o.Bin, "debug", "models", "--bundled")
	cmd.Env = []string{"HOME=" + o.Home, "CODEX_HOME=" + o.CodexHome, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("codex debug models: %v", err)
	}
	var cat struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal(out, &cat); err != nil || len(cat.Models) == 0 {
		t.Fatalf("bundled model catalog: %v", err)
	}
	entry := cat.Models[0]
	for _, m := range cat.Models {
		if m["slug"] == "gpt-5.5" {
			entry = m
		}
	}
	entry["slug"], entry["display_name"] = Model, Model
	catalog := filepath.Join(o.CodexHome, "catalog.json")
	b, err := json.Marshal(map[string]any{"models": []any{entry}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(catalog, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sandbox := o.Sandbox
	if sandbox == "" {
		sandbox = "read-only"
	}
	config := fmt.Sprintf(`model = %q
approval_policy = "never"
sandbox_mode = %q
check_for_update_on_startup = false
model_catalog_json = %q
%s
[analytics]
enabled = false
%s%s
[projects.%q]
trust_level = "trusted"
`, Model, sandbox, catalog, o.Provider, Offline, o.Extra, o.Workspace)
	if err := os.WriteFile(filepath.Join(o.CodexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

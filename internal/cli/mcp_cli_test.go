package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
)

// mcpServerTOML is a [mcp.servers.NAME] table that starts this test
// binary as the test MCP server over stdio.
func mcpServerTOML(t *testing.T, name, log string, trust bool) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[mcp.servers.%s]\ncommand = %q\nargs = [\"-test.run=^$\"]\nenv = { %s = \"stdio\", %s = %q }\ntrust_annotations = %v\n\n",
		name, exe, mcptest.ServeEnv, mcptest.LogEnv, log, trust)
}

func mcpList(t *testing.T, sb *sandbox) map[string]mcp.Status {
	t.Helper()
	out, errOut, code := sb.kz("mcp", "list", "--json")
	if code != 0 {
		t.Fatalf("kz mcp list: exit %d: %s", code, errOut)
	}
	var st []mcp.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	m := map[string]mcp.Status{}
	for _, s := range st {
		m[s.Name] = s
	}
	return m
}

// kz mcp list shows a stdio server, an HTTP one whose header comes from
// the environment, one that fails, and a project's server as not trusted
// until kz trust, which then starts it.
func TestMCPListStatesToolsErrorsAndTrust(t *testing.T) {
	sb := newSandbox(t)
	log := filepath.Join(t.TempDir(), "calls")
	url := mcptest.NewHTTP(t, "", func(h http.Header) bool { return h.Get("Authorization") == "Bearer tok-123" })
	t.Setenv("KZ_TEST_MCP_TOKEN", "tok-123")
	sb.userConfig(mcpServerTOML(t, "notes", log, true) + fmt.Sprintf(`[mcp.servers.web]
url = %q
headers = { Authorization = "Bearer ${KZ_TEST_MCP_TOKEN}" }

[mcp.servers.broken]
command = "/nonexistent/server"
`, url+"/mcp"))
	marker := filepath.Join(sb.workspace, "project-server-ran")
	if err := os.MkdirAll(filepath.Join(sb.workspace, ".kz"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.workspace, ".kz", "config.toml"),
		fmt.Appendf(nil, "[mcp.servers.proj]\ncommand = \"sh\"\nargs = [\"-c\", \"touch %s\"]\nstartup_timeout = \"2s\"\n", marker), 0o644); err != nil {
		t.Fatal(err)
	}

	st := mcpList(t, sb)
	if s := st["notes"]; s.State != mcp.StateReady || len(s.Tools) != 5 || s.Tools[0].Name != "mcp__notes__big" {
		t.Errorf("notes %+v", s)
	}
	ro := 0
	for _, tl := range st["notes"].Tools {
		if tl.ReadOnly {
			ro++
		}
	}
	if ro != 1 {
		t.Errorf("read-only tools %+v", st["notes"].Tools)
	}
	if s := st["web"]; s.State != mcp.StateReady || s.Transport != mcp.HTTP {
		t.Errorf("web %+v", s)
	}
	if s := st["broken"]; s.State != mcp.StateFailed || !strings.Contains(s.Error, "/nonexistent/server") {
		t.Errorf("broken %+v", s)
	}
	if s := st["proj"]; s.State != mcp.StateNotTrusted || !strings.Contains(s.Error, "kz trust") {
		t.Errorf("proj %+v", s)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an untrusted project's server ran: %v", err)
	}

	out, _, code := sb.kz("mcp", "list")
	if code != 0 || !strings.Contains(out, "notes (stdio): ready\n  mcp__notes__big\n") || !strings.Contains(out, "  mcp__notes__echo (read-only)\n") ||
		!strings.Contains(out, "proj (stdio): not trusted\n  error: the project's configuration is not trusted") ||
		!strings.Contains(out, "Codex gets none of them yet") {
		t.Errorf("kz mcp list:\n%s", out)
	}
	if _, errOut, code := sb.kz("trust"); code != 0 {
		t.Fatal(errOut)
	}
	st = mcpList(t, sb)
	if s := st["proj"]; s.State != mcp.StateFailed {
		t.Errorf("proj after trust %+v", s)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the trusted project's server did not start: %v", err)
	}
	if _, errOut, code := sb.kz("mcp"); code != 2 || !strings.Contains(errOut, "kz mcp list") {
		t.Errorf("kz mcp: %d %s", code, errOut)
	}
}

// kz -p with the native runtime in analysis-only mode: the model sees
// only the trusted read-only tool, which runs without asking, and its
// result reaches the model.
func TestMCPNativeHeadlessAnalysisOnly(t *testing.T) {
	sb := newSandbox(t)
	log := filepath.Join(t.TempDir(), "calls")
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__echo", Args: `{"text":"hello"}`}}},
		llmtest.Reply{Text: "The server said hello."})
	t.Setenv("KZ_CLI_KEY", "sk-test")
	sb.userConfig(mcpServerTOML(t, "notes", log, true) + fmt.Sprintf(`[runtimes.native]
kind = "native"
provider = "anthropic"
base_url = %q
api_key_env = "KZ_CLI_KEY"
models = ["claude-sonnet-4-5"]
`, fake.URL))
	out, errOut, code := sb.kz("-p", "ask the server", "--runtime", "native", "--mode", "analysis-only", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	evs := streamEvents(t, out)
	if last := evs[len(evs)-1]; last.Status != "complete" || last.Output != "The server said hello." {
		t.Errorf("final %+v", last)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventToolCallFinished && (ev.IsError || ev.Output != "echo: hello") {
			t.Errorf("tool result %+v", ev)
		}
		if ev.Type == engine.EventPermissionRequested {
			t.Errorf("asked %+v", ev)
		}
	}
	first := fake.Requests()[0]
	if !first.Contains(`"mcp__notes__echo"`) || first.Contains(`"mcp__notes__note"`) {
		t.Errorf("tools offered in analysis-only mode: %s", first.Raw)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 {
		t.Errorf("server log %q", calls)
	}
}

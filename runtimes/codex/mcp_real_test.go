package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
	"github.com/kaizen-code/kz/tools/permission"
)

// mcpCall scripts the fake model's MCP call of server's tool with args:
// Codex 0.169 offers an MCP server's tools only behind its tool_search
// tool, so the model searches first (Codex answers with the server's
// namespace of tools) and then calls the tool in that namespace; a call
// without the search is answered "unsupported call".
func mcpCall(outputs int, server, tool string, args map[string]any) (step, bool) {
	switch outputs {
	case 0:
		return step{Item: map[string]any{"type": "tool_search_call", "id": "ts_1", "call_id": "call_search", "execution": "client",
			"status": "completed", "arguments": map[string]any{"query": tool}}}, true
	case 1:
		b, _ := json.Marshal(args)
		return step{Item: map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_" + server + "_" + tool,
			"namespace": "mcp__" + server, "name": tool, "arguments": string(b), "status": "completed"}}, true
	}
	return step{}, false
}

// mcpScript is a fake model that, for a prompt "SERVER TOOL", calls that
// tool with {"text": "from codex"} (echo, note) or {"n": 10} (big), then
// reports the call's output it was given as "saw: OUTPUT".
func mcpScript(outputs int, body map[string]any) step {
	var prompt struct {
		Text string `json:"text"`
	}
	var content []json.RawMessage
	_ = json.Unmarshal([]byte(lastUser(body)), &content)
	if len(content) > 0 {
		_ = json.Unmarshal(content[len(content)-1], &prompt)
	}
	server, tool, ok := strings.Cut(prompt.Text, " ")
	if !ok {
		return step{Text: "nothing scripted"}
	}
	args := map[string]any{"text": "from codex"}
	if tool == mcptest.ToolBig {
		args = map[string]any{"n": 10}
	}
	if st, ok := mcpCall(outputs, server, tool, args); ok {
		return st
	}
	return step{Text: "saw: " + lastOutput(body)}
}

// The servers kz hands Codex (a stdio one, whose env carries a secret,
// and an HTTP one, whose Authorization header does) start, and every call
// of their tools is asked of kz's gate: a call a rule allows reaches the
// server and its result the model; a call a rule denies, or the person
// denies, never reaches the server and the model is told it was
// rejected. The secrets appear on no command line and not in Codex's own
// environment.
func TestRealCodexMCPToolCallsPassKzGate(t *testing.T) {
	const secret = "kz-mcp-secret-7f3a9c"
	// In kz's own environment, as a person's credential would be.
	t.Setenv("KZ_TEST_MCP_SECRET", secret)

	api := newRespAPI(t, mcpScript)
	rt, ws := realSetup(t, api)
	dir := t.TempDir()
	stdioLog, httpLog := filepath.Join(dir, "stdio-calls"), filepath.Join(dir, "http-calls")
	stdio := mcptest.StdioSpec(t, "kzt", stdioLog)
	stdio.Env["KZT_TOKEN"] = "${KZ_TEST_MCP_SECRET}"
	url := mcptest.NewHTTP(t, httpLog, func(h http.Header) bool { return h.Get("Authorization") == "Bearer "+secret })
	web := mcp.Spec{Name: "web", Transport: mcp.HTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer ${KZ_TEST_MCP_SECRET}"},
		StartupTimeout: mcp.DefaultStartupTimeout, ToolTimeout: mcp.DefaultToolTimeout}
	rt.cfg.MCPServers = []mcp.Spec{stdio, web}

	var mu sync.Mutex
	var leaks []string
	person := func(ev engine.Event) engine.Answer {
		// Codex is running, its MCP servers started: no command line
		// of the machine holds the secret, nor Codex's environment.
		mu.Lock()
		leaks = append(leaks, secretHolders(secret)...)
		mu.Unlock()
		return engine.Answer{Decision: engine.DecisionDeny}
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{
		Gate:   clitest.Gate(t, permission.Rules{Allow: []string{"mcp__kzt__echo", "mcp__kzt__fail", "mcp__web"}, Deny: []string{"mcp__kzt__big"}}),
		Answer: person})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	// Allowed by a rule: the server sees the call, the model its result.
	final := h.Run(t, ctx, "kzt echo")
	if final.Status != string(engine.StatusComplete) || !strings.Contains(final.Output, "echo: from codex") {
		t.Fatalf("allowed call: final %+v", final)
	}
	if calls := mcptest.Calls(t, stdioLog); len(calls) != 1 || calls[0] != `echo {"text":"from codex"}` {
		t.Errorf("allowed call: server log %q", calls)
	}
	checkDecided(t, h, "call_kzt_echo", "mcp__kzt__echo", engine.DecisionAllow, string(permission.StageAllow))
	checkFinished(t, h, "call_kzt_echo", "mcp__kzt__echo", "echo: from codex", false)

	// A call the tool itself fails reaches the model and kz's history as
	// a failed call with the tool's text.
	if final := h.Run(t, ctx, "kzt fail"); !strings.Contains(final.Output, "the fail tool failed") {
		t.Errorf("failing tool: final %+v", final)
	}
	checkFinished(t, h, "call_kzt_fail", "mcp__kzt__fail", "the fail tool failed", true)

	// The HTTP server, allowed by a server-wide rule, got the expanded
	// Authorization header (it refuses any other).
	if final := h.Run(t, ctx, "web echo"); !strings.Contains(final.Output, "echo: from codex") {
		t.Errorf("http server: final %+v", final)
	}
	if calls := mcptest.Calls(t, httpLog); len(calls) != 1 {
		t.Errorf("http server log %q", calls)
	}

	// Denied by a rule: the person is not asked, the server never sees
	// the call and the model is told it was rejected.
	final = h.Run(t, ctx, "kzt big")
	if final.Status != string(engine.StatusComplete) || !strings.Contains(final.Output, "rejected") {
		t.Errorf("denied call: final %+v", final)
	}
	checkDecided(t, h, "call_kzt_big", "mcp__kzt__big", engine.DecisionDeny, string(permission.StageDenyRule))
	checkFinished(t, h, "call_kzt_big", "mcp__kzt__big", "", true)

	// Asked, and denied by the person: the same.
	final = h.Run(t, ctx, "kzt note")
	if final.Status != string(engine.StatusComplete) || !strings.Contains(final.Output, "rejected") {
		t.Errorf("call the person denied: final %+v", final)
	}
	asked := h.Journal.OfType(engine.EventPermissionRequested)
	if len(asked) != 1 || asked[0].Tool != "mcp__kzt__note" || asked[0].ToolCallID != "call_kzt_note" ||
		!bytes.Equal(asked[0].Input, []byte(`{"text":"from codex"}`)) {
		t.Errorf("the person was asked about %+v", asked)
	}
	checkDecided(t, h, "call_kzt_note", "mcp__kzt__note", engine.DecisionDeny, "")
	if calls := mcptest.Calls(t, stdioLog); len(calls) != 2 {
		t.Errorf("a denied call reached the server: %q", calls)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaks) > 0 {
		t.Errorf("the secret is visible in %q", leaks)
	}
	// Nor did Codex write it anywhere: its home (sessions, logs,
	// state) and the workspace hold no copy.
	if files := clitest.FilesContaining(filepath.Dir(ws), secret); len(files) > 0 {
		t.Errorf("the secret was written to %q", files)
	}
}

// checkDecided checks kz's one decision about a call; stage "" checks
// none.
func checkDecided(t *testing.T, h *clitest.Harness, id, tool string, want engine.Decision, stage string) {
	t.Helper()
	var got []engine.Event
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		if ev.ToolCallID == id {
			got = append(got, ev)
		}
	}
	if len(got) != 1 || got[0].Tool != tool || got[0].Decision != want || (stage != "" && got[0].Stage != stage) {
		t.Errorf("kz's decisions about %s: %+v", id, got)
	}
}

// checkFinished checks the tool_call_finished of a call.
func checkFinished(t *testing.T, h *clitest.Harness, id, tool, output string, isErr bool) {
	t.Helper()
	for _, ev := range h.Journal.OfType(engine.EventToolCallFinished) {
		if ev.ToolCallID == id {
			if ev.Tool != tool || ev.IsError != isErr || (output != "" && ev.Output != output) {
				t.Errorf("tool_call_finished %+v", ev)
			}
			return
		}
	}
	t.Errorf("no tool_call_finished for %s", id)
}

// secretHolders lists the processes whose command line holds secret,
// and the Codex processes (app-server on the command line) whose
// environment does.
func secretHolders(secret string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(cmd, []byte(secret)) {
			out = append(out, fmt.Sprintf("%s/cmdline", d))
		}
		if !bytes.Contains(cmd, []byte("app-server")) {
			continue
		}
		if env, err := os.ReadFile(filepath.Join(d, "environ")); err == nil && bytes.Contains(env, []byte(secret)) {
			out = append(out, fmt.Sprintf("%s/environ", d))
		}
	}
	return out
}

// A person's own Codex config cannot let an MCP call skip kz: without
// kz's lock (lockServers), Codex 0.169 called both a tool of a server of
// kz's name whose tools the config sets to approval_mode "approve" (the
// thread's config is deep-merged into the person's, and a tool's mode
// outranks the server's default) and every tool of the person's own
// server with default_tools_approval_mode "approve", asking no one. With
// it, kz's server's calls come to kz's gate and the person's own server
// is disabled: the model's call of it is "unsupported".
func TestRealCodexMCPPersonConfigCannotBypassKz(t *testing.T) {
	api := newRespAPI(t, mcpScript)
	rt, ws := realSetup(t, api)
	dir := t.TempDir()
	kzLog, ownLog := filepath.Join(dir, "kz-calls"), filepath.Join(dir, "own-calls")
	rt.cfg.MCPServers = []mcp.Spec{mcptest.StdioSpec(t, "kzt", kzLog)}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(filepath.Dir(ws), "home", ".codex", "config.toml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ name, log string }{{"kzt", kzLog}, {"own", ownLog}} {
		b = fmt.Appendf(b, `
[mcp_servers.%[1]s]
command = %[2]q
args = ["-test.run=^$"]
default_tools_approval_mode = "approve"
[mcp_servers.%[1]s.env]
%[3]s = "stdio"
%[4]s = %[5]q
[mcp_servers.%[1]s.tools.echo]
approval_mode = "approve"
[mcp_servers.%[1]s.tools.note]
approval_mode = "approve"
`, s.name, exe, mcptest.ServeEnv, mcptest.LogEnv, s.log)
	}
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{}),
		Answer: person.Answer})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for _, prompt := range []string{"kzt echo", "kzt echo", "kzt note", "own echo", "own note"} {
		if final := h.Run(t, ctx, prompt); final.Status != string(engine.StatusComplete) {
			t.Fatalf("%s: final %+v", prompt, final)
		}
	}
	// Every call of kz's server was judged by kz, the second call of a
	// tool allowed a moment before included (echo is not read-only to
	// kz, which does not trust the server's annotations: the person was
	// asked each time).
	var decided []string
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		decided = append(decided, ev.Tool+" "+string(ev.Decision))
	}
	if want := []string{"mcp__kzt__echo allow", "mcp__kzt__echo allow", "mcp__kzt__note allow"}; !slices.Equal(decided, want) {
		t.Errorf("kz decided %q, want %q", decided, want)
	}
	if seen := person.Seen(); len(seen) != 3 {
		t.Errorf("the person was asked %d times, want 3: %+v", len(seen), seen)
	}
	if calls := mcptest.Calls(t, kzLog); len(calls) != 3 {
		t.Errorf("kz's server log %q", calls)
	}
	if calls := mcptest.Calls(t, ownLog); len(calls) != 0 {
		t.Errorf("the person's own server was called without kz: %q", calls)
	}
	reqs := api.Requests()
	if out := lastOutput(reqs[len(reqs)-1]); !strings.Contains(out, "unsupported call") {
		t.Errorf("the model's call of the disabled server got %s", out)
	}
}

package claudecode

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
	"github.com/kaizen-code/kz/tools/permission"
)

// The real CLI gets kz's MCP server (a real one, over stdio) with
// --mcp-config; the fake model calls its tools; each call reaches kz's
// gate as mcp__notes__TOOL, and an allowed call's result reaches the
// model while a denied one never reaches the server.
func TestRealMCPToolCallsPassKzGate(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if res, ok := r.toolResult(); ok {
			return fakeReply{Text: "saw: " + contentText(res.Content)}
		}
		switch txt := r.lastUserText(); {
		case strings.Contains(txt, "KZ:note"):
			return fakeReply{Tools: []fakeTool{{ID: "toolu_note", Name: "mcp__notes__note", Input: map[string]string{"text": "from claude"}}}}
		case strings.Contains(txt, "KZ:big"):
			return fakeReply{Tools: []fakeTool{{ID: "toolu_big", Name: "mcp__notes__big", Input: map[string]int{"n": 10}}}}
		}
		return fakeReply{Text: "nothing scripted"}
	})
	rt, _ := realSetup(t, api)
	log := filepath.Join(t.TempDir(), "calls")
	rt.cfg.MCPServers = []mcp.Spec{mcptest.StdioSpec(t, "notes", log)}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{
		Gate: clitest.Gate(t, permission.Rules{Deny: []string{"mcp__notes__big"}}),
		Answer: func(ev engine.Event) engine.Answer {
			if ev.Tool == "mcp__notes__note" {
				return engine.Answer{Decision: engine.DecisionAllow}
			}
			return engine.Answer{Decision: engine.DecisionDeny}
		}})

	final := h.Run(t, context.Background(), "KZ:note")
	if final.Status != string(engine.StatusComplete) || final.Output != "saw: noted" {
		t.Fatalf("final %+v\nrequests' tools: %v", final, toolsOffered(api))
	}
	asked := h.Journal.OfType(engine.EventPermissionRequested)
	if len(asked) != 1 || asked[0].Tool != "mcp__notes__note" {
		t.Errorf("asked %+v", asked)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 || calls[0] != `note {"text":"from claude"}` {
		t.Errorf("server log %q", calls)
	}

	final = h.Run(t, context.Background(), "KZ:big")
	res := lastToolResult(t, api)
	if res.ToolUseID != "toolu_big" || !res.IsError {
		t.Errorf("denied call's result %+v", res)
	}
	var decided engine.Event
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		if ev.ToolCallID == "toolu_big" {
			decided = ev
		}
	}
	if decided.Decision != engine.DecisionDeny || decided.Stage != "deny_rule" || decided.Tool != "mcp__notes__big" {
		t.Errorf("permission_decided %+v (final %+v)", decided, final)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 {
		t.Errorf("a denied call reached the server: %q", calls)
	}
}

func toolsOffered(api *fakeAPI) []string {
	var out []string
	for _, r := range api.Requests() {
		for _, n := range r.toolNames() {
			if strings.HasPrefix(n, "mcp__") && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// The --mcp-config document has Claude's shape, with every ${VAR}
// expanded by kz, and leaves out a server whose variable is not set.
func TestMCPConfigDocument(t *testing.T) {
	servers := []mcp.Spec{
		{Name: "gh", Transport: mcp.Stdio, Command: "gh-mcp", Args: []string{"--stdio"}, Env: map[string]string{"GITHUB_TOKEN": "${GH}"}},
		{Name: "docs", Transport: mcp.HTTP, URL: "https://docs.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS}"}},
		{Name: "unset", Transport: mcp.HTTP, URL: "https://x.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${NOPE}"}},
	}
	b, err := mcpConfig(servers, []string{"GH=ghp_1", "DOCS=d0cs"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mcpServers":{"docs":{"headers":{"Authorization":"Bearer d0cs"},"type":"http","url":"https://docs.example/mcp"},` +
		`"gh":{"args":["--stdio"],"command":"gh-mcp","env":{"GITHUB_TOKEN":"ghp_1"},"type":"stdio"}}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// A repository's own .mcp.json (with its .claude/settings.json approving
// every project server) names programs kz never vetted: under kz the CLI
// starts only the servers kz hands it, so the repository's server is
// neither started nor offered to the model.
func TestRealProjectMCPServersNeverStart(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply { return fakeReply{Text: "ok"} })
	rt, ws := realSetup(t, api)
	dir := t.TempDir()
	kzLog, repoLog := filepath.Join(dir, "kz-calls"), filepath.Join(dir, "repo-calls")
	rt.cfg.MCPServers = []mcp.Spec{mcptest.StdioSpec(t, "notes", kzLog)}
	repo := mcptest.StdioSpec(t, "repo", repoLog)
	// The repository's server is the same test server, started through a
	// shell that first leaves a mark: any start of it shows.
	mark := filepath.Join(dir, "repo-started")
	doc := map[string]any{"mcpServers": map[string]any{"repo": map[string]any{
		"command": "sh", "args": []string{"-c", `touch "$0"; exec "$@"`, mark, repo.Command, repo.Args[0]},
		"env": repo.Env}}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	clitest.Dirs(t, filepath.Join(ws, ".claude"))
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(`{"enableAllProjectMcpServers":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	if final := h.Run(t, context.Background(), "hello"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	offered := toolsOffered(api)
	if !slices.Contains(offered, "mcp__notes__note") {
		t.Errorf("kz's own server's tools not offered: %v", offered)
	}
	for _, n := range offered {
		if strings.HasPrefix(n, "mcp__repo__") {
			t.Errorf("the repository's server was offered to the model: %v", offered)
			break
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the repository's MCP server was started")
	}
}

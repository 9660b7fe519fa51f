package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/permission"
)

// The mcpServers parameter has ACP's shapes: a stdio server with args and
// env always present as arrays (Gemini's schema refuses null), an HTTP
// server typed "http" with its headers, every ${VAR} expanded; a server
// whose variable is unset, one that may not start, and an HTTP one the
// agent does not take are left out, the skipped ones with a warning that
// holds no secret.
func TestACPMCPServersShapes(t *testing.T) {
	env := []string{"TOKEN=old", "TOKEN=s3cret", "HOST=db.local"}
	stdio := mcp.Spec{Name: "notes", Transport: mcp.Stdio, Command: "/bin/notes", Args: []string{"-v"},
		Env: map[string]string{"Z_TOKEN": "${TOKEN}", "A_URL": "pg://${HOST}/x"}}
	bare := mcp.Spec{Name: "bare", Transport: mcp.Stdio, Command: "bare"}
	web := mcp.Spec{Name: "web", Transport: mcp.HTTP, URL: "https://mcp.example/v1", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}
	unset := mcp.Spec{Name: "unset", Transport: mcp.Stdio, Command: "x", Env: map[string]string{"K": "${NOT_SET_ANYWHERE}"}}
	off := mcp.Spec{Name: "off", Transport: mcp.Stdio, Command: "x", Disabled: true}
	untrusted := mcp.Spec{Name: "proj", Transport: mcp.Stdio, Command: "x", NotTrusted: true}
	all := []mcp.Spec{stdio, bare, web, unset, off, untrusted}
	for _, tc := range []struct {
		name    string
		servers []mcp.Spec
		http    bool
		want    string
		warned  []string
	}{
		{name: "none", want: `[]`},
		{name: "http agent", servers: all, http: true, warned: []string{"unset"},
			want: `[{"name":"notes","command":"/bin/notes","args":["-v"],"env":[{"name":"A_URL","value":"pg://db.local/x"},{"name":"Z_TOKEN","value":"s3cret"}]},
				{"name":"bare","command":"bare","args":[],"env":[]},
				{"type":"http","name":"web","url":"https://mcp.example/v1","headers":[{"name":"Authorization","value":"Bearer s3cret"}]}]`},
		{name: "stdio-only agent", servers: all, http: false, warned: []string{"unset", "web"},
			want: `[{"name":"notes","command":"/bin/notes","args":["-v"],"env":[{"name":"A_URL","value":"pg://db.local/x"},{"name":"Z_TOKEN","value":"s3cret"}]},
				{"name":"bare","command":"bare","args":[],"env":[]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			got, err := json.Marshal(acpMCPServers(tc.servers, env, tc.http, slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(tc.want)) {
				t.Errorf("mcpServers\n got %s\nwant %s", got, tc.want)
			}
			for _, name := range tc.warned {
				if !strings.Contains(logs.String(), "server="+name) {
					t.Errorf("no warning about %s: %s", name, logs.String())
				}
			}
			if n := strings.Count(logs.String(), "level=WARN"); n != len(tc.warned) {
				t.Errorf("%d warnings, want %d: %s", n, len(tc.warned), logs.String())
			}
			if strings.Contains(logs.String(), "s3cret") {
				t.Errorf("a secret was logged: %s", logs.String())
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// Gemini's MCP tool names (mcp_SERVER_TOOL, one _ between server and
// tool) map to kz's mcp__SERVER__TOOL: kz's own servers first, the longest
// matching name winning, so that a server name with _ or with characters
// Gemini replaces still splits right; other mcp_ names split at the first
// _ as Gemini does; names of built-in tools are no MCP tool's.
func TestKzMCPName(t *testing.T) {
	servers := []mcp.Spec{{Name: "my"}, {Name: "my_srv"}, {Name: "notes"}, {Name: "a-b"}}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"mcp_notes_note", "mcp__notes__note", true},
		{"mcp_notes_list_all", "mcp__notes__list_all", true},
		{"mcp_my_srv_note", "mcp__my_srv__note", true},
		{"mcp_my_note", "mcp__my__note", true},
		{"mcp_my_srv_", "mcp__my__srv_", true},
		{"mcp_a-b_x.y:z", "mcp__a-b__x_y_z", true},
		{"mcp_theirs_search_docs", "mcp__theirs__search_docs", true},
		{"mcp__notes__note", "mcp__notes__note", true},
		{"mcp_", "", false},
		{"mcp_lonely", "", false},
		{"run_shell_command", "", false},
		{"write_file", "", false},
	} {
		got, ok := kzMCPName(tc.in, servers)
		if got != tc.want || ok != tc.ok {
			t.Errorf("kzMCPName(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// Through a fake agent that takes no HTTP MCP servers: session/new gets
// the stdio server only, its ${VAR} expanded; the agent's permission
// request for mcp_my_srv_note reaches kz's gate as mcp__my_srv__note, so
// a rule written for that name refuses it without asking anyone, and the
// agent is answered with its reject option; an allowed MCP call is
// answered with allow once and its card carries kz's name.
func TestMCPServersAndToolNamesThroughAgent(t *testing.T) {
	t.Setenv("KZ_TEST_MCP_TOKEN", "tok-1")
	perm := func(id, title string) clitest.Line {
		return clitest.CLI(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":"s-1","options":[{"optionId":"proceed_once","kind":"allow_once"},{"optionId":"cancel","kind":"reject_once"}],"toolCall":{"toolCallId":"` + title + `__` + id + `","status":"pending","title":"{}","kind":"other","content":[]}}}`)
	}
	lines := handshake("use the tools")
	lines[4] = clitest.Host(`{"method":"session/new","params":{"mcpServers":[{"name":"my_srv","command":"/bin/srv","args":[],"env":[{"name":"TOKEN","value":"tok-1"}]}]}}`)
	lines = append(lines,
		perm("0", "mcp_my_srv_note"),
		clitest.Host(`{"id":0,"result":{"outcome":{"outcome":"selected","optionId":"cancel"}}}`),
		perm("1", "mcp_my_srv_echo"),
		clitest.Host(`{"id":1,"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"mcp_my_srv_echo__1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"echo: hi"}}]}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	f.rt.cfg.MCPServers = []mcp.Spec{
		{Name: "my_srv", Transport: mcp.Stdio, Command: "/bin/srv", Env: map[string]string{"TOKEN": "${KZ_TEST_MCP_TOKEN}"}},
		{Name: "web", Transport: mcp.HTTP, URL: "http://127.0.0.1:1/mcp"},
	}
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Gate: clitest.Gate(t, permission.Rules{Deny: []string{"mcp__my_srv__note"}}),
		Answer: person.Answer})
	if final := h.Run(t, context.Background(), "use the tools"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	var decided []string
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		decided = append(decided, ev.Tool+" "+string(ev.Decision)+" "+ev.Stage)
	}
	if len(decided) != 2 || decided[0] != "mcp__my_srv__note deny "+string(permission.StageDenyRule) || !strings.HasPrefix(decided[1], "mcp__my_srv__echo allow") {
		t.Errorf("kz's decisions %q", decided)
	}
	if seen := person.Seen(); len(seen) != 1 || seen[0].Tool != "mcp__my_srv__echo" {
		t.Errorf("the person was asked about %+v", seen)
	}
	var cards []string
	for _, ev := range h.Journal.OfType(engine.EventToolCallStarted) {
		cards = append(cards, ev.Tool)
	}
	if strings.Join(cards, ",") != "mcp__my_srv__note,mcp__my_srv__echo" {
		t.Errorf("tool cards %q", cards)
	}
}

// A loaded session gets the servers too, and an agent that declares
// mcpCapabilities.http gets the HTTP ones, typed "http", with their
// headers expanded.
func TestMCPServersOnLoadWithHTTPAgent(t *testing.T) {
	t.Setenv("KZ_TEST_MCP_TOKEN", "tok-2")
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"method":"initialize"}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true,"sse":true}}}}`),
		clitest.Host(`{"method":"authenticate"}`), clitest.CLI(`{"jsonrpc":"2.0","id":2,"result":{}}`),
		clitest.Host(`{"method":"session/load","params":{"sessionId":"old-s","mcpServers":[{"name":"notes","command":"/bin/notes","args":["a"],"env":[]},{"type":"http","name":"web","url":"http://127.0.0.1:1/mcp","headers":[{"name":"Authorization","value":"Bearer tok-2"}]}]}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":3,"result":{}}`),
		clitest.Host(`{"method":"session/prompt","params":{"sessionId":"old-s"}}`),
		clitest.CLI(`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`),
	})
	f.rt.cfg.MCPServers = []mcp.Spec{
		{Name: "notes", Transport: mcp.Stdio, Command: "/bin/notes", Args: []string{"a"}},
		{Name: "web", Transport: mcp.HTTP, URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer ${KZ_TEST_MCP_TOKEN}"}},
	}
	prior := &engine.Prior{LastTurn: 1, LastRuntime: "gemini", Natives: map[string]engine.NativeRef{"gemini": {ID: "old-s", TurnID: 1}},
		Transcript: []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "hi"}}}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Prior: prior})
	if final := h.Run(t, context.Background(), "again"); final.Status != string(engine.StatusComplete) || final.NativeID != "old-s" {
		t.Fatalf("final %+v", final)
	}
	if n := f.CheckReport(); n != 4 {
		t.Errorf("fake checked %d host lines, want 4", n)
	}
}

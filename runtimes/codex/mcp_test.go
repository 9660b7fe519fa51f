package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/permission"
)

// The thread's mcp_servers config has Codex's shape: stdio servers with
// the credential-free child environment plus their own env, ${VAR}
// expanded; HTTP servers with expanded headers; approval mode prompt on
// each. A server whose variable is unset, that kz may not start, or whose
// name Codex would mangle is left out.
func TestMCPServersConfig(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/p", "OPENAI_API_KEY=sk-never", "GH=ghp_1", "DOCS=d0cs"}
	servers := []mcp.Spec{
		{Name: "gh", Transport: mcp.Stdio, Command: "gh-mcp", Args: []string{"--stdio"}, Env: map[string]string{"GITHUB_TOKEN": "${GH}"},
			StartupTimeout: 1500 * time.Millisecond, ToolTimeout: time.Minute},
		{Name: "docs", Transport: mcp.HTTP, URL: "https://docs.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS}"}},
		{Name: "unset", Transport: mcp.HTTP, URL: "https://x.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${NOPE}"}},
		{Name: "untrusted", Transport: mcp.Stdio, Command: "x", NotTrusted: true},
		{Name: "off", Transport: mcp.Stdio, Command: "x", Disabled: true},
		{Name: "a__b", Transport: mcp.Stdio, Command: "x"},
		{Name: "a.b", Transport: mcp.Stdio, Command: "x"},
	}
	got, err := json.Marshal(mcpServers(servers, environ, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"docs":{"default_tools_approval_mode":"prompt","enabled":true,"http_headers":{"Authorization":"Bearer d0cs"},"url":"https://docs.example/mcp"},` +
		`"gh":{"args":["--stdio"],"command":"gh-mcp","default_tools_approval_mode":"prompt","enabled":true,` +
		`"env":{"GITHUB_TOKEN":"ghp_1","HOME":"/home/p","PATH":"/bin"},"startup_timeout_sec":2,"tool_timeout_sec":60}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// lockServers disables every server of the person's that kz did not hand
// and forces prompt onto every tool the person's config names, under
// kz's servers and theirs alike.
func TestLockServers(t *testing.T) {
	kz := map[string]any{"kzt": map[string]any{"command": "x", "default_tools_approval_mode": "prompt"}}
	person := `{"config":{"model":"m","mcp_servers":{
		"kzt":{"command":"y","tools":{"echo":{"approval_mode":"approve"}}},
		"own":{"url":"https://own.example","default_tools_approval_mode":"approve","tools":{"w":{"approval_mode":"approve"}}},
		"bare":{"command":"z"}}},"origins":{}}`
	got, err := lockServers(kz, json.RawMessage(person))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"bare":{"default_tools_approval_mode":"prompt","enabled":false},` +
		`"kzt":{"command":"x","default_tools_approval_mode":"prompt","tools":{"echo":{"approval_mode":"prompt"}}},` +
		`"own":{"default_tools_approval_mode":"prompt","enabled":false,"tools":{"w":{"approval_mode":"prompt"}}}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if got, err := lockServers(nil, json.RawMessage(`{"config":{},"origins":{}}`)); err != nil || got != nil {
		t.Errorf("nothing to lock: %v, %v", got, err)
	}
	if _, err := lockServers(kz, json.RawMessage(`{"config":{"mcp_servers":[1]}}`)); err == nil {
		t.Error("a malformed config/read answer was accepted")
	}
}

// An elicitation maps to the permission request of the MCP call it asks
// about, with kz's tool name and the call's arguments, and to the call's
// item; anything else is refused with a reason.
func TestElicitationMapping(t *testing.T) {
	tr := &turnRun{rt: New(Config{}), threadID: "th-1", servers: map[string]any{"kzt": map[string]any{}},
		items: map[string]*item{
			"call_a": {Type: "mcpToolCall", ID: "call_a", Server: "kzt", Tool: "echo", Arguments: json.RawMessage(`{"text":"a"}`)},
			"call_b": {Type: "mcpToolCall", ID: "call_b", Server: "kzt", Tool: "echo", Arguments: json.RawMessage(`{"text": "b"}`)},
		}}
	ok := `{"threadId":"th-1","serverName":"kzt","mode":"form","message":"Allow?","requestedSchema":{"type":"object","properties":{}},` +
		`"_meta":{"codex_approval_kind":"mcp_tool_call","tool_name":"echo","tool_params":{"text":"b"}}}`
	req, err := tr.mcpRequest(json.RawMessage(ok))
	if err != nil {
		t.Fatal(err)
	}
	if req.Tool != "mcp__kzt__echo" || req.ToolCallID != "call_b" || string(req.Input) != `{"text":"b"}` {
		t.Errorf("request %+v", req)
	}
	// The same call again finds no item not yet asked about.
	if req, err := tr.mcpRequest(json.RawMessage(ok)); err != nil || req.ToolCallID != "" {
		t.Errorf("second request %+v, %v", req, err)
	}
	noParams := strings.Replace(ok, `,"tool_params":{"text":"b"}`, "", 1)
	if req, err := tr.mcpRequest(json.RawMessage(noParams)); err != nil || string(req.Input) != `{}` {
		t.Errorf("a call without arguments: %+v, %v", req, err)
	}

	for name, params := range map[string]string{
		"not JSON":        `{"serverName":`,
		"not an object":   `[1]`,
		"unknown server":  strings.Replace(ok, `"serverName":"kzt"`, `"serverName":"own"`, 1),
		"no server":       strings.Replace(ok, `"serverName":"kzt",`, ``, 1),
		"other thread":    strings.Replace(ok, `"threadId":"th-1"`, `"threadId":"th-2"`, 1),
		"a server's form": strings.Replace(ok, `"codex_approval_kind":"mcp_tool_call",`, ``, 1),
		"url mode":        strings.Replace(ok, `"mode":"form"`, `"mode":"url"`, 1),
		"no meta":         `{"threadId":"th-1","serverName":"kzt","mode":"form","message":"fill in","requestedSchema":{"type":"object","properties":{}}}`,
		"no tool":         strings.Replace(ok, `"tool_name":"echo",`, ``, 1),
		"array params":    strings.Replace(ok, `"tool_params":{"text":"b"}`, `"tool_params":[1]`, 1),
		"string params":   strings.Replace(ok, `"tool_params":{"text":"b"}`, `"tool_params":"x"`, 1),
	} {
		if req, err := tr.mcpRequest(json.RawMessage(params)); err == nil {
			t.Errorf("%s: mapped to %+v", name, req)
		}
	}
}

// A finished MCP call's output is its text content, other content
// described; a failed call is an error with Codex's message.
func TestMCPOutput(t *testing.T) {
	for _, c := range []struct {
		raw, out string
		isErr    bool
	}{
		{`{"type":"mcpToolCall","id":"1","status":"completed","result":{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AA=="}]}}`,
			"a\n[image image/png, not shown]", false},
		{`{"type":"mcpToolCall","id":"1","status":"completed","result":{"content":[],"structuredContent":{"n":1}}}`, `{"n":1}`, false},
		{`{"type":"mcpToolCall","id":"1","status":"failed","error":{"message":"user rejected MCP tool call"}}`, "user rejected MCP tool call", true},
		{`{"type":"mcpToolCall","id":"1","status":"failed"}`, "failed", true},
		{`{"type":"mcpToolCall","id":"1","status":"failed","result":{"content":[{"type":"text","text":"the fail tool failed"}]}}`, "the fail tool failed", true},
		{`{"type":"mcpToolCall","id":"1","status":"completed"}`, "", false},
	} {
		it, ok := decodeItem(json.RawMessage(c.raw))
		if !ok {
			t.Fatalf("decode %s", c.raw)
		}
		if out, isErr := mcpOutput(it); out != c.out || isErr != c.isErr {
			t.Errorf("%s: %q, %v", c.raw, out, isErr)
		}
	}
}

// On the wire: an elicitation for a call kz allows is answered accept
// with empty content, one for a server kz did not hand, or with
// parameters kz cannot read, a JSON-RPC error; the call's items become
// tool events under kz's name.
func TestElicitationAnswers(t *testing.T) {
	elicit := func(id int, server, meta string) clitest.Line {
		return clitest.CLI(fmt.Sprintf(`{"method":"mcpServer/elicitation/request","id":%d,"params":{"threadId":"th-1","turnId":"tu-1","serverName":%q,`+
			`"mode":"form","message":"Allow?","requestedSchema":{"type":"object","properties":{}},"_meta":%s}}`, id, server, meta))
	}
	const meta = `{"codex_approval_kind":"mcp_tool_call","tool_name":"echo","tool_params":{"text":"hi"}}`
	lines := append(handshake("go"),
		clitest.CLI(`{"method":"item/started","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"mcpToolCall","id":"call_1","server":"kzt","tool":"echo","status":"inProgress","arguments":{"text":"hi"}}}}`),
		elicit(0, "kzt", meta),
		clitest.Host(`{"id":0,"result":{"action":"accept","content":{}}}`),
		clitest.CLI(`{"method":"item/completed","params":{"threadId":"th-1","turnId":"tu-1","item":{"type":"mcpToolCall","id":"call_1","server":"kzt","tool":"echo","status":"completed","arguments":{"text":"hi"},"result":{"content":[{"type":"text","text":"echo: hi"}]}}}}`),
		elicit(1, "own", meta),
		clitest.Host(`{"id":1,"error":{"code":-32000}}`),
		elicit(2, "kzt", `{"codex_approval_kind":"mcp_tool_call","tool_name":"echo","tool_params":"not an object"}`),
		clitest.Host(`{"id":2,"error":{"code":-32000}}`),
		elicit(3, "kzt", `null`),
		clitest.Host(`{"id":3,"error":{"code":-32000}}`),
		clitest.CLI(turnDone))
	f := newFake(t, lines)
	f.rt.cfg.MCPServers = []mcp.Spec{{Name: "kzt", Transport: mcp.Stdio, Command: "never-started"}}
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Gate: clitest.Gate(t, permission.Rules{}), Answer: person.Answer})
	if final := h.Run(t, context.Background(), "go"); final.Status != string(engine.StatusComplete) {
		t.Errorf("final %+v", final)
	}
	if n := f.CheckReport(); n != 8 {
		t.Errorf("fake checked %d host lines, want 8", n)
	}
	if seen := person.Seen(); len(seen) != 1 || seen[0].Tool != "mcp__kzt__echo" || seen[0].ToolCallID != "call_1" {
		t.Errorf("the person was asked %+v", seen)
	}
	started, finished := h.Journal.OfType(engine.EventToolCallStarted), h.Journal.OfType(engine.EventToolCallFinished)
	if len(started) != 1 || started[0].Tool != "mcp__kzt__echo" || string(started[0].Input) != `{"text":"hi"}` {
		t.Errorf("tool_call_started %+v", started)
	}
	if len(finished) != 1 || finished[0].Tool != "mcp__kzt__echo" || finished[0].Output != "echo: hi" || finished[0].IsError {
		t.Errorf("tool_call_finished %+v", finished)
	}
}

package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/runtimes/native"
)

// writeTool is a native runtime's one tool, write_file, asking kz's gate
// before it writes into ws; runs counts its executions.
type writeTool struct {
	ws   string
	runs atomic.Int32
}

func (w *writeTool) Tools(engine.Mode) []llm.ToolDef {
	return []llm.ToolDef{{Name: "write_file", Description: "write a file",
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)}}
}

func (w *writeTool) Run(ctx context.Context, h native.Host, _ *engine.Turn, calls []llm.ToolCall) []llm.ToolResult {
	out := make([]llm.ToolResult, len(calls))
	for i, c := range calls {
		var in struct{ Path, Content string }
		_ = json.Unmarshal(c.Args, &in)
		h.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: c.ID, Tool: c.Name, Input: c.Args})
		ans := h.RequestPermission(ctx, engine.PermissionRequest{ToolCallID: c.ID, Tool: c.Name, Input: c.Args, Paths: []string{in.Path}, Write: true})
		res := llm.ToolResult{Content: "denied", IsError: true}
		if ans.Allowed() {
			w.runs.Add(1)
			if err := os.WriteFile(filepath.Join(w.ws, filepath.Base(in.Path)), []byte(in.Content), 0o644); err != nil {
				res = llm.ToolResult{Content: err.Error(), IsError: true}
			} else {
				res = llm.ToolResult{Content: "wrote " + in.Path}
			}
		}
		h.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: c.ID, Tool: c.Name, Output: res.Content, IsError: res.IsError})
		out[i] = res
	}
	return out
}

// TestRealFailoverNativeToClaude: kz's own runtime writes f.txt, then its
// API answers 529; the real Claude Code takes over, and its first request
// to the model holds the write with its decision and result, and the
// request to continue. f.txt is written once.
func TestRealFailoverNativeToClaude(t *testing.T) {
	api := newFakeAPI(t, func(*apiRequest) fakeReply { return fakeReply{Text: "claude took over"} })
	claude, ws := realSetup(t, api)
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Text: "Writing f.txt.", Calls: []llmtest.Call{{ID: "toolu_w1", Name: "write_file", Args: `{"path":"f.txt","content":"one"}`}}},
		llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529})
	tools := &writeTool{ws: ws}
	nat, err := native.New(native.Config{Name: "native", LLM: fake.Config(), Models: []string{"claude-sonnet-4-5"}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: nat}, {Runtime: claude}}, clitest.Options{Answer: clitest.AllowOnce,
		Failover: []engine.ChainLink{{Runtime: "claude"}}})
	final := h.Run(t, context.Background(), "KZ:write f.txt then report")
	if final.Status != string(engine.StatusComplete) || final.Runtime != "claude" || final.Output != "claude took over" {
		t.Fatalf("final %+v", final)
	}
	if n := tools.runs.Load(); n != 1 {
		t.Fatalf("write_file ran %d times, want once", n)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("claude sent no request")
	}
	got := reqs[0].allText()
	for _, want := range []string{"KZ:write f.txt then report", "Writing f.txt.", "write_file", "f.txt", "permission allow", "wrote f.txt", "do not run them again"} {
		if !strings.Contains(got, want) {
			t.Errorf("claude's first request lacks %q:\n%s", want, got)
		}
	}
}

// TestRealFailoverClaudeToNative: the real Claude Code runs a Bash
// command kz allowed, then its API answers 529; kz's own runtime takes
// over, and its first request holds the command as a tool call with its
// result, the decision, and the request to continue.
func TestRealFailoverClaudeToNative(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if _, ok := r.toolResult(); ok {
			return fakeReply{Status: 529}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_b1", Name: "Bash", Input: map[string]string{"command": "echo hi > g.txt", "description": "write g"}}}}
	})
	claude, ws := realSetup(t, api)
	fake := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Text: "native took over"})
	nat, err := native.New(native.Config{Name: "native", LLM: fake.Config(), Models: []string{"claude-sonnet-4-5"},
		Capabilities: engine.NewCapSet(engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell)})
	if err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: claude}, {Runtime: nat}}, clitest.Options{Answer: clitest.AllowOnce,
		Failover: []engine.ChainLink{{Runtime: "native"}}})
	final := h.Run(t, context.Background(), "KZ:make g.txt")
	if final.Status != string(engine.StatusComplete) || final.Runtime != "native" || final.Output != "native took over" {
		t.Fatalf("final %+v\n%+v", final, h.Journal.OfType(engine.EventError))
	}
	if b, err := os.ReadFile(filepath.Join(ws, "g.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("g.txt = %q, %v", b, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests to the native runtime", len(reqs))
	}
	for _, want := range []string{"KZ:make g.txt", "toolu_b1", "Bash", "echo hi > g.txt", "permission allow", "do not run them again"} {
		if !reqs[0].Contains(want) && !reqs[0].Contains(strings.ReplaceAll(want, ">", `\u003e`)) {
			t.Errorf("native's first request lacks %q:\n%s", want, reqs[0].Raw)
		}
	}
	if sw := h.Journal.OfType(engine.EventRuntimeSwitched); len(sw) != 1 || !strings.Contains(sw[0].Text, "1 tool call") {
		t.Errorf("runtime_switched = %+v", sw)
	}
}

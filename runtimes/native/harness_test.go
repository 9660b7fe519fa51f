package native

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	// Sandboxed bash re-executes this binary as the Landlock wrapper.
	if sandbox.IsWrapperInvocation(os.Args) {
		os.Exit(sandbox.WrapperMain(os.Args))
	}
	mcptest.ServeIfChild()
	goleak.VerifyTestMain(m)
}

// fsTools is a small ToolRunner over a workspace directory: read_file and
// edit_file (exact single replacement). It asks permission for every call
// through the host, like tools.Executor does, and emits the tool events.
type fsTools struct {
	mu       sync.Mutex
	executed []string
}

var readSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
var editSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string"},"new":{"type":"string"}},"required":["path","old","new"]}`)

func (f *fsTools) Tools(mode engine.Mode) []llm.ToolDef {
	defs := []llm.ToolDef{{Name: "read_file", Description: "Read a file of the workspace.", Schema: readSchema}}
	if mode == engine.ModeFullAutonomous {
		defs = append(defs, llm.ToolDef{Name: "edit_file", Description: "Replace old by new in a file.", Schema: editSchema})
	}
	return defs
}

func (f *fsTools) Executed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.executed...)
}

func (f *fsTools) Run(ctx context.Context, h Host, t *engine.Turn, calls []llm.ToolCall) []llm.ToolResult {
	out := make([]llm.ToolResult, len(calls))
	for i, c := range calls {
		var in struct{ Path, Old, New string }
		_ = json.Unmarshal(c.Args, &in)
		h.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: c.ID, Tool: c.Name, Input: c.Args})
		ans := h.RequestPermission(ctx, engine.PermissionRequest{ToolCallID: c.ID, Tool: c.Name, Input: c.Args,
			Paths: []string{in.Path}, Write: c.Name == "edit_file"})
		var res llm.ToolResult
		if !ans.Allowed() {
			msg := "denied: " + ans.Reason
			if ans.Feedback != "" {
				msg += "; the person says: " + ans.Feedback
			}
			res = llm.ToolResult{Content: msg, IsError: true}
		} else {
			res = f.exec(t.Workspace, c.Name, in.Path, in.Old, in.New)
			if !res.IsError && c.Name == "edit_file" {
				h.Emit(engine.Event{Type: engine.EventFileEdited, Path: in.Path})
			}
		}
		h.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: c.ID, Tool: c.Name, Output: res.Content, IsError: res.IsError})
		out[i] = res
	}
	return out
}

func (f *fsTools) exec(ws, tool, path, old, new string) llm.ToolResult {
	f.mu.Lock()
	f.executed = append(f.executed, tool+":"+path)
	f.mu.Unlock()
	p := filepath.Join(ws, filepath.Clean("/"+path))
	b, err := os.ReadFile(p)
	if err != nil {
		return llm.ToolResult{Content: err.Error(), IsError: true}
	}
	if tool == "read_file" {
		return llm.ToolResult{Content: string(b)}
	}
	if strings.Count(string(b), old) != 1 {
		return llm.ToolResult{Content: "old text must match exactly once", IsError: true}
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		return llm.ToolResult{Content: err.Error(), IsError: true}
	}
	return llm.ToolResult{Content: "edited " + path}
}

// testGate allows reads, asks for writes, and records every query.
type testGate struct {
	mu      sync.Mutex
	queries []engine.GateQuery
}

func (g *testGate) Check(_ context.Context, q engine.GateQuery) engine.Verdict {
	g.mu.Lock()
	g.queries = append(g.queries, q)
	g.mu.Unlock()
	if q.Request.Write {
		if q.Mode != engine.ModeFullAutonomous {
			return engine.Verdict{Decision: engine.DecisionDeny, Stage: "mode", Reason: "no writes in " + string(q.Mode)}
		}
		return engine.Verdict{Decision: engine.DecisionAsk, Stage: "rules", Reason: "edits need approval"}
	}
	return engine.Verdict{Decision: engine.DecisionAllow, Stage: "rules", Reason: "reads are allowed"}
}

func (g *testGate) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error { return nil }

func (g *testGate) Queries() []engine.GateQuery {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]engine.GateQuery(nil), g.queries...)
}

// harness is a real engine.Session around native runtimes, with a person
// who answers permission requests through answer.
type harness struct {
	t       *testing.T
	s       *engine.Session
	journal *clitest.Journal
	gate    *testGate
	tools   *fsTools
	ws      string
	stop    func()
}

type harnessOpts struct {
	runtimes []engine.RuntimeEntry
	runtime  string
	mode     engine.Mode
	limits   engine.Limits
	failover []engine.ChainLink
	answer   func(engine.Event) engine.Answer
	tools    *fsTools
	redact   func(string) string
	// context, when set, is the session's Config.Context, called with
	// the harness's workspace.
	context func(ctx context.Context, workspace string) engine.TurnContext
	// setup prepares the workspace before the session opens.
	setup func(ws string)
	// gate, when set, replaces the recording test gate (kz's real one).
	gate engine.Gate
	// hooks are the session's hooks (the person's Stop hooks).
	hooks engine.TurnHooks
	// checkpoints is the session's checkpointer.
	checkpoints engine.Checkpointer
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, journal: &clitest.Journal{}, gate: &testGate{}, tools: o.tools, ws: t.TempDir()}
	if o.mode == "" {
		o.mode = engine.ModeFullAutonomous
	}
	if o.setup != nil {
		o.setup(h.ws)
	}
	var gate engine.Gate = h.gate
	if o.gate != nil {
		gate = o.gate
	}
	s, err := engine.NewSession(engine.Config{Workspace: h.ws, Journal: h.journal, Runtimes: o.runtimes, Runtime: o.runtime,
		Mode: o.mode, Gate: gate, Interactive: true, Limits: o.limits, Failover: o.failover, Redact: o.redact, Context: o.context, Hooks: o.hooks,
		Checkpoints: o.checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	if o.answer == nil {
		o.answer = func(engine.Event) engine.Answer { return engine.Answer{Decision: engine.DecisionAllow} }
	}
	sub := s.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if ev.Type == engine.EventPermissionRequested {
				_ = s.Answer(ev.RequestID, o.answer(ev))
			}
		}
	}()
	h.stop = func() {
		cancel()
		<-done
		sub.Close()
		_ = s.Close(context.Background())
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) write(name, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.ws, name), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) read(name string) string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.ws, name))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *harness) run(prompt string) engine.Event {
	h.t.Helper()
	final, err := h.s.RunTurn(context.Background(), prompt)
	if err != nil {
		h.t.Fatalf("RunTurn: %v", err)
	}
	return final
}

func mustNative(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func dump(evs []engine.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s %q %s %s\n", e.Type, e.Text, e.Tool, e.Output)
	}
	return b.String()
}

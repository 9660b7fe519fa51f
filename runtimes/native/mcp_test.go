package native

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
	"github.com/kaizen-code/kz/tools/permission"
)

// These tests run kz's own loop against a fake model API that calls the
// tools of a real MCP server (tools/mcp/mcptest, over stdio), through
// kz's real Executor and real permission gate.

// mcpRun is one session with an MCP server: the harness, the fake API,
// the server's call log and the artifacts stored.
type mcpRun struct {
	*harness
	fake      *llmtest.Server
	log       string
	artifacts *memArtifacts
}

type mcpOpts struct {
	mode   engine.Mode
	rules  permission.Rules
	answer func(engine.Event) engine.Answer
	// extra are more servers besides "notes".
	extra []mcp.Spec
}

func newMCPRun(t *testing.T, pc providerCase, o mcpOpts, replies ...llmtest.Reply) *mcpRun {
	t.Helper()
	log := filepath.Join(t.TempDir(), "calls")
	spec := mcptest.StdioSpec(t, "notes", log)
	spec.TrustAnnotations = true
	m := mcp.NewManager(append([]mcp.Spec{spec}, o.extra...))
	home := t.TempDir()
	gate, err := permission.New(permission.Options{User: o.rules, Home: home, ConfigDir: filepath.Join(home, ".config", "kz")})
	if err != nil {
		t.Fatal(err)
	}
	gate.SetMCPReadOnly(m.ReadOnly)
	arts := &memArtifacts{}
	et := PerSessionTools(tools.NewBuiltinRegistry().Filter(gate.DeniesTool), &memSnapshots{}, arts, nil)
	et.Source, et.Deny = m, gate.DeniesTool
	fake := newFake(t, pc, replies...)
	rt := mustNative(t, Config{LLM: fake.Config(), Models: []string{pc.model}, Tools: et})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{pc.model}}}, runtime: "native",
		mode: o.mode, gate: gate, answer: o.answer})
	// The servers stop after the session: cleanups run last in, first out.
	t.Cleanup(m.Close)
	return &mcpRun{harness: h, fake: fake, log: log, artifacts: arts}
}

// memArtifacts keeps over-limit results in memory.
type memArtifacts struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (a *memArtifacts) SaveArtifact(_ context.Context, _, callID string, content []byte) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.data == nil {
		a.data = map[string][]byte{}
	}
	a.data[callID] = content
	return "artifact:" + callID, nil
}

func (a *memArtifacts) get(id string) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.data[id]
}

func toolResult(evs []engine.Event, id string) engine.Event {
	for _, ev := range evs {
		if ev.Type == engine.EventToolCallFinished && ev.ToolCallID == id {
			return ev
		}
	}
	return engine.Event{}
}

var mcpCases = []providerCase{cases[0], cases[1], cases[3]}

func TestMCPToolAllowedByRuleReachesServerAndModel(t *testing.T) {
	t.Parallel()
	for _, pc := range mcpCases {
		t.Run(pc.name(), func(t *testing.T) {
			broken := mcp.Spec{Name: "broken", Transport: mcp.Stdio, Command: "/nonexistent/server", StartupTimeout: time.Second, ToolTimeout: time.Second}
			r := newMCPRun(t, pc, mcpOpts{rules: permission.Rules{Allow: []string{"mcp__notes__note"}}, extra: []mcp.Spec{broken}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__note", Args: `{"text":"remember me"}`}}},
				llmtest.Reply{Text: "Saved."})
			final := r.run("save a note")
			if final.Status != "complete" || final.Output != "Saved." {
				t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(r.journal.Events()))
			}
			if res := toolResult(r.journal.Events(), "c1"); res.IsError || res.Output != "noted" {
				t.Errorf("tool result %+v", res)
			}
			if calls := mcptest.Calls(t, r.log); len(calls) != 1 || calls[0] != `note {"text":"remember me"}` {
				t.Errorf("server log %q", calls)
			}
			if len(r.journal.OfType(engine.EventPermissionRequested)) != 0 {
				t.Error("an allowed call was asked")
			}
			first := r.fake.Requests()[0]
			// The tools are offered with the server's schema; the server
			// that failed to start offers none and the turn runs.
			for _, want := range []string{"mcp__notes__echo", "mcp__notes__note", `"required":["text"]`} {
				if !first.Contains(want) {
					t.Errorf("first request lacks %s: %s", want, first.Raw)
				}
			}
			if first.Contains("mcp__broken") {
				t.Error("a server that failed to start offers tools")
			}
			if !r.fake.Requests()[1].Contains("noted") {
				t.Errorf("result not sent to the model: %s", r.fake.Requests()[1].Raw)
			}
			started := r.journal.OfType(engine.EventSessionStarted)
			if len(started) != 1 || !slices.Contains(started[0].Tools, "mcp__notes__note") {
				t.Errorf("session_started tools: %+v", started)
			}
		})
	}
}

// Without a rule an MCP tool that is not known read-only is asked; a
// denied call never reaches the server.
func TestMCPToolAskedThenDeniedNeverReachesServer(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	var asked []engine.Event
	var mu sync.Mutex
	r := newMCPRun(t, pc, mcpOpts{answer: func(ev engine.Event) engine.Answer {
		mu.Lock()
		asked = append(asked, ev)
		mu.Unlock()
		return engine.Answer{Decision: engine.DecisionDeny, Feedback: "not now"}
	}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__note", Args: `{"text":"x"}`}}},
		llmtest.Reply{Text: "OK, I did not save it."})
	final := r.run("save a note")
	if final.Status != "complete" {
		t.Fatalf("final %+v", final)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].Tool != "mcp__notes__note" {
		t.Fatalf("asked %+v", asked)
	}
	res := toolResult(r.journal.Events(), "c1")
	if !res.IsError || !strings.Contains(res.Output, "Permission to run mcp__notes__note was denied") || !strings.Contains(res.Output, "not now") {
		t.Errorf("result %+v", res)
	}
	if calls := mcptest.Calls(t, r.log); len(calls) != 0 {
		t.Errorf("a denied call reached the server: %q", calls)
	}
}

// A deny rule naming the server removes its tools before the model sees
// them; a call the model makes anyway is not run.
func TestMCPDenyRuleRemovesServerTools(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	r := newMCPRun(t, pc, mcpOpts{rules: permission.Rules{Deny: []string{"mcp__notes"}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__echo", Args: `{"text":"x"}`}}},
		llmtest.Reply{Text: "done"})
	r.run("echo")
	if r.fake.Requests()[0].Contains("mcp__notes") {
		t.Errorf("denied server's tools offered: %s", r.fake.Requests()[0].Raw)
	}
	if calls := mcptest.Calls(t, r.log); len(calls) != 0 {
		t.Errorf("a denied server was called: %q", calls)
	}
}

// Analysis-only mode offers and runs only the tools a trusted server marks
// read-only, without asking; any other is refused by the mode.
func TestMCPAnalysisOnlyRunsOnlyTrustedReadOnlyTools(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	r := newMCPRun(t, pc, mcpOpts{mode: engine.ModeAnalysisOnly, rules: permission.Rules{Allow: []string{"mcp__notes__note"}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__echo", Args: `{"text":"look"}`}, {ID: "c2", Name: "mcp__notes__note", Args: `{"text":"w"}`}}},
		llmtest.Reply{Text: "done"})
	final := r.run("look around")
	if final.Status != "complete" {
		t.Fatalf("final %+v\n%s", final, dump(r.journal.Events()))
	}
	first := r.fake.Requests()[0]
	if !first.Contains("mcp__notes__echo") || first.Contains(`"mcp__notes__note"`) {
		t.Errorf("analysis-only tools: %s", first.Raw)
	}
	if res := toolResult(r.journal.Events(), "c1"); res.IsError || res.Output != "echo: look" {
		t.Errorf("echo %+v", res)
	}
	if res := toolResult(r.journal.Events(), "c2"); !res.IsError || !strings.Contains(res.Output, "not available in analysis-only mode") {
		t.Errorf("note in analysis-only mode: %+v", res)
	}
	if n := len(r.journal.OfType(engine.EventPermissionRequested)); n != 0 {
		t.Errorf("%d questions", n)
	}
	if calls := mcptest.Calls(t, r.log); len(calls) != 1 || !strings.HasPrefix(calls[0], "echo ") {
		t.Errorf("server log %q", calls)
	}
}

// A result over the limit reaches the model as a preview and is stored
// whole as an artifact.
func TestMCPResultIsCappedAndStored(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	r := newMCPRun(t, pc, mcpOpts{rules: permission.Rules{Allow: []string{"mcp__notes__big"}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__big", Args: `{"n":100000}`}}},
		llmtest.Reply{Text: "big"})
	r.run("get a lot")
	res := toolResult(r.journal.Events(), "c1")
	if res.IsError || len(res.Output) > 5000 || !strings.Contains(res.Output, "artifact:c1") {
		t.Errorf("result (%d bytes) %.200q", len(res.Output), res.Output)
	}
	if got := r.artifacts.get("c1"); len(got) != 100000 {
		t.Errorf("artifact is %d bytes", len(got))
	}
	if req := r.fake.Requests()[1]; len(req.Raw) > 50000 {
		t.Errorf("the model got %d bytes", len(req.Raw))
	}
}

// A server that crashes mid-session gives clear tool errors, and the turn
// goes on.
func TestMCPServerCrashIsAToolError(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	r := newMCPRun(t, pc, mcpOpts{rules: permission.Rules{Allow: []string{"mcp__notes"}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__notes__crash", Args: `{}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c2", Name: "mcp__notes__echo", Args: `{"text":"still there?"}`}}},
		llmtest.Reply{Text: "The server is gone."})
	final := r.run("crash it")
	if final.Status != "complete" {
		t.Fatalf("final %+v", final)
	}
	if res := toolResult(r.journal.Events(), "c1"); !res.IsError || !strings.Contains(res.Output, "mcp server notes") {
		t.Errorf("crash result %+v", res)
	}
	res := toolResult(r.journal.Events(), "c2")
	if !res.IsError || !strings.Contains(res.Output, "mcp server notes") {
		t.Errorf("call after the crash %+v", res)
	}
}

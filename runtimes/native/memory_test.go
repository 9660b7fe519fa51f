package native

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// memoryProject makes the workspace a repository with an AGENTS.md that
// imports a file, a CLAUDE.md, and a branch.
func memoryProject(ws string) {
	for name, body := range map[string]string{
		".git/HEAD":     "ref: refs/heads/main\n",
		"AGENTS.md":     "Run go test before you finish. See @docs/style.md\n",
		"docs/style.md": "Tabs, not spaces.\n",
		"CLAUDE.md":     "Never edit generated files.\n",
	} {
		p := filepath.Join(ws, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(body), 0o644)
	}
}

// memoryContext is a session's Context over the real memory loader, with a
// fixed date, shell and git status.
func memoryContext(ctx context.Context, ws string) engine.TurnContext {
	res := memory.Load(ctx, memory.Options{Workspace: ws})
	env := memory.Probe(ctx, ws, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC),
		func(context.Context, string) ([]byte, error) { return []byte(" M a.go\n?? b.go\n"), nil })
	env.Shell, env.OS = "bash", "linux/amd64"
	return engine.TurnContext{Memory: res.Files, Env: env, Problems: res.Problems}
}

// wantMemoryBlock is the exact context block of memoryProject's turns.
func wantMemoryBlock(ws string, mode engine.Mode, claude string) string {
	return "<environment>\nOS: linux/amd64\nShell: bash\nDate: 2026-11-27\nWorkspace: " + ws +
		"\nGit branch: main\nGit status: 1 modified, 1 untracked\nMode: " + string(mode) + "\n</environment>\n\n" +
		"The person's memory files follow: instructions for working in this project. Follow them; a later file refines an earlier one.\n" +
		"<memory path=\"" + filepath.Join(ws, "AGENTS.md") + "\">\nRun go test before you finish. See @docs/style.md\n</memory>\n" +
		"<memory path=\"" + filepath.Join(ws, "docs", "style.md") + "\">\nTabs, not spaces.\n</memory>\n" +
		"<memory path=\"" + filepath.Join(ws, "CLAUDE.md") + "\">\n" + claude + "\n</memory>\n"
}

// systemOf reads the system prompt out of a captured request, where each
// wire format puts it.
func systemOf(t *testing.T, pc providerCase, c llmtest.Captured) string {
	t.Helper()
	var body struct {
		System   []struct{ Text string } `json:"system"`
		Messages []struct {
			Role    string
			Content json.RawMessage
		} `json:"messages"`
		Instr    string `json:"instructions"`
		SysInstr struct {
			Parts []struct{ Text string } `json:"parts"`
		} `json:"systemInstruction"`
	}
	if err := json.Unmarshal(c.Raw, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, c.Raw)
	}
	switch {
	case pc.p == llm.ProviderAnthropic && len(body.System) == 1:
		return body.System[0].Text
	case pc.p == llm.ProviderGemini && len(body.SysInstr.Parts) == 1:
		return body.SysInstr.Parts[0].Text
	case pc.api == llm.OpenAIResponses:
		return body.Instr
	case pc.p == llm.ProviderOpenAI && len(body.Messages) > 0 && body.Messages[0].Role == "system":
		var s string
		if json.Unmarshal(body.Messages[0].Content, &s) == nil {
			return s
		}
	}
	t.Fatalf("no system prompt in %s", c.Raw)
	return ""
}

func TestSystemPromptCarriesMemoryAndEnvironment(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc, llmtest.Reply{Text: "ok"})
			tools := &fsTools{}
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: nativeFor(t, fake, pc.model, tools)}},
				runtime: "native", tools: tools, setup: memoryProject, context: memoryContext})
			if final := h.run("hi"); final.Status != "complete" {
				t.Fatalf("final %s %q", final.Status, final.Text)
			}
			want := "You are kz, a coding assistant working in the project at " + h.ws + ".\n" +
				"Use the tools to read, edit and run what the task needs. Every tool call passes kz's permission gate; " +
				"when a call is denied, respect the decision and the person's feedback, and continue without it.\n" +
				"Be concise. When the task is done, answer with a short summary of what you did.\n\n" +
				wantMemoryBlock(h.ws, engine.ModeFullAutonomous, "Never edit generated files.")
			if got := systemOf(t, pc, fake.Requests()[0]); got != want {
				t.Fatalf("system prompt:\n%s\nwant:\n%s", got, want)
			}
			started := h.journal.OfType(engine.EventSessionStarted)
			if len(started) != 1 || len(started[0].Memory) != 3 || started[0].Memory[1].Path != filepath.Join(h.ws, "docs", "style.md") ||
				started[0].Memory[0].Tokens != memory.EstimateTokens("Run go test before you finish. See @docs/style.md\n") {
				t.Fatalf("session_started memory: %+v", started)
			}
			raw, _ := json.Marshal(started[0])
			if strings.Contains(string(raw), "Tabs, not spaces") || !strings.Contains(string(raw), `"memory":[{"path":`) {
				t.Fatalf("session_started JSON must list the files without their content: %s", raw)
			}
		})
	}
}

// After a turn on another runtime (here the scripted one, which never sees
// a system prompt), the native runtime that joins the session works under
// the same memory, and a change to a memory file between turns reaches
// the next turn.
func TestSystemPromptAfterSwitchFromScripted(t *testing.T) {
	t.Parallel()
	script := `{"kz_script": 1, "model": "scripted-1", "capabilities": ["text_completion", "streaming_text"]}
{"type": "assistant_message", "text": "scripted answer"}
`
	sc, err := scripted.Parse("scripted", "inline", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc, llmtest.Reply{Text: "native answer"})
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: sc},
				{Runtime: nativeFor(t, fake, pc.model, nil)}}, runtime: "scripted", mode: engine.ModeAnalysisOnly,
				setup: memoryProject, context: memoryContext})
			if final := h.run("first"); final.Status != "complete" {
				t.Fatalf("scripted turn: %s %q", final.Status, final.Text)
			}
			if started := h.journal.OfType(engine.EventSessionStarted); len(started) != 1 || len(started[0].Memory) != 3 {
				t.Fatalf("the scripted runtime's session_started must list the memory too: %+v", started)
			}
			h.write("CLAUDE.md", "Never edit generated files. Ask first.\n")
			if err := h.s.SwitchRuntime("native", ""); err != nil {
				t.Fatal(err)
			}
			if final := h.run("second"); final.Status != "complete" {
				t.Fatalf("native turn: %s %q", final.Status, final.Text)
			}
			want := "You are kz, a coding assistant working in the project at " + h.ws + ".\n" +
				"Mode: analysis-only. Read and explain; do not change files or run commands that change anything.\n" +
				"Be concise. When the task is done, answer with a short summary of what you did.\n\n" +
				wantMemoryBlock(h.ws, engine.ModeAnalysisOnly, "Never edit generated files. Ask first.")
			req := fake.Requests()[0]
			if got := systemOf(t, pc, req); got != want {
				t.Fatalf("system prompt after the switch:\n%s\nwant:\n%s", got, want)
			}
			if !req.Contains("scripted answer") {
				t.Fatalf("the history did not reach the native runtime: %s", req.Raw)
			}
		})
	}
}

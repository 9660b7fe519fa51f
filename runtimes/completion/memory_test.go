package completion

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// The completion runtime's system prompt carries the memory files and the
// environment after its own instructions, in every wire format.
func TestSystemPromptCarriesMemoryAndEnvironment(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{".git/HEAD": "ref: refs/heads/dev\n", "AGENTS.md": "Answer in French.\n",
		"pkg/GEMINI.md": "This package is generated.\n"} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cwd := filepath.Join(ws, "pkg")
	res := memory.Load(context.Background(), memory.Options{Workspace: cwd})
	env := engine.Environment{OS: "linux/amd64", Date: "2026-11-27", Workspace: cwd, GitBranch: memory.Branch(ws), GitStatus: "clean"}
	want := "You are kz, a coding assistant for the project at " + cwd + ". You cannot run tools or change files.\n" +
		"Mode: analysis-only. Answer from the conversation; say what you would need to see when it is not enough.\n\n" +
		"<environment>\nOS: linux/amd64\nDate: 2026-11-27\nWorkspace: " + cwd + "\nGit branch: dev\nGit status: clean\nMode: analysis-only\n</environment>\n\n" +
		"The person's memory files follow: instructions for working in this project. Follow them; a later file refines an earlier one.\n" +
		"<memory path=\"" + filepath.Join(ws, "AGENTS.md") + "\">\nAnswer in French.\n</memory>\n" +
		"<memory path=\"" + filepath.Join(cwd, "GEMINI.md") + "\">\nThis package is generated.\n</memory>\n"
	for _, tc := range []struct {
		p     llm.Provider
		api   llm.OpenAIAPI
		model string
	}{
		{llm.ProviderAnthropic, "", "claude-sonnet-4-5"},
		{llm.ProviderOpenAI, "", "gpt-4.1"},
		{llm.ProviderOpenAI, llm.OpenAIResponses, "gpt-4.1"},
		{llm.ProviderGemini, "", "gemini-2.5-pro"},
	} {
		t.Run(string(tc.p)+string(tc.api), func(t *testing.T) {
			fake := llmtest.New(t, tc.p, llmtest.Reply{Text: "Bonjour."})
			fake.API = tc.api
			rt := newRT(t, fake, tc.model)
			turn := &engine.Turn{Prompt: "hi", Mode: engine.ModeAnalysisOnly, Workspace: cwd,
				Context: engine.TurnContext{Memory: res.Files, Env: env}}
			if _, err := rt.run(context.Background(), turn, &host{}); err != nil {
				t.Fatal(err)
			}
			if got := systemText(t, tc.p, tc.api, fake.Requests()[0].Raw); got != want {
				t.Fatalf("system prompt:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// systemText reads the system prompt where each wire format puts it.
func systemText(t *testing.T, p llm.Provider, api llm.OpenAIAPI, raw []byte) string {
	t.Helper()
	var body struct {
		System   []struct{ Text string } `json:"system"`
		Messages []struct {
			Role    string
			Content json.RawMessage
		} `json:"messages"`
		Instructions string `json:"instructions"`
		SysInstr     struct {
			Parts []struct{ Text string } `json:"parts"`
		} `json:"systemInstruction"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	var s string
	switch {
	case p == llm.ProviderAnthropic && len(body.System) == 1:
		s = body.System[0].Text
	case p == llm.ProviderGemini && len(body.SysInstr.Parts) == 1:
		s = body.SysInstr.Parts[0].Text
	case api == llm.OpenAIResponses:
		s = body.Instructions
	case len(body.Messages) > 0 && body.Messages[0].Role == "system":
		_ = json.Unmarshal(body.Messages[0].Content, &s)
	}
	if s == "" {
		t.Fatalf("no system prompt in %s", raw)
	}
	return s
}

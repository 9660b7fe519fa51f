package llm_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes/llm"
)

func TestCatalogLookup(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	cases := []struct {
		name, want string
		window     int
		tools      bool
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5", 200000, true},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 200000, true},
		{"anthropic/claude-haiku-4-5", "claude-haiku-4-5", 200000, true},
		{"gpt-4o-2024-08-06", "gpt-4o", 128000, true},
		{"gpt-4o-mini", "gpt-4o-mini", 128000, true},
		{"llama3.1:8b", "llama3.1", 131072, true},
		{"gemma2:9b", "gemma2", 8192, false},
	}
	for _, tc := range cases {
		m, warn := cat.Lookup(tc.name)
		if warn != "" || m.ContextWindow != tc.window || m.Tools != tc.tools || m.ID != tc.name {
			t.Errorf("%s: %+v warn %q", tc.name, m, warn)
		}
	}
	// gpt-4o must not swallow an unrelated longer name.
	if _, warn := cat.Lookup("gpt-4omega"); warn == "" {
		t.Error("gpt-4omega matched gpt-4o")
	}
	m, warn := cat.Lookup("acme-coder-7")
	if !strings.Contains(warn, "acme-coder-7") || m.ContextWindow != 32768 || m.InputPerMTok != 0 || m.Vision {
		t.Errorf("unknown model: %+v %q", m, warn)
	}
}

func TestCatalogOverridesAndCost(t *testing.T) {
	t.Parallel()
	win, price, no := 50000, 0.5, false
	cat, err := llm.DefaultCatalog().WithOverrides([]llm.ModelOverride{
		{ID: "claude-haiku-4-5", ContextWindow: &win},
		{ID: "my-local", InputPerMTok: &price, Tools: &no},
		{ID: "qwen2.5-coder:32b-custom"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := cat.Lookup("claude-haiku-4-5"); m.ContextWindow != 50000 || m.OutputPerMTok != 5 {
		t.Errorf("override lost other fields: %+v", m)
	}
	if m, _ := llm.DefaultCatalog().Lookup("claude-haiku-4-5"); m.ContextWindow != 200000 {
		t.Error("override changed the default catalog")
	}
	if m, warn := cat.Lookup("my-local"); warn != "" || m.Tools || m.InputPerMTok != 0.5 {
		t.Errorf("new model: %+v %q", m, warn)
	}
	if m, _ := cat.Lookup("qwen2.5-coder:32b-custom"); m.ContextWindow != 32768 || !m.Tools {
		t.Errorf("tagged model did not start from its family: %+v", m)
	}
	bad := 0
	if _, err := cat.WithOverrides([]llm.ModelOverride{{ID: "x", ContextWindow: &bad}}); err == nil {
		t.Error("zero context window accepted")
	}
	m, _ := cat.Lookup("claude-sonnet-4-5")
	got := m.Cost(engine.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000})
	if want := 3 + 1.5 + 0.3 + 3.75; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v want %v", got, want)
	}
}

func TestParseCatalogRejectsBadEntries(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"models":[{"id":"a","max_output":1}]}`, `{"models":[{"id":"a","context_window":1,"max_output":1},{"id":"a","context_window":1,"max_output":1}]}`, `not json`} {
		if _, err := llm.ParseCatalog([]byte(in)); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
}

func TestFromTranscript(t *testing.T) {
	t.Parallel()
	h := []engine.TranscriptEntry{
		{Kind: engine.EntryUser, Text: "q1"},
		{Kind: engine.EntryAssistant, Text: "looking"},
		{Kind: engine.EntryToolCall, ToolCallID: "a", Tool: "read", Input: []byte(`{"p":1}`), Output: "data", Status: engine.ToolStatusOK},
		{Kind: engine.EntryToolCall, ToolCallID: "b", Tool: "read", Status: engine.ToolStatusRunning},
		{Kind: engine.EntryDecision, Status: "deny"},
		{Kind: engine.EntryAssistant, Text: "answer"},
		{Kind: engine.EntryTurnEnd, Status: "complete"},
		{Kind: engine.EntryUser, Text: "q2"},
		{Kind: engine.EntryUser, Text: "q3"},
	}
	got := llm.FromTranscript(h)
	if len(got) != 5 {
		t.Fatalf("%d messages: %+v", len(got), got)
	}
	if got[1].Role != llm.RoleAssistant || got[1].Text != "looking" || len(got[1].ToolCalls) != 2 {
		t.Errorf("assistant with calls: %+v", got[1])
	}
	res := got[2].ToolResults
	if got[2].Role != llm.RoleTool || len(res) != 2 || res[0].Content != "data" || res[1].Content != engine.InterruptedNotRerun || !res[1].IsError {
		t.Errorf("results: %+v", got[2])
	}
	if got[3].Text != "answer" || got[4].Text != "q2\n\nq3" {
		t.Errorf("tail: %+v %+v", got[3], got[4])
	}
}

func TestConfigFrom(t *testing.T) {
	t.Parallel()
	rc := config.Runtime{Kind: config.KindNative, Provider: "gemini", BaseURL: "http://127.0.0.1:9", APIKeyEnv: "MY_KEY", Timeout: config.Duration{Duration: 7 * time.Second}}
	c, err := llm.ConfigFrom(rc)
	if err != nil || c.Provider != llm.ProviderGemini || c.BaseURL != rc.BaseURL || c.APIKeyEnv != "MY_KEY" || c.Timeout != 7*time.Second {
		t.Fatalf("%+v %v", c, err)
	}
	if c.OpenAIAPI != "" {
		t.Errorf("gemini got an OpenAI API %q", c.OpenAIAPI)
	}
	for _, tc := range []struct{ base, api, want string }{
		{"", "", "responses"}, {"https://api.openai.com/v1", "", "responses"}, {"http://127.0.0.1:11434/v1", "", "chat"},
		{"https://openrouter.ai/api/v1", "", "chat"}, {"", "chat", "chat"}, {"http://127.0.0.1:9", "responses", "responses"},
	} {
		c, err := llm.ConfigFrom(config.Runtime{Kind: config.KindNative, Provider: "openai", BaseURL: tc.base, API: tc.api})
		if err != nil || string(c.OpenAIAPI) != tc.want {
			t.Errorf("base %q api %q: got %q %v, want %s", tc.base, tc.api, c.OpenAIAPI, err, tc.want)
		}
	}
	if _, err := llm.ConfigFrom(config.Runtime{Kind: config.KindNative, Provider: "openai", API: "assistants"}); err == nil {
		t.Error("unknown api accepted")
	}
	if _, err := llm.ConfigFrom(config.Runtime{Kind: config.KindNative, Provider: "anthropic", API: "responses"}); err == nil {
		t.Error("api accepted for anthropic")
	}
	rc.Provider = "azure"
	if _, err := llm.ConfigFrom(rc); err == nil || !strings.Contains(err.Error(), "anthropic, openai or gemini") {
		t.Errorf("unknown provider: %v", err)
	}
}

func TestCatalogFromConfig(t *testing.T) {
	t.Parallel()
	window, price, search, no := 50000, 7.0, 0.02, false
	cat, err := llm.CatalogFrom([]config.Model{
		{ID: "claude-sonnet-4-5", InputPerMTok: &price, WebSearchPerCall: &search},
		{ID: "my-local", Provider: "openai", ContextWindow: &window, Tools: &no},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, w := cat.Lookup("claude-sonnet-4-5"); w != "" || m.InputPerMTok != 7 || m.OutputPerMTok != 15 || m.WebSearchPerCall != 0.02 {
		t.Errorf("override: %+v %q", m, w)
	}
	if m, w := cat.Lookup("my-local"); w != "" || m.ContextWindow != 50000 || m.Tools || m.MaxOutput != llm.UnknownModel("x").MaxOutput {
		t.Errorf("added: %+v %q", m, w)
	}
	if _, w := llm.DefaultCatalog().Lookup("my-local"); w == "" {
		t.Error("the embedded catalog changed")
	}
	if _, err := llm.CatalogFrom([]config.Model{{ID: "x", Provider: "azure"}}); err == nil {
		t.Error("bad provider accepted")
	}
}

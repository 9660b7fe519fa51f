package llm_test

import (
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// A name matches a catalog entry only when it is that entry's id or alias,
// or the id followed by a snapshot suffix (a date, a snapshot number, a
// release channel, a provider version, an Ollama tag). A name that goes on
// with anything else is another model: it is not in the catalog, has no
// price, and so a budget on it gets the "not in kz's model catalog" error
// rather than another model's prices.
func TestCatalogMatchesOnlyAtASnapshotBoundary(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	same := map[string]string{
		"claude-sonnet-4-5":                   "claude-sonnet-4-5",
		"claude-sonnet-4-5-20250929":          "claude-sonnet-4-5",
		"claude-sonnet-4-5@20250929":          "claude-sonnet-4-5",
		"anthropic/claude-sonnet-4-5":         "claude-sonnet-4-5",
		"claude-sonnet-4-20250514":            "claude-sonnet-4",
		"claude-sonnet-4-0":                   "claude-sonnet-4",
		"claude-3-5-haiku-latest":             "claude-3-5-haiku",
		"gpt-5":                               "gpt-5",
		"gpt-5-2025-08-07":                    "gpt-5",
		"gpt-5-mini":                          "gpt-5-mini",
		"gpt-5-mini-2025-08-07":               "gpt-5-mini",
		"gpt-4.1-2025-04-14":                  "gpt-4.1",
		"gpt-4o-2024-08-06":                   "gpt-4o",
		"o3-2025-04-16":                       "o3",
		"gemini-2.5-pro":                      "gemini-2.5-pro",
		"gemini-2.5-pro-preview-06-05":        "gemini-2.5-pro",
		"gemini-2.5-flash-preview-09-2025":    "gemini-2.5-flash",
		"gemini-2.5-flash-lite-preview-06-17": "gemini-2.5-flash-lite",
		"gpt-4o-0613":                         "gpt-4o",
		"gemini-2.0-flash-001":                "gemini-2.0-flash",
		"gemini-2.0-flash-exp":                "gemini-2.0-flash",
		"llama3.1:8b":                         "llama3.1",
		"qwen2.5-coder:32b-instruct-q4_K_M":   "qwen2.5-coder",
	}
	for name, entry := range same {
		m, warn := cat.Lookup(name)
		want, _ := cat.Lookup(entry)
		if warn != "" || m.ID != name || m.InputPerMTok != want.InputPerMTok || m.OutputPerMTok != want.OutputPerMTok || m.ContextWindow != want.ContextWindow {
			t.Errorf("%s: %+v (warn %q), want the entry of %s", name, m, warn, entry)
		}
		if _, ok := cat.Price(name, engine.Usage{InputTokens: 1}); !ok {
			t.Errorf("%s: not priced", name)
		}
	}
	other := []string{
		"gpt-5.5", "gpt-5.1", "gpt-5-pro", "gpt-5-codex", "gpt-5-chat-latest", "gpt-5-mini-high",
		"gpt-4", "gpt-4.5", "gpt-4o1", "gpt-4omega", "o3-pro", "o3-mini",
		"claude-sonnet-4-6", "claude-sonnet-4.5", "claude-sonnet-45", "claude-opus-4", "claude-opus-4-5-thinking",
		"gemini-2.5-pro-max", "gemini-2.5", "gemini-2.5-flash-8b", "gemini-2.0-flash-thinking",
		"llama3.10", "qwen3.5", "mistral-large", "mistral_small",
		"claude-sonnet-4-5-1", "gpt-5-", "gpt-5@", "gpt-5-2025",
	}
	for _, name := range other {
		if m, warn := cat.Lookup(name); warn == "" || m.InputPerMTok != 0 {
			t.Errorf("%s matched a catalog entry: %+v", name, m)
		}
		if usd, ok := cat.Price(name, engine.Usage{InputTokens: 1_000_000}); ok {
			t.Errorf("%s priced at $%g: a budget on it would use another model's prices", name, usd)
		}
	}
}

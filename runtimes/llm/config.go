package llm

import (
	"fmt"
	"net/url"

	"github.com/kaizen-code/kz/internal/config"
)

// ConfigFrom maps a configured runtime entry (kind = "native" or
// "completion") onto a client configuration: provider, base_url,
// api_key_env and timeout. Retries keep their defaults.
func ConfigFrom(rc config.Runtime) (Config, error) {
	p, err := ParseProvider(rc.Provider)
	if err != nil {
		return Config{}, fmt.Errorf("provider: %w", err)
	}
	c := Config{Provider: p, BaseURL: rc.BaseURL, APIKeyEnv: rc.APIKeyEnv, APIKeyFile: rc.APIKeyFile, Timeout: rc.Timeout.Duration}
	if p == ProviderOpenAI {
		switch api := OpenAIAPI(rc.API); api {
		case OpenAIChat, OpenAIResponses:
			c.OpenAIAPI = api
		case "":
			// OpenAI itself gets its Responses API; every other base URL
			// (OpenRouter, Ollama, LiteLLM, vLLM) speaks Chat Completions.
			c.OpenAIAPI = OpenAIChat
			if isOpenAIItself(rc.BaseURL) {
				c.OpenAIAPI = OpenAIResponses
			}
		default:
			return Config{}, fmt.Errorf("api %q: use chat or responses", rc.API)
		}
	} else if rc.API != "" {
		return Config{}, fmt.Errorf("api %q: only provider openai has a choice of API", rc.API)
	}
	return c, nil
}

func isOpenAIItself(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && u.Hostname() == "api.openai.com"
}

// CatalogFrom returns the embedded catalog with the configured [[models]]
// entries applied, in order, so a later entry overrides an earlier one.
func CatalogFrom(models []config.Model) (*Catalog, error) {
	if len(models) == 0 {
		return DefaultCatalog(), nil
	}
	overrides := make([]ModelOverride, len(models))
	for i, m := range models {
		var p Provider
		if m.Provider != "" {
			var err error
			if p, err = ParseProvider(m.Provider); err != nil {
				return nil, fmt.Errorf("[[models]] %s: %w", m.ID, err)
			}
		}
		overrides[i] = ModelOverride{ID: m.ID, Provider: p, ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput,
			InputPerMTok: m.InputPerMTok, OutputPerMTok: m.OutputPerMTok, CacheReadPerMTok: m.CacheReadPerMTok,
			CacheWritePerMTok: m.CacheWritePerMTok, WebSearchPerCall: m.WebSearchPerCall, Tools: m.Tools, ParallelTools: m.ParallelTools, Vision: m.Vision,
			Reasoning: m.Reasoning, StructuredOutput: m.StructuredOutput}
	}
	cat, err := DefaultCatalog().WithOverrides(overrides)
	if err != nil {
		return nil, fmt.Errorf("[[models]]: %w", err)
	}
	return cat, nil
}

package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// searchAPI is a provider endpoint on 127.0.0.1 that answers every
// request with a recorded response of the real API and keeps the bodies
// it received.
type searchAPI struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	bodies []string
}

func newSearchAPI(t *testing.T, fixture string, status int) *searchAPI {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "websearch", fixture))
	if err != nil {
		t.Fatal(err)
	}
	s := &searchAPI{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.paths, s.bodies = append(s.paths, r.URL.Path), append(s.bodies, string(b))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func searchConfig(p llm.Provider, api llm.OpenAIAPI, url string) llm.Config {
	return llm.Config{Provider: p, OpenAIAPI: api, BaseURL: url, APIKeyEnv: "KZ_TEST_KEY",
		LookupEnv: func(k string) (string, bool) { return "test-key", k == "KZ_TEST_KEY" },
		Retry:     llm.RetryPolicy{MaxAttempts: 2, BaseDelay: 1e6, MaxDelay: 2e6}}
}

// TestWebSearchPerProvider (class: server-side search): each provider's
// official SDK asks for its own search tool with the query, and kz reads
// the answer and the pages from the provider's real response shape,
// without duplicates.
func TestWebSearchPerProvider(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p        llm.Provider
		api      llm.OpenAIAPI
		fixture  string
		model    string
		path     string
		toolJSON string
		answer   string
		sources  []llm.SearchSource
		usage    engine.Usage
		searches int64
	}{
		{llm.ProviderAnthropic, "", "anthropic.json", "claude-sonnet-4-5", "/v1/messages", `"type":"web_search_20250305"`,
			"I'll search for the release notes.Go 1.26 was released in February 2026.",
			[]llm.SearchSource{{Title: "Go 1.26 Release Notes - The Go Programming Language", URL: "https://go.dev/doc/go1.26"}, {Title: "Go 1.26 is released", URL: "https://go.dev/blog/go1.26"}},
			engine.Usage{InputTokens: 6039, OutputTokens: 931}, 1},
		{llm.ProviderOpenAI, llm.OpenAIResponses, "openai-responses.json", "gpt-5-mini", "/responses", `"type":"web_search"`,
			"Go 1.26 was released in February 2026 ([go.dev](https://go.dev/doc/go1.26)).",
			[]llm.SearchSource{{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"}, {Title: "Go 1.26 is released", URL: "https://go.dev/blog/go1.26"}},
			engine.Usage{InputTokens: 300, OutputTokens: 356, CacheReadTokens: 28}, 1},
		{llm.ProviderGemini, "", "gemini.json", "gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent", `"googleSearch":{}`,
			"Go 1.26 was released in February 2026.",
			[]llm.SearchSource{{Title: "go.dev", URL: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXE1"}, {Title: "golang.org", URL: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXE2"}},
			engine.Usage{InputTokens: 12, OutputTokens: 40}, 0},
	} {
		t.Run(string(c.p)+string(c.api), func(t *testing.T) {
			t.Parallel()
			api := newSearchAPI(t, c.fixture, http.StatusOK)
			cfg := searchConfig(c.p, c.api, api.URL)
			if err := cfg.SearchSupport(); err != nil {
				t.Fatal(err)
			}
			client, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := client.(llm.Searcher)
			if !ok {
				t.Fatalf("%T is no Searcher", client)
			}
			res, err := s.WebSearch(context.Background(), c.model, "go 1.26 release notes")
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != c.answer || !slices.Equal(res.Sources, c.sources) || res.Usage != c.usage || res.Searches != c.searches {
				t.Errorf("got %q %+v %+v %d searches\nwant %q %+v %+v %d", res.Answer, res.Sources, res.Usage, res.Searches,
					c.answer, c.sources, c.usage, c.searches)
			}
			if len(api.paths) != 1 || api.paths[0] != c.path {
				t.Fatalf("requests to %v, want one to %s", api.paths, c.path)
			}
			body := strings.ReplaceAll(api.bodies[0], " ", "")
			if !strings.Contains(body, c.toolJSON) || !strings.Contains(api.bodies[0], "go 1.26 release notes") {
				t.Errorf("request lacks the search tool %s or the query: %s", c.toolJSON, api.bodies[0])
			}
			if !json.Valid([]byte(api.bodies[0])) {
				t.Errorf("request is not JSON: %s", api.bodies[0])
			}
		})
	}
}

// TestWebSearchFailures: a search error inside a 200 answer and an HTTP
// error are errors, never an empty result; Chat Completions is no
// Searcher and SearchSupport says why.
func TestWebSearchFailures(t *testing.T) {
	t.Parallel()
	api := newSearchAPI(t, "anthropic-error.json", http.StatusOK)
	client, err := llm.New(searchConfig(llm.ProviderAnthropic, "", api.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.(llm.Searcher).WebSearch(context.Background(), "claude-sonnet-4-5", "x"); err == nil || !strings.Contains(err.Error(), "max_uses_exceeded") {
		t.Errorf("search error: %v", err)
	}
	bad := newSearchAPI(t, "anthropic.json", http.StatusUnauthorized)
	client, err = llm.New(searchConfig(llm.ProviderAnthropic, "", bad.URL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.(llm.Searcher).WebSearch(context.Background(), "claude-sonnet-4-5", "x")
	var re *engine.RuntimeError
	if err == nil || !errors.As(err, &re) || re.Kind != engine.ErrAuth {
		t.Errorf("401: %v", err)
	}
	chat := searchConfig(llm.ProviderOpenAI, llm.OpenAIChat, api.URL)
	if err := chat.SearchSupport(); err == nil || !strings.Contains(err.Error(), "Chat Completions") {
		t.Errorf("chat support: %v", err)
	}
	client, err = llm.New(chat)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := client.(llm.Searcher); ok {
		t.Error("the Chat Completions client claims to search")
	}
}

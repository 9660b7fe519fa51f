package runtimes

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/runtimes/native"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
)

// TestWebSearchConfig (class: enabling search): web_search = true gives a
// native runtime the tool and the web_search capability; a runtime that
// cannot honour it fails when kz starts, saying why.
func TestWebSearchConfig(t *testing.T) {
	t.Setenv("KZ_SEARCH_TEST_KEY", "k")
	base := config.Runtime{Kind: config.KindNative, Provider: "anthropic", APIKeyEnv: "KZ_SEARCH_TEST_KEY",
		BaseURL: "http://127.0.0.1:1", Models: []string{"claude-sonnet-4-5"}}
	on := base
	on.WebSearch = true
	e, err := buildLLM("web", on, Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Runtime.Capabilities("claude-sonnet-4-5").Set.Has(engine.NewCapSet(engine.CapWebSearch)) {
		t.Error("web_search = true: no web_search capability")
	}
	e, err = buildLLM("plain", base, Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if e.Runtime.Capabilities("claude-sonnet-4-5").Set.Has(engine.NewCapSet(engine.CapWebSearch)) {
		t.Error("web_search unset: the capability is declared")
	}
	for name, rc := range map[string]config.Runtime{
		"only a native runtime": {Kind: config.KindCompletion, Provider: "anthropic", APIKeyEnv: "KZ_SEARCH_TEST_KEY", Models: []string{"m"}, WebSearch: true},
		"Chat Completions":      {Kind: config.KindNative, Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Models: []string{"m"}, WebSearch: true},
		"names no model":        {Kind: config.KindNative, Provider: "gemini", APIKeyEnv: "KZ_SEARCH_TEST_KEY", WebSearch: true},
	} {
		if _, err := buildLLM("bad", rc, Options{Workspace: t.TempDir()}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEndToEndWebSearch drives web_search through the native loop (the
// fake model API asks for the search), the real gate and a real session;
// the search itself goes through Anthropic's SDK to a recorded response.
// Allowed by a WebSearch rule, the pages reach the model and the event
// history; asked and refused, or denied by a rule, the provider never
// hears of the query.
func TestEndToEndWebSearch(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fixture, err := os.ReadFile(filepath.Join("llm", "testdata", "websearch", "anthropic.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		rules  permission.Rules
		search bool
	}{
		{"allowed by rule", permission.Rules{Allow: []string{"WebSearch"}}, true},
		{"asked, the person says no", permission.Rules{}, false},
		{"denied by rule", permission.Rules{Allow: []string{"WebSearch"}, Deny: []string{"WebSearch"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var searches atomic.Int32
			var query atomic.Value
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				searches.Add(1)
				b, _ := io.ReadAll(r.Body)
				query.Store(string(b))
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(fixture)
			}))
			defer api.Close()
			sc := llmtest.New(t, llm.ProviderAnthropic).Config()
			sc.BaseURL = api.URL
			client, err := llm.New(sc)
			if err != nil {
				t.Fatal(err)
			}
			fake := llmtest.New(t, llm.ProviderAnthropic,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "s1", Name: "web_search", Args: `{"query":"go 1.26 release notes"}`}}},
				llmtest.Reply{Text: "Go 1.26 came out in February."},
			)
			reg := tools.NewBuiltinRegistry()
			if err := reg.Register(tools.WebSearch{Searcher: searcher{s: client.(llm.Searcher), model: "claude-sonnet-4-5", catalog: llm.DefaultCatalog()}}); err != nil {
				t.Fatal(err)
			}
			rt, err := native.New(native.Config{LLM: fake.Config(), Models: []string{"claude-sonnet-4-5"}, WebSearch: true,
				Tools: native.PerSessionTools(reg, nil, nil, nil)})
			if err != nil {
				t.Fatal(err)
			}
			gate, err := permission.New(permission.Options{User: c.rules, Home: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			h := clitest.NewHarness(t, t.TempDir(), []engine.RuntimeEntry{{Runtime: rt}},
				clitest.Options{Gate: gate, Mode: engine.ModeAnalysisOnly, Answer: func(engine.Event) engine.Answer {
					return engine.Answer{Decision: engine.DecisionDeny, Reason: "no"}
				}})
			j := h.Journal
			final, err := h.Session.RunTurn(context.Background(), "what is new in go 1.26?")
			if err != nil || final.Status != "complete" {
				t.Fatalf("turn: %v %+v", err, final)
			}
			fin := j.OfType(engine.EventToolCallFinished)
			if len(fin) != 1 {
				t.Fatalf("tool_call_finished: %+v", fin)
			}
			back := fake.Requests()[1]
			if !c.search {
				if searches.Load() != 0 || !fin[0].IsError || back.Contains("go.dev/doc") {
					t.Errorf("a refused search ran: %d requests, result %s", searches.Load(), fin[0].Output)
				}
				return
			}
			want := "1. Go 1.26 Release Notes - The Go Programming Language\n   https://go.dev/doc/go1.26\n2. Go 1.26 is released\n   https://go.dev/blog/go1.26\n"
			if fin[0].IsError || !strings.Contains(fin[0].Output, want) || !strings.Contains(fin[0].Output, "UNTRUSTED WEB CONTENT") {
				t.Errorf("result:\n%s", fin[0].Output)
			}
			if searches.Load() != 1 || !strings.Contains(query.Load().(string), "go 1.26 release notes") {
				t.Errorf("searches %d, body %v", searches.Load(), query.Load())
			}
			if final.Usage == nil || final.Usage.InputTokens != 6039 || final.Usage.OutputTokens < 931 || final.CostUSD < 0.018 {
				t.Errorf("the search's tokens are not in the turn's usage and cost: %+v %v", final.Usage, final.CostUSD)
			}
			if !back.Contains("https://go.dev/blog/go1.26") {
				t.Errorf("the pages did not reach the model: %s", back.Raw)
			}
		})
	}
}

// TestSearchPricedPerSearch (class: per-search fees): a search is priced
// at its tokens plus the provider's fee for each search it reports
// (Anthropic's web_search_requests, the Responses API's web_search_call
// items), from the catalog; a model the catalog does not price costs
// nothing rather than a guess.
func TestSearchPricedPerSearch(t *testing.T) {
	for _, c := range []struct {
		p       llm.Provider
		api     llm.OpenAIAPI
		fixture string
		model   string
		usage   engine.Usage
	}{
		{llm.ProviderAnthropic, "", "anthropic.json", "claude-sonnet-4-5", engine.Usage{InputTokens: 6039, OutputTokens: 931}},
		{llm.ProviderOpenAI, llm.OpenAIResponses, "openai-responses.json", "gpt-5-mini", engine.Usage{InputTokens: 300, OutputTokens: 356, CacheReadTokens: 28}},
	} {
		fixture, err := os.ReadFile(filepath.Join("llm", "testdata", "websearch", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(fixture)
		}))
		cfg := llm.Config{Provider: c.p, OpenAIAPI: c.api, BaseURL: api.URL, APIKeyEnv: "KZ_TEST_KEY",
			LookupEnv: func(k string) (string, bool) { return "test-key", k == "KZ_TEST_KEY" }}
		client, err := llm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cat := llm.DefaultCatalog()
		info, _ := cat.Lookup(c.model)
		if info.WebSearchPerCall != 0.01 {
			t.Errorf("%s: the catalog prices a search at %v, want $10 per 1,000", c.model, info.WebSearchPerCall)
		}
		res, err := searcher{s: client.(llm.Searcher), model: c.model, catalog: cat}.WebSearch(context.Background(), "go 1.26")
		if err != nil {
			t.Fatal(err)
		}
		// One search in each recorded response.
		want := info.Cost(c.usage) + 0.01
		if res.Usage != c.usage || res.CostUSD < want-1e-12 || res.CostUSD > want+1e-12 {
			t.Errorf("%s: usage %+v cost %v, want %+v %v", c.p, res.Usage, res.CostUSD, c.usage, want)
		}
		unpriced, err := searcher{s: client.(llm.Searcher), model: "no-such-model", catalog: cat}.WebSearch(context.Background(), "go 1.26")
		if err != nil || unpriced.CostUSD != 0 {
			t.Errorf("%s: an unpriced model's search cost %v (%v)", c.p, unpriced.CostUSD, err)
		}
		api.Close()
	}
}

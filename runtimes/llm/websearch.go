package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"github.com/kaizen-code/kz/engine"
)

// Searcher is a client whose provider runs web searches on its own
// servers: Anthropic's web_search_20250305 server tool, the Responses
// API's web_search tool, Gemini's Google Search grounding. OpenAI's Chat
// Completions API has no search tool, so that client is no Searcher.
//
// kz asks for a search in a request of its own, with only the search tool
// offered, so that each search is one tool call of the conversation that
// the gate judges (with its query) before anything is sent.
type Searcher interface {
	WebSearch(ctx context.Context, model, query string) (SearchResult, error)
}

// SearchResult is what one search found: the model's answer written from
// the results, and the pages it drew on, in the order the provider gave.
type SearchResult struct {
	Answer  string
	Sources []SearchSource
	Usage   engine.Usage
	// Searches counts the searches the provider ran and bills one by one
	// (Anthropic's usage.server_tool_use.web_search_requests, the
	// Responses API's web_search_call items). Gemini bills grounding per
	// request, not per search, and reports none here.
	Searches int64
}

// SearchSource is one page a search found.
type SearchSource struct {
	Title string
	URL   string
}

// maxSearches bounds the searches one web_search call may run on the
// provider's side.
const maxSearches = 3

// searchPrompt asks for an answer from the search results only.
func searchPrompt(query string) string {
	return "Search the web for: " + query + "\n\nAnswer briefly from the search results, citing the pages you used."
}

// SearchSupport says why a configuration's provider offers no server-side
// web search, or nil when it does.
func (c Config) SearchSupport() error {
	switch {
	case c.Provider == ProviderAnthropic, c.Provider == ProviderGemini:
		return nil
	case c.Provider == ProviderOpenAI && c.OpenAIAPI == OpenAIResponses:
		return nil
	case c.Provider == ProviderOpenAI:
		return fmt.Errorf("provider openai over the Chat Completions API has no server-side web search; set api = \"responses\" (OpenAI itself)")
	}
	return fmt.Errorf("provider %q has no server-side web search", c.Provider)
}

// addSource appends a source unless its URL is already listed.
func addSource(out []SearchSource, title, url string) []SearchSource {
	if url == "" {
		return out
	}
	for _, s := range out {
		if s.URL == url {
			return out
		}
	}
	return append(out, SearchSource{Title: strings.TrimSpace(title), URL: url})
}

// WebSearch implements Searcher with the web_search_20250305 server tool.
func (a *anthropicClient) WebSearch(ctx context.Context, model, query string) (SearchResult, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 2048,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(searchPrompt(query)))},
		Tools:     []anthropic.ToolUnionParam{{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{MaxUses: anthropic.Int(maxSearches)}}},
	}
	return searchWithRetry(ctx, a.cfg, model, func(actx context.Context) (SearchResult, error) {
		msg, err := a.c.Messages.New(actx, params)
		if err != nil {
			return SearchResult{}, err
		}
		var res SearchResult
		var text strings.Builder
		for _, b := range msg.Content {
			switch v := b.AsAny().(type) {
			case anthropic.WebSearchToolResultBlock:
				if e := v.Content.AsResponseWebSearchToolResultError(); e.ErrorCode != "" {
					return SearchResult{}, fmt.Errorf("web search failed: %s", e.ErrorCode)
				}
				for _, r := range v.Content.OfWebSearchResultBlockArray {
					res.Sources = addSource(res.Sources, r.Title, r.URL)
				}
			case anthropic.TextBlock:
				text.WriteString(v.Text)
			}
		}
		res.Answer = text.String()
		res.Usage = engine.Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens,
			CacheReadTokens: msg.Usage.CacheReadInputTokens, CacheWriteTokens: msg.Usage.CacheCreationInputTokens}
		res.Searches = msg.Usage.ServerToolUse.WebSearchRequests
		return res, nil
	}, classifyAnthropic)
}

// WebSearch implements Searcher with the Responses API's web_search tool;
// the pages come from the answer's url_citation annotations.
func (o *responsesClient) WebSearch(ctx context.Context, model, query string) (SearchResult, error) {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(model), Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(searchPrompt(query))},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
	}
	return searchWithRetry(ctx, o.cfg, model, func(actx context.Context) (SearchResult, error) {
		r, err := o.c.Responses.New(actx, params)
		if err != nil {
			return SearchResult{}, err
		}
		var res SearchResult
		for _, item := range r.Output {
			if item.Type == "web_search_call" {
				res.Searches++
			}
			for _, c := range item.Content {
				for _, an := range c.Annotations {
					if an.Type == "url_citation" {
						res.Sources = addSource(res.Sources, an.Title, an.URL)
					}
				}
			}
		}
		res.Answer = r.OutputText()
		res.Usage = engine.Usage{InputTokens: r.Usage.InputTokens - r.Usage.InputTokensDetails.CachedTokens,
			OutputTokens: r.Usage.OutputTokens, CacheReadTokens: r.Usage.InputTokensDetails.CachedTokens}
		return res, nil
	}, classifyOpenAI)
}

// WebSearch implements Searcher with Google Search grounding; the pages
// are the grounding chunks of the answer.
func (g *geminiClient) WebSearch(ctx context.Context, model, query string) (SearchResult, error) {
	conf := &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}
	contents := []*genai.Content{genai.NewContentFromText(searchPrompt(query), genai.RoleUser)}
	return searchWithRetry(ctx, g.cfg, model, func(actx context.Context) (SearchResult, error) {
		r, err := g.c.Models.GenerateContent(actx, model, contents, conf)
		if err != nil {
			return SearchResult{}, err
		}
		var res SearchResult
		for _, c := range r.Candidates {
			if c.GroundingMetadata == nil {
				continue
			}
			for _, ch := range c.GroundingMetadata.GroundingChunks {
				if ch != nil && ch.Web != nil {
					res.Sources = addSource(res.Sources, ch.Web.Title, ch.Web.URI)
				}
			}
		}
		res.Answer = r.Text()
		if u := r.UsageMetadata; u != nil {
			res.Usage = engine.Usage{InputTokens: int64(u.PromptTokenCount - u.CachedContentTokenCount),
				OutputTokens: int64(u.CandidatesTokenCount + u.ThoughtsTokenCount), CacheReadTokens: int64(u.CachedContentTokenCount)}
		}
		return res, nil
	}, classifyGemini)
}

// searchWithRetry runs a search under the client's retry policy. A search
// streams nothing, so every retryable failure may be retried.
func searchWithRetry(ctx context.Context, cfg Config, model string, run func(context.Context) (SearchResult, error),
	classify func(error, *httpRecord) *engine.RuntimeError) (SearchResult, error) {
	var out SearchResult
	_, err := withRetry(ctx, cfg, model, func(actx context.Context, _ *httpRecord) (Response, bool, error) {
		r, err := run(actx)
		if err == nil {
			out = r
		}
		return Response{}, false, err
	}, classify)
	if err != nil {
		return SearchResult{}, err
	}
	return out, nil
}

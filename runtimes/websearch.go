package runtimes

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/tools"
)

// webSearchTool returns the web_search tool of a runtime whose entry sets
// web_search = true, or none. A setting the runtime cannot honour is a
// configuration error, said when kz starts rather than when the model
// first searches: a completion runtime has no tools, and a provider
// without server-side search has nothing to offer. A client that cannot be
// built (no API key) gives no tool: the runtime is unavailable anyway and
// says why.
func webSearchTool(rc config.Runtime, lc llm.Config, catalog *llm.Catalog) ([]tools.Tool, error) {
	if !rc.WebSearch {
		return nil, nil
	}
	if rc.Kind != config.KindNative {
		return nil, errors.New("web_search: only a native runtime runs tools")
	}
	if err := lc.SearchSupport(); err != nil {
		return nil, fmt.Errorf("web_search: %w", err)
	}
	if len(rc.Models) == 0 {
		return nil, errors.New("web_search: the runtime names no model to search with")
	}
	c, err := llm.New(lc)
	if err != nil {
		return nil, nil
	}
	s, ok := c.(llm.Searcher)
	if !ok {
		return nil, fmt.Errorf("web_search: the %s client cannot search", lc.Provider)
	}
	if catalog == nil {
		catalog = llm.DefaultCatalog()
	}
	return []tools.Tool{tools.WebSearch{Searcher: searcher{s: s, model: rc.Models[0], catalog: catalog}}}, nil
}

// searcher binds an LLM client's search to the runtime's default model,
// priced by the catalog: the request's tokens and the provider's fee for
// each search it ran.
type searcher struct {
	s       llm.Searcher
	model   string
	catalog *llm.Catalog
}

// WebSearch implements tools.WebSearcher.
func (a searcher) WebSearch(ctx context.Context, query string) (tools.SearchResults, error) {
	r, err := a.s.WebSearch(ctx, a.model, query)
	if err != nil {
		return tools.SearchResults{}, err
	}
	out := tools.SearchResults{Answer: r.Answer, Usage: r.Usage, Model: a.model}
	if a.catalog != nil {
		if info, _ := a.catalog.Lookup(a.model); info.InputPerMTok > 0 || info.OutputPerMTok > 0 || info.WebSearchPerCall > 0 {
			out.CostUSD = info.SearchCost(r.Usage, r.Searches)
		}
	}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, tools.SearchSource{Title: s.Title, URL: s.URL})
	}
	return out, nil
}

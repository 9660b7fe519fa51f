package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/kaizen-code/kz/engine"
)

// WebSearch is the web_search tool: a search the model's provider runs on
// its own servers (see runtimes/llm Searcher). It is registered only for a
// runtime whose configuration enables it and whose provider offers it.
// Each call is one gate decision about its query (the WebSearch rule,
// asked by default) before anything is sent, and it changes nothing on the
// machine, so it is offered in every mode.
type WebSearch struct {
	Searcher WebSearcher
}

// WebSearcher runs one search; the runtime binds it to its provider and
// model.
type WebSearcher interface {
	WebSearch(ctx context.Context, query string) (SearchResults, error)
}

// SearchResults is what a search found: the provider model's answer and
// the pages it drew on, with the tokens the search request used and the
// model that used them.
type SearchResults struct {
	Answer  string
	Sources []SearchSource
	Usage   engine.Usage
	Model   string
	// CostUSD is the price of Usage; zero leaves pricing to the session.
	CostUSD float64
}

// SearchSource is one page a search found.
type SearchSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// maxQuery bounds a search query; providers take a few hundred characters.
const maxQuery = 500

type webSearchInput struct {
	Query string `json:"query"`
}

// Spec implements Tool.
func (WebSearch) Spec() ToolSpec {
	return ToolSpec{Name: "web_search", Description: description("web_search"), ReadOnly: true, ConcurrencySafe: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to search the web for"}},` +
			`"required":["query"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (w WebSearch) Prepare(_ context.Context, _ *Env, input json.RawMessage) (Call, error) {
	var in webSearchInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return nil, errors.New("query is empty")
	case len(q) > maxQuery:
		return nil, fmt.Errorf("query is %d bytes; the limit is %d", len(q), maxQuery)
	case strings.ContainsFunc(q, unicode.IsControl):
		return nil, errors.New("query contains control characters")
	case w.Searcher == nil:
		return nil, errors.New("this runtime has no web search")
	}
	return &webSearchCall{searcher: w.Searcher, query: q}, nil
}

type webSearchCall struct {
	searcher WebSearcher
	query    string
}

// Request implements Call: the gate sees the query in the input.
func (c *webSearchCall) Request() engine.PermissionRequest { return engine.PermissionRequest{} }

// Run implements Call. The result lists the pages first, as the card
// shows them, then the answer; titles and answer come from the web, so
// all of it is inside the untrusted block.
func (c *webSearchCall) Run(ctx context.Context, rc *RunContext) (string, error) {
	res, err := c.searcher.WebSearch(ctx, c.query)
	if err != nil {
		return "", fmt.Errorf("web search for %q: %w", c.query, err)
	}
	if !res.Usage.IsZero() {
		// The search is a model request of its own: its tokens count
		// towards the turn's usage, cost and budget like the loop's
		// (the session prices them by model).
		u := res.Usage
		rc.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &u, Model: res.Model, CostUSD: res.CostUSD})
	}
	var body strings.Builder
	if len(res.Sources) == 0 {
		body.WriteString("No pages found.\n")
	}
	for i, s := range res.Sources {
		fmt.Fprintf(&body, "%d. %s\n   %s\n", i+1, oneLine(s.Title), oneLine(s.URL))
	}
	if a := strings.TrimSpace(res.Answer); a != "" {
		body.WriteString("\n" + a + "\n")
	}
	open, closing := untrustedMarkers(body.String())
	return fmt.Sprintf("Web search for %q: %d pages\n%s\n%s%s%s", c.query, len(res.Sources), untrustedLabel, open, body.String(), closing), nil
}

// oneLine folds a title or URL from the web onto one line.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

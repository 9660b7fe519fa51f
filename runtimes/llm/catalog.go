package llm

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
)

// ModelInfo is what kz knows about one model: limits, prices in USD per
// million tokens, and capability flags.
type ModelInfo struct {
	ID                string   `json:"id"`
	Provider          Provider `json:"provider,omitempty"`
	Aliases           []string `json:"aliases,omitempty"`
	Local             bool     `json:"local,omitempty"`
	ContextWindow     int      `json:"context_window"`
	MaxOutput         int      `json:"max_output"`
	InputPerMTok      float64  `json:"input_per_mtok,omitempty"`
	OutputPerMTok     float64  `json:"output_per_mtok,omitempty"`
	CacheReadPerMTok  float64  `json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64  `json:"cache_write_per_mtok,omitempty"`
	Tools             bool     `json:"tools"`
	ParallelTools     bool     `json:"parallel_tools"`
	Vision            bool     `json:"vision"`
	Reasoning         bool     `json:"reasoning"`
	StructuredOutput  bool     `json:"structured_output"`
	LatencyMS         int      `json:"latency_ms,omitempty"`
	// WebSearchPerCall is the USD the provider charges per server-side
	// web search, on top of the tokens (Anthropic's web search tool and
	// the Responses API's web_search tool bill each search).
	WebSearchPerCall float64 `json:"web_search_per_call,omitempty"`
}

// Cost prices a usage with this model's prices.
func (m ModelInfo) Cost(u engine.Usage) float64 {
	return (float64(u.InputTokens)*m.InputPerMTok + float64(u.OutputTokens)*m.OutputPerMTok +
		float64(u.CacheReadTokens)*m.CacheReadPerMTok + float64(u.CacheWriteTokens)*m.CacheWritePerMTok) / 1e6
}

// SearchCost prices a web search request: its tokens and the searches
// the provider ran, each at the per-search fee.
func (m ModelInfo) SearchCost(u engine.Usage, searches int64) float64 {
	return m.Cost(u) + float64(max(searches, 0))*m.WebSearchPerCall
}

// ModelOverride is one model entry of user configuration. Nil fields keep
// the catalog's value (or the unknown-model default for a new model). The
// lead maps a TOML [[models]] table onto it field by field.
type ModelOverride struct {
	ID                string
	Provider          Provider
	ContextWindow     *int
	MaxOutput         *int
	InputPerMTok      *float64
	OutputPerMTok     *float64
	CacheReadPerMTok  *float64
	CacheWritePerMTok *float64
	WebSearchPerCall  *float64
	Tools             *bool
	ParallelTools     *bool
	Vision            *bool
	Reasoning         *bool
	StructuredOutput  *bool
	LatencyMS         *int
}

// Catalog looks models up by id, alias, or an id with a snapshot suffix.
type Catalog struct {
	models []ModelInfo
	// configured marks ids that came from user configuration, which are
	// known even though they are not in the embedded file.
	configured map[string]bool
}

//go:embed catalog.json
var catalogJSON []byte

var (
	defaultOnce    sync.Once
	defaultCatalog *Catalog
	defaultErr     error
)

// DefaultCatalog returns the embedded catalog. It panics only if the
// embedded file is broken, which the package tests rule out.
func DefaultCatalog() *Catalog {
	defaultOnce.Do(func() {
		defaultCatalog, defaultErr = ParseCatalog(catalogJSON)
	})
	if defaultErr != nil {
		panic(defaultErr)
	}
	return defaultCatalog
}

// ParseCatalog reads a catalog in the embedded file's format.
func ParseCatalog(data []byte) (*Catalog, error) {
	var f struct {
		Models []ModelInfo `json:"models"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("model catalog: %w", err)
	}
	seen := map[string]bool{}
	for _, m := range f.Models {
		if m.ID == "" || m.ContextWindow <= 0 || m.MaxOutput <= 0 {
			return nil, fmt.Errorf("model catalog: entry %q needs an id, context_window and max_output", m.ID)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("model catalog: duplicate id %q", m.ID)
		}
		seen[m.ID] = true
	}
	return &Catalog{models: f.Models}, nil
}

// UnknownModel is the conservative entry of a model kz does not know: a
// small context window and output limit, no price (reported as zero cost),
// no vision, no parallel tool calls and no JSON-schema mode. Tool calling is
// assumed because every current API model has it; a model that lacks it
// needs `tools = false` in the configuration.
func UnknownModel(id string) ModelInfo {
	return ModelInfo{ID: id, ContextWindow: 32768, MaxOutput: 4096, Tools: true}
}

// WithOverrides returns a copy of the catalog with user entries applied.
func (c *Catalog) WithOverrides(overrides []ModelOverride) (*Catalog, error) {
	out := &Catalog{models: append([]ModelInfo(nil), c.models...), configured: map[string]bool{}}
	for id := range c.configured {
		out.configured[id] = true
	}
	for _, o := range overrides {
		if o.ID == "" {
			return nil, fmt.Errorf("model override without an id")
		}
		i := out.index(o.ID, true)
		if i < 0 {
			m := UnknownModel(o.ID)
			if base := out.index(o.ID, false); base >= 0 {
				// A new id that extends a known one (a fine-tune, a tag)
				// starts from the known entry.
				m = out.models[base]
				m.ID, m.Aliases = o.ID, nil
			}
			out.models = append(out.models, m)
			i = len(out.models) - 1
		}
		m := &out.models[i]
		if o.Provider != "" {
			m.Provider = o.Provider
		}
		setInt(&m.ContextWindow, o.ContextWindow)
		setInt(&m.MaxOutput, o.MaxOutput)
		setInt(&m.LatencyMS, o.LatencyMS)
		setF(&m.InputPerMTok, o.InputPerMTok)
		setF(&m.OutputPerMTok, o.OutputPerMTok)
		setF(&m.CacheReadPerMTok, o.CacheReadPerMTok)
		setF(&m.CacheWritePerMTok, o.CacheWritePerMTok)
		setF(&m.WebSearchPerCall, o.WebSearchPerCall)
		setB(&m.Tools, o.Tools)
		setB(&m.ParallelTools, o.ParallelTools)
		setB(&m.Vision, o.Vision)
		setB(&m.Reasoning, o.Reasoning)
		setB(&m.StructuredOutput, o.StructuredOutput)
		if m.ContextWindow <= 0 || m.MaxOutput <= 0 {
			return nil, fmt.Errorf("model %q: context_window and max_output must be positive", o.ID)
		}
		out.configured[o.ID] = true
	}
	return out, nil
}

// Lookup returns the entry of a model. For an unknown model it returns
// UnknownModel and a warning the caller shows to the person.
func (c *Catalog) Lookup(model string) (ModelInfo, string) {
	if i := c.index(model, false); i >= 0 {
		m := c.models[i]
		m.ID = model
		return m, ""
	}
	return UnknownModel(model), fmt.Sprintf("model %q is not in kz's catalog: assuming a %d-token context, %d output tokens, tool calling, and no price (cost shows as 0); set its limits and prices under [[models]] in the config",
		model, UnknownModel(model).ContextWindow, UnknownModel(model).MaxOutput)
}

// Models lists the catalog's entries.
func (c *Catalog) Models() []ModelInfo { return append([]ModelInfo(nil), c.models...) }

// index finds a model: exact id or alias first, then (unless exact) the
// longest id that the name, after dropping a routing prefix such as
// "anthropic/" (OpenRouter), extends only by a snapshot suffix: a dated
// snapshot (claude-sonnet-4-5-20250929) or a local tag (llama3.1:8b) is
// the same model, while gpt-5.5 or gpt-5-pro are other models that an
// older id must not price.
func (c *Catalog) index(name string, exact bool) int {
	for i, m := range c.models {
		if m.ID == name {
			return i
		}
		for _, a := range m.Aliases {
			if a == name {
				return i
			}
		}
	}
	if exact {
		return -1
	}
	base := name
	if j := strings.LastIndex(base, "/"); j >= 0 {
		base = base[j+1:]
	}
	best, bestLen := -1, 0
	for i, m := range c.models {
		for _, id := range append([]string{m.ID}, m.Aliases...) {
			if len(id) > bestLen && strings.HasPrefix(base, id) && snapshotSuffix().MatchString(base[len(id):]) {
				best, bestLen = i, len(id)
			}
		}
	}
	return best
}

// snapshotSuffix matches what may follow a catalog id in another name of
// the same model: nothing; an Ollama tag (":8b", ":32b-instruct-q4_K_M");
// or one or more "-" or "@" parts that each name a snapshot of it rather
// than another model: a date (-20250929, -2024-08-06, -06-05, -09-2025,
// @20250929 on Vertex), a snapshot number (-001) or month and day (-0613), a release
// channel (-latest, -preview, -exp) or a provider version (-v1:0). A
// version step (".5", "-5"), a size or tier ("-mini", "-pro", "-lite")
// or anything else is another model, which is not in the catalog unless
// it has an entry of its own.
var snapshotSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:|:.+|(?:[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{2}-\d{2}|\d{2}-\d{4}|\d{3}|(?:0[1-9]|1[0-2])[0-3]\d|latest|preview|exp|v\d+(?::\d+)?))+)$`)
})

func setInt(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func setF(dst *float64, v *float64) {
	if v != nil {
		*dst = *v
	}
}

func setB(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

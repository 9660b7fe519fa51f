package llm

import (
	"cmp"

	"github.com/kaizen-code/kz/engine"
)

// Price implements engine.Pricer: what u costs on model at the catalog's
// prices, with input, output, cache-read and cache-write tokens each at
// their own price. A model without cache prices has its cache tokens
// priced as input, which is what a provider without a cache discount
// charges. ok is false for a model the catalog does not know, or knows
// without a price (a [[models]] entry that sets only limits): kz cannot
// say what its tokens cost. A local model is priced, at zero.
func (c *Catalog) Price(model string, u engine.Usage) (usd float64, ok bool) {
	if model == "" {
		return 0, false
	}
	i := c.index(model, false)
	if i < 0 {
		return 0, false
	}
	m := c.models[i]
	if !m.Local && m.InputPerMTok == 0 && m.OutputPerMTok == 0 {
		return 0, false
	}
	m.CacheReadPerMTok = cmp.Or(m.CacheReadPerMTok, m.InputPerMTok)
	m.CacheWritePerMTok = cmp.Or(m.CacheWritePerMTok, m.InputPerMTok)
	return m.Cost(u), true
}

package app

import (
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// Candidates turns runtime entries into what the selector compares, in
// the entries' order (the configuration's, then the presets'), which
// breaks ties. A runtime that declares no price or latency hint for its
// default model (a CLI runtime) gets the catalog's, so that
// cost_optimized and latency_optimized compare every runtime whose model
// kz knows.
func (e *Env) Candidates(entries []engine.RuntimeEntry) []engine.Candidate {
	cat, err := llm.CatalogFrom(e.Config.Models)
	if err != nil {
		// The configuration was validated when it was loaded; without a
		// catalog the runtimes keep their own hints.
		cat = nil
	}
	cands := make([]engine.Candidate, 0, len(entries))
	for _, x := range entries {
		m := ""
		if len(x.Models) > 0 {
			m = x.Models[0]
		}
		caps := x.Runtime.Capabilities(m)
		if cat != nil && m != "" {
			if _, ok := cat.Price(m, engine.Usage{}); ok && caps.InputPerMTok == 0 && caps.OutputPerMTok == 0 {
				info, _ := cat.Lookup(m)
				caps.InputPerMTok, caps.OutputPerMTok = info.InputPerMTok, info.OutputPerMTok
			}
			if info, warn := cat.Lookup(m); warn == "" && caps.LatencyMS == 0 {
				caps.LatencyMS = info.LatencyMS
			}
		}
		cands = append(cands, engine.Candidate{Runtime: x.Runtime.Name(), Model: m, Capabilities: caps, Unavailable: x.Unavailable})
	}
	return cands
}

// Picks says which runtime each strategy would pick for each mode with
// this configuration (its default_runtime is the preferred one), for kz
// runtimes --json. A strategy that finds no runtime for a mode is absent
// from that mode's map.
func (e *Env) Picks(entries []engine.RuntimeEntry) map[engine.Strategy]map[engine.Mode]string {
	cands := e.Candidates(entries)
	out := map[engine.Strategy]map[engine.Mode]string{}
	for _, st := range engine.Strategies {
		picks := map[engine.Mode]string{}
		for _, mode := range engine.Modes {
			if c, err := engine.Select(st, mode, e.Config.DefaultRuntime, cands); err == nil {
				picks[mode] = c.Runtime
			}
		}
		out[st] = picks
	}
	return out
}

package claudecode

import (
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/agentcli"
)

// primeBudget bounds the rendered transcript a new Claude session is primed
// with, in bytes: the most recent entries are kept.
const primeBudget = agentcli.PrimeBudget

// primePrompt prefixes the prompt with a bounded rendering of kz's
// runtime-neutral transcript, for a Claude session that did not see the
// earlier turns.
func primePrompt(history []engine.TranscriptEntry, prompt string, budget int) string {
	return agentcli.PrimePrompt(history, prompt, budget)
}

func renderHistory(history []engine.TranscriptEntry, budget int) string {
	return agentcli.RenderHistory(history, budget)
}

// primeImages adds to a primed first message the images the person sent
// earlier in the history, which the rendered transcript can only name: a
// fresh Claude session would otherwise be asked about images it never
// saw. The newest ones are kept when there are more than a message may
// carry.
func primeImages(history []engine.TranscriptEntry, current []engine.Image) []engine.Image {
	var out []engine.Image
	for _, e := range history {
		if e.Kind == engine.EntryUser {
			out = append(out, e.Images...)
		}
	}
	out = append(out, current...)
	if len(out) > engine.MaxImages {
		out = out[len(out)-engine.MaxImages:]
	}
	return out
}

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

// primeImages is agentcli.PrimeImages: the history's images go with a
// primed first message.
func primeImages(history []engine.TranscriptEntry, current []engine.Image) []engine.Image {
	return agentcli.PrimeImages(history, current)
}

package acp

import (
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/agentcli"
)

// primeBudget bounds the transcript a fresh CLI session is primed with.
const primeBudget = agentcli.PrimeBudget

func buildEnv(defaults, cfgEnv []string) []string { return agentcli.BuildEnv(defaults, cfgEnv) }

func classify(msg string) engine.ErrorKind { return agentcli.Classify(msg) }

func primePrompt(history []engine.TranscriptEntry, prompt string, budget int) string {
	return agentcli.PrimePrompt(history, prompt, budget)
}

package llm

import (
	"fmt"
	"strconv"
	"strings"
)

// ReasoningEffort is how hard a model is asked to think before it answers.
type ReasoningEffort string

// Efforts. ReasoningOff asks for no reasoning at all (the zero value leaves
// the provider's default).
const (
	ReasoningOff    ReasoningEffort = "off"
	ReasoningLow    ReasoningEffort = "low"
	ReasoningMedium ReasoningEffort = "medium"
	ReasoningHigh   ReasoningEffort = "high"
)

// ReasoningSetting is the reasoning setting of a request: an effort, or a budget
// of thinking tokens. Each provider is asked in its own terms: Anthropic
// and Gemini take a budget (an effort maps to one), OpenAI an effort (a
// budget maps to one). The zero value asks for nothing.
type ReasoningSetting struct {
	Effort ReasoningEffort
	// Budget, when positive, is the thinking budget in tokens.
	Budget int
}

// Budgets an effort stands for where a provider takes tokens.
const (
	lowBudget    = 2048
	mediumBudget = 8192
	highBudget   = 24576
	// minBudget is Anthropic's smallest thinking budget.
	minBudget = 1024
)

// ParseReasoning reads a reasoning setting: "off", "low", "medium",
// "high", or a number of budget tokens (at least 1024). The empty string
// is the zero setting.
func ParseReasoning(s string) (ReasoningSetting, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch ReasoningEffort(s) {
	case "":
		return ReasoningSetting{}, nil
	case ReasoningOff, "none":
		return ReasoningSetting{Effort: ReasoningOff}, nil
	case ReasoningLow, ReasoningMedium, ReasoningHigh:
		return ReasoningSetting{Effort: ReasoningEffort(s)}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return ReasoningSetting{}, fmt.Errorf("reasoning %q: use off, low, medium, high or a number of budget tokens", s)
	}
	if n < minBudget {
		return ReasoningSetting{}, fmt.Errorf("reasoning %d: a budget is at least %d tokens", n, minBudget)
	}
	return ReasoningSetting{Budget: n}, nil
}

// String writes the setting back as ParseReasoning reads it.
func (r ReasoningSetting) String() string {
	if r.Budget > 0 {
		return strconv.Itoa(r.Budget)
	}
	return string(r.Effort)
}

// Enabled reports whether the setting asks for reasoning.
func (r ReasoningSetting) Enabled() bool {
	return r.Budget > 0 || r.Effort == ReasoningLow || r.Effort == ReasoningMedium || r.Effort == ReasoningHigh
}

// Tokens is the setting as a thinking budget (zero when disabled).
func (r ReasoningSetting) Tokens() int {
	switch {
	case r.Budget > 0:
		return max(r.Budget, minBudget)
	case r.Effort == ReasoningLow:
		return lowBudget
	case r.Effort == ReasoningMedium:
		return mediumBudget
	case r.Effort == ReasoningHigh:
		return highBudget
	}
	return 0
}

// Level is the setting as an effort ("" when disabled): a budget maps to
// the effort whose budget it reaches.
func (r ReasoningSetting) Level() ReasoningEffort {
	if r.Budget <= 0 {
		if r.Enabled() {
			return r.Effort
		}
		return ""
	}
	switch {
	case r.Budget >= highBudget:
		return ReasoningHigh
	case r.Budget >= mediumBudget:
		return ReasoningMedium
	}
	return ReasoningLow
}

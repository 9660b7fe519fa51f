package app

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kaizen-code/kz/engine"
)

// NoRuntimeHint is the one line kz -p prints after a NoRuntimeError:
// the two ways out.
const NoRuntimeHint = "hint: run kz to set one up, or set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY) and retry"

// NoRuntimeError says that not one runtime can run on this machine, with
// why for each, in short. Its kind is runtime_missing (Unwrap gives the
// classified error that engine.KindOf reads), so kz -p's final_result
// carries error_kind runtime_missing.
type NoRuntimeError struct {
	// Reasons are "name: why", one a runtime, each cut short.
	Reasons []string
}

func (e *NoRuntimeError) Error() string {
	return "no runtime is available: " + strings.Join(e.Reasons, "; ")
}

// Unwrap classifies the error as runtime_missing.
func (e *NoRuntimeError) Unwrap() error {
	return &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Message: "no runtime is available: " + strings.Join(e.Reasons, "; ")}
}

// maxReason bounds each runtime's reason in NoRuntimeError: eight
// runtimes with their whole reasons would fill a screen.
const maxReason = 48

// noRuntime returns a NoRuntimeError when no entry can run at all, or nil
// when at least one can (a runtime that runs but cannot serve the mode is
// the selector's own error, which names the capabilities).
func noRuntime(entries []engine.RuntimeEntry) error {
	if len(entries) == 0 {
		return &NoRuntimeError{Reasons: []string{"none is configured"}}
	}
	var reasons []string
	for _, x := range entries {
		if x.Unavailable == "" {
			return nil
		}
		reasons = append(reasons, x.Runtime.Name()+": "+shortReason(x.Unavailable))
	}
	return &NoRuntimeError{Reasons: reasons}
}

// shortReason keeps the first clause of a reason: what is missing,
// without the advice in parentheses or the dial error after a colon that
// kz runtimes --verbose shows.
func shortReason(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimPrefix(s, "no API key: ")
	if v, ok := strings.CutPrefix(s, "set the environment variable "); ok {
		return ansi.Truncate(v+" not set", maxReason, "…")
	}
	for _, sep := range []string{" (", ": "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return ansi.Truncate(strings.TrimSpace(s), maxReason, "…")
}

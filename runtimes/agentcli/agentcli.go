// Package agentcli holds what the runtimes that drive an agent CLI share:
// what of kz's environment every CLI gets, the classification of its error
// messages, and the bounded rendering of kz's transcript that primes a
// fresh CLI session.
package agentcli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
)

// Pass names the variables of kz's environment every agent CLI gets
// besides childenv.Base: where its XDG directories are, how it reaches the
// network (proxies) and which certificate authorities it trusts, since it
// talks to its endpoint itself. Credentials are never passed implicitly
// (SECURITY.md rule 5): a CLI names its own, and a configuration names one
// with a bare "NAME" entry in Env.
var Pass = []string{
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// Env returns an agent CLI's environment, built from kz's by the one
// filter every child goes through (childenv.Build): the base variables,
// Pass, what the CLI adds itself (own: its home and credential variables,
// the families of settings it reads, its defaults), then cfgEnv, its
// configured entries ("K=V" sets, a bare "K" passes K through).
func Env(own childenv.Spec, cfgEnv []string) []string {
	own.Pass = slices.Concat(Pass, own.Pass)
	own.Config = cfgEnv
	return childenv.Build(os.Environ(), own)
}

// Classify maps a failure message of the CLI or its model provider to an
// error kind, so that only failures another runtime could get past fail
// over. Unrecognised failures count as crashes (retryable): a CLI that
// cannot finish a turn is as good as a dead one.
func Classify(msg string) engine.ErrorKind {
	m := strings.ToLower(msg)
	switch {
	case containsAny(m, "401", "403", "unauthorized", "unauthenticated", "api key", "api_key", "authentication", "permission_denied", "login"):
		return engine.ErrAuth
	case containsAny(m, "429", "rate limit", "rate_limit", "ratelimit", "quota", "resource_exhausted", "usage limit"):
		return engine.ErrRateLimit
	case containsAny(m, "overloaded", "high demand", "503", "502", "500", "unavailable", "server_error", "internal error"):
		return engine.ErrOverloaded
	case containsAny(m, "context window", "context_length", "too long", "maximum context"):
		return engine.ErrContextTooLong
	case containsAny(m, "400", "invalid_argument", "bad request", "invalid request"):
		return engine.ErrBadRequest
	}
	return engine.ErrCrashed
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// PrimeBudget bounds the rendered transcript a fresh CLI session is primed
// with, in bytes: the most recent entries are kept.
const PrimeBudget = 32 << 10

const (
	maxEntryText  = 4000
	maxToolInput  = 400
	maxToolOutput = 1500
)

// PrimePrompt prefixes the prompt with a bounded rendering of kz's
// runtime-neutral transcript, for a CLI session that did not see the
// earlier turns (they ran on another runtime, or the CLI's own session
// could not be resumed).
func PrimePrompt(history []engine.TranscriptEntry, prompt string, budget int) string {
	body := RenderHistory(history, budget)
	if body == "" {
		return prompt
	}
	return "This conversation started earlier in kz, partly with other assistants. " +
		"Here is what was said and done so far; continue from it and do not repeat work already done.\n\n" +
		"<kz-conversation>\n" + body + "</kz-conversation>\n\n" + prompt
}

// RenderHistory renders the newest entries that fit in budget bytes, oldest
// first, and says how many older ones were left out.
func RenderHistory(history []engine.TranscriptEntry, budget int) string {
	var parts []string
	size, omitted := 0, 0
	for i := len(history) - 1; i >= 0; i-- {
		s := renderEntry(history[i])
		if s == "" {
			continue
		}
		if size+len(s) > budget {
			omitted = i + 1
			break
		}
		size += len(s)
		parts = append(parts, s)
	}
	var b strings.Builder
	if omitted > 0 {
		fmt.Fprintf(&b, "[%d earlier entries omitted]\n", omitted)
	}
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	return b.String()
}

func renderEntry(e engine.TranscriptEntry) string {
	who := e.Runtime
	if e.Model != "" {
		who += "/" + e.Model
	}
	switch e.Kind {
	case engine.EntryUser:
		return "[user] " + clip(e.Text, maxEntryText) + "\n"
	case engine.EntryAssistant:
		s := "[assistant " + who + "]"
		if e.Status == "partial" {
			s += " (cut short)"
		}
		return s + " " + clip(e.Text, maxEntryText) + "\n"
	case engine.EntryToolCall:
		s := fmt.Sprintf("[tool call %s %s → %s]", e.Tool, clip(string(e.Input), maxToolInput), e.Status)
		if e.Output != "" {
			s += " " + clip(e.Output, maxToolOutput)
		}
		return s + "\n"
	case engine.EntryDecision:
		s := fmt.Sprintf("[permission %s for %s]", e.Status, e.Tool)
		if e.Text != "" {
			s += " " + clip(e.Text, maxToolInput)
		}
		return s + "\n"
	case engine.EntryPatch:
		return fmt.Sprintf("[patch %s] %s\n", strings.TrimPrefix(e.Status, "patch_"), clip(e.Text, maxToolOutput))
	case engine.EntryMarker:
		return "[note] " + clip(e.Text, maxToolInput) + "\n"
	case engine.EntryNotice:
		s := "[note " + e.Status + "] " + clip(e.Text, maxToolInput)
		if e.Output != "" {
			s += "\n[user, from the " + e.Status + "] " + clip(e.Output, maxEntryText)
		}
		return s + "\n"
	case engine.EntryError:
		return fmt.Sprintf("[error %s] %s\n", e.Status, clip(e.Text, maxToolInput))
	case engine.EntryTurnEnd:
		if e.Status != "" && e.Status != string(engine.StatusComplete) {
			return "[turn ended: " + e.Status + "]\n"
		}
	}
	return ""
}

// clip trims an entry's text and bounds it (proc.Clip cuts on a rune
// boundary).
func clip(s string, n int) string { return proc.Clip(strings.TrimSpace(s), n) }

// PrimeImages is what a primed first message carries besides its text:
// the images the person sent earlier in the history, which the rendered
// transcript can only name (a fresh agent session would otherwise be
// asked about images it never saw), then the turn's own. The newest are
// kept when there are more than a message may carry.
func PrimeImages(history []engine.TranscriptEntry, current []engine.Image) []engine.Image {
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

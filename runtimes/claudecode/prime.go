package claudecode

import (
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// primeBudget bounds the rendered transcript a new Claude session is primed
// with, in bytes: the most recent entries are kept.
const primeBudget = 32 << 10

// Per-entry bounds keep one huge tool output from crowding out the rest.
const (
	maxEntryText  = 4000
	maxToolInput  = 400
	maxToolOutput = 1500
)

// primePrompt prefixes the prompt with a bounded rendering of kz's
// runtime-neutral transcript, for a Claude session that did not see the
// earlier turns (they ran on another runtime, or Claude's own session could
// not be resumed).
func primePrompt(history []engine.TranscriptEntry, prompt string, budget int) string {
	body := renderHistory(history, budget)
	if body == "" {
		return prompt
	}
	return "This conversation started earlier in kz, partly with other assistants. " +
		"Here is what was said and done so far; continue from it and do not repeat work already done.\n\n" +
		"<kz-conversation>\n" + body + "</kz-conversation>\n\n" + prompt
}

// renderHistory renders the newest entries that fit in budget bytes, oldest
// first, and says how many older ones were left out.
func renderHistory(history []engine.TranscriptEntry, budget int) string {
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
	case engine.EntryError:
		return fmt.Sprintf("[error %s] %s\n", e.Status, clip(e.Text, maxToolInput))
	case engine.EntryTurnEnd:
		if e.Status != "" && e.Status != string(engine.StatusComplete) {
			return "[turn ended: " + e.Status + "]\n"
		}
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

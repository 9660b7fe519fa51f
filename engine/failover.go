package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// carryOver is what a failover hands the runtime that takes over a turn:
// the turn so far (the request, assistant text, every tool call that ran
// with its decision and result), redacted as the store redacts, and a
// prompt that asks it to continue rather than start over.
//
// The entries go into Turn.History, the same runtime-neutral form a runtime
// switch primes a runtime with, so every runtime renders them its own way:
// an API runtime as messages with real tool calls and results, a CLI
// runtime as the primed transcript. Nothing is re-run: a call the failed
// runtime left without a result is carried as "interrupted, not re-run".
type carryOver struct {
	entries []TranscriptEntry
	prompt  string
	// calls, texts and decisions count what was carried, for the
	// runtime_switched event.
	calls, texts, decisions int
	tools                   []string
}

// carryLocked collects the work of the running turn since its history was
// taken (ts.histLen), for the attempt after a failure of from. It returns
// nil when the failed runtime did nothing worth carrying, so the next
// runtime simply gets the request. Callers hold s.mu.
func (s *Session) carryLocked(ts *turnState, prompt, from string, cause error) *carryOver {
	// Streamed text the failed runtime never closed is part of its work.
	s.transcript.flushPending()
	if ts.histLen > len(s.transcript.Entries) {
		return nil
	}
	c := &carryOver{}
	for _, e := range s.transcript.Entries[ts.histLen:] {
		if e.TurnID != ts.turn.ID {
			continue
		}
		switch e.Kind {
		case EntryUser, EntryPatch:
		case EntryAssistant:
			c.texts++
		case EntryToolCall:
			if e.Status == ToolStatusRunning || e.Status == "" {
				// The call may have run, or not: it is never run again.
				e.Status, e.Output, e.IsError = ToolStatusInterrupted, InterruptedNotRerun, true
			}
			c.calls++
			c.tools = append(c.tools, e.Tool)
		case EntryDecision:
			c.decisions++
		default:
			// Reasoning has no provider signature to carry; markers and
			// errors are the session's own notes.
			continue
		}
		c.entries = append(c.entries, s.redactEntry(e))
	}
	if c.calls == 0 && c.texts == 0 {
		return nil
	}
	c.prompt = continuePrompt(prompt, from, cause, c.entries, s.redact)
	return c
}

// summary says what was carried, for runtime_switched.
func (c *carryOver) summary() string {
	if c == nil {
		return "carried: nothing had been done in this turn"
	}
	parts := []string{"the request"}
	if c.texts > 0 {
		parts = append(parts, plural(c.texts, "assistant message"))
	}
	if c.calls > 0 {
		parts = append(parts, fmt.Sprintf("%s with their results (%s)", plural(c.calls, "tool call"), strings.Join(c.tools, ", ")))
	}
	if c.decisions > 0 {
		parts = append(parts, plural(c.decisions, "permission decision"))
	}
	return "carried: " + strings.Join(parts, ", ") + "; tool calls are not re-run"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// redact applies the session's redaction (the store's), or nothing.
func (s *Session) redact(text string) string {
	if s.redactor == nil || text == "" {
		return text
	}
	return s.redactor(text)
}

// redactEntry redacts every text of e that came from the model or a tool.
// A tool input that redaction leaves invalid JSON is carried as a JSON
// string, since providers need tool inputs to parse.
func (s *Session) redactEntry(e TranscriptEntry) TranscriptEntry {
	e.Text, e.Output = s.redact(e.Text), s.redact(e.Output)
	if len(e.Input) > 0 {
		in := s.redact(string(e.Input))
		if json.Valid([]byte(in)) {
			e.Input = json.RawMessage(in)
		} else {
			e.Input, _ = json.Marshal(map[string]string{"redacted_input": in})
		}
	}
	return e
}

// continuePrompt asks the runtime taking over to continue the request
// from where the failed one stopped. It lists the tool calls with their
// decisions, which an API runtime's messages do not carry, and repeats the
// request, which the history holds too.
func continuePrompt(prompt, from string, cause error, carried []TranscriptEntry, redact func(string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[kz] The assistant that was answering this request (%s) failed", from)
	if cause != nil {
		fmt.Fprintf(&b, " (%s)", clipText(redact(cause.Error()), 300))
	}
	b.WriteString(" after the work shown above. Its tool calls already ran, with the permission decisions and results below, " +
		"and their effects are in the workspace now: do not run them again. Continue the request from where it stopped.\n")
	decisions := map[string]TranscriptEntry{}
	for _, e := range carried {
		if e.Kind == EntryDecision && e.ToolCallID != "" {
			decisions[e.ToolCallID] = e
		}
	}
	for _, e := range carried {
		if e.Kind != EntryToolCall {
			continue
		}
		fmt.Fprintf(&b, "- %s %s: ", e.Tool, clipText(string(e.Input), 200))
		if d, ok := decisions[e.ToolCallID]; ok {
			fmt.Fprintf(&b, "permission %s", d.Status)
			if d.Text != "" {
				fmt.Fprintf(&b, " (%s)", clipText(d.Text, 200))
			}
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "result %s", e.Status)
		if e.Output != "" {
			fmt.Fprintf(&b, ": %s", clipText(e.Output, 500))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe request: ")
	b.WriteString(prompt)
	return b.String()
}

// clipText shortens s to about n bytes on a rune boundary.
func clipText(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return cutAtRune(s, n) + "…"
}

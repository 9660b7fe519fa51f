package native

import (
	"context"
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// Compaction says when and how the loop shrinks a conversation that nears
// the model's context window.
type Compaction struct {
	// Threshold is the fraction of the context window at which the loop
	// compacts before the next request; zero means 0.8, negative disables.
	Threshold float64
	// KeepRecent is how many of the latest messages are kept verbatim (at
	// least; the cut moves back to the start of a model response so that no
	// tool call is separated from its result). Zero means 4.
	KeepRecent int
}

func (c Compaction) threshold() float64 {
	if c.Threshold == 0 {
		return 0.8
	}
	return c.Threshold
}

func (c Compaction) keep() int {
	if c.KeepRecent > 0 {
		return c.KeepRecent
	}
	return 4
}

const summarySystem = "You compact the conversation of a coding agent so it can continue within its context window. " +
	"Write a dense summary of the conversation you are given: the person's requests, what was found, which files were read or " +
	"changed and how, decisions and denials, and what remains to do. Keep exact file paths, names and error messages. " +
	"Do not address the person; output only the summary."

// maybeCompact summarises the older part of the conversation with the same
// model when the next request would come near the context window. It keeps
// the latest messages verbatim, starting at a model response so every tool
// call keeps its result, and the current prompt verbatim in the summary
// message. It emits compact_boundary with the token counts before and after.
func (l *loop) maybeCompact(ctx context.Context) error {
	c := l.r.cfg.Compaction
	th := c.threshold()
	if th < 0 || l.info.ContextWindow <= 0 {
		return nil
	}
	before := l.estimate()
	if float64(before) < th*float64(l.info.ContextWindow) {
		return nil
	}
	_, err := l.compact(ctx, before)
	return err
}

// compact replaces the older part of the conversation by a summary. It
// reports false when there is nothing it can cut.
func (l *loop) compact(ctx context.Context, before int) (bool, error) {
	cut := cutPoint(l.msgs, l.r.cfg.Compaction.keep())
	if cut <= 0 {
		return false, nil
	}
	return true, l.summarise(ctx, before, cut, false)
}

// summarise replaces l.msgs[:cut] by one user message holding a summary
// written by the same model, and emits usage_updated for that request and
// compact_boundary with the token counts before and after. When lasting,
// the boundary carries the summary as Output, so that later turns start
// from it (engine.CompactedHistory); a compaction in the middle of a turn
// keeps recent messages that precede its boundary in the transcript, so it
// lasts only for that turn.
func (l *loop) summarise(ctx context.Context, before, cut int, lasting bool) error {
	older, recent := l.msgs[:cut], l.msgs[cut:]
	req := llm.Request{Model: l.model, System: summarySystem, MaxTokens: min(l.info.MaxOutput, 4096),
		Messages: []llm.Message{{Role: llm.RoleUser, Text: render(older) + "\n\nSummarise the conversation above."}}}
	resp, err := l.client.Stream(ctx, req, func(llm.Delta) {})
	if err != nil {
		return err
	}
	u := resp.Usage
	l.host.Emit(engine.Event{Type: engine.EventUsageUpdated, Usage: &u, CostUSD: l.info.Cost(u), Model: l.model})

	text := "Summary of the earlier conversation (compacted by kz to fit the context window):\n\n" + strings.TrimSpace(resp.Text)
	if l.turn.Prompt != "" && promptIn(older, l.turn.Prompt) {
		text += "\n\nThe person's current request, verbatim:\n" + l.turn.Prompt
	}
	msgs := make([]llm.Message, 0, len(recent)+1)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: text})
	msgs = append(msgs, recent...)
	l.msgs = msgs
	after := estimateTokens(l.system, l.tools, l.msgs)
	l.contextTokens, l.counted = after, len(l.msgs)
	ev := engine.Event{Type: engine.EventCompactBoundary, TokensBefore: before, TokensAfter: after,
		Text: fmt.Sprintf("compacted %d earlier messages into a summary", cut)}
	if lasting {
		ev.Output = text
	}
	l.host.Emit(ev)
	return nil
}

// Compact implements engine.Compacter (/compact): it summarises the whole
// conversation the turn is primed with, with the turn's model, through the
// same summariser as the compaction near the context window.
func (r *Runtime) Compact(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	model := r.model(t.Model)
	info, _ := r.catalog.Lookup(model)
	client, err := r.getClient()
	if err != nil {
		return engine.Result{Status: engine.StatusError}, r.wrap(err, model)
	}
	l := &loop{r: r, host: t, turn: t, client: client, info: info, model: model}
	if info.Tools && r.cfg.Tools != nil {
		l.tools = r.cfg.Tools.Tools(t.Mode)
	}
	l.system = r.systemPrompt(t, len(l.tools) > 0)
	l.msgs = llm.FromTranscript(t.History)
	if len(l.msgs) == 0 {
		return engine.Result{Status: engine.StatusComplete, Model: model}, nil
	}
	if err := l.summarise(ctx, l.estimate(), len(l.msgs), true); err != nil {
		return engine.Result{Status: engine.StatusError, Model: model}, r.wrap(err, model)
	}
	return engine.Result{Status: engine.StatusComplete, Model: model}, nil
}

// estimate is the size of the next request: the provider's count of the
// conversation at the last response plus a character estimate of what was
// added since (tool results), or the character estimate of everything when
// no response was counted yet.
func (l *loop) estimate() int {
	if l.contextTokens == 0 || l.counted > len(l.msgs) {
		return estimateTokens(l.system, l.tools, l.msgs)
	}
	return l.contextTokens + estimateTokens("", nil, l.msgs[l.counted:])
}

// cutPoint returns the index where the kept part starts: the latest
// assistant message that leaves at least keep messages, or 0 when the
// conversation cannot be cut.
func cutPoint(msgs []llm.Message, keep int) int {
	for i := len(msgs) - keep; i >= 1; i-- {
		if i < len(msgs) && msgs[i].Role == llm.RoleAssistant {
			return i
		}
	}
	return 0
}

func promptIn(msgs []llm.Message, prompt string) bool {
	for _, m := range msgs {
		if m.Role == llm.RoleUser && strings.Contains(m.Text, prompt) {
			return true
		}
	}
	return false
}

// estimateTokens is a character-based estimate (four characters a token).
func estimateTokens(system string, tools []llm.ToolDef, msgs []llm.Message) int {
	n := len(system)
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, m := range msgs {
		n += len(m.Text) + 8
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args) + 16
		}
		for _, r := range m.ToolResults {
			n += len(r.Content) + 16
		}
		for _, r := range m.Reasoning {
			n += len(r.Text)
		}
	}
	return n/4 + 1
}

// render writes messages as plain text for the summariser, with long tool
// results shortened.
func render(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(&b, "User: %s\n\n", m.Text)
		case llm.RoleAssistant:
			if m.Text != "" {
				fmt.Fprintf(&b, "Assistant: %s\n\n", m.Text)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "Assistant called %s %s\n\n", c.Name, clip(string(c.Args), 500))
			}
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				tag := "result"
				if r.IsError {
					tag = "error"
				}
				fmt.Fprintf(&b, "Tool %s (%s): %s\n\n", tag, r.Name, clip(r.Content, 2000))
			}
			if m.Text != "" {
				fmt.Fprintf(&b, "User: %s\n\n", m.Text)
			}
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " […]"
}

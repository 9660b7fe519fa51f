package llm

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// FromTranscript turns kz's runtime-neutral history into provider-neutral
// messages, so a runtime that joins a session sees the whole conversation.
//
// Invariants the providers need and this function guarantees: every tool
// call is answered by a result in the message right after the assistant
// message that made it (a call whose result was never recorded gets
// engine.InterruptedNotRerun as an error result); messages alternate between
// the user side and the assistant side (adjacent text of one side is
// merged); tool inputs are JSON objects.
func FromTranscript(entries []engine.TranscriptEntry) []Message {
	var b historyBuilder
	for _, e := range entries {
		switch e.Kind {
		case engine.EntryUser:
			b.closeCalls()
			b.addText(RoleUser, e.Text, e.Images...)
		case engine.EntryAssistant:
			if e.Text == "" {
				continue
			}
			b.closeCalls()
			b.addText(RoleAssistant, e.Text)
		case engine.EntryToolCall:
			b.addCall(e)
		case engine.EntryNotice:
			// What the model was told because of a notice (a Stop
			// hook's feedback) was a user-side message of the turn.
			if e.Output != "" {
				b.closeCalls()
				b.addText(RoleUser, e.Output)
			}
		case engine.EntryPatch:
			// A patch outcome is something the person did; the model learns
			// of it as a note on the user side.
			if e.Text != "" {
				b.closeCalls()
				b.addText(RoleUser, "[patch "+e.Status+"] "+e.Text)
			}
		}
		// Reasoning has no provider signature in the neutral history, and
		// decisions, markers, errors, other notices and turn ends are already reflected in
		// the tool results and texts: none of them becomes a message.
	}
	b.closeCalls()
	return b.msgs
}

type historyBuilder struct {
	msgs []Message
	// results collects results of the last assistant message's tool calls
	// until something else happens.
	results []ToolResult
	open    bool
}

func (b *historyBuilder) last() *Message {
	if len(b.msgs) == 0 {
		return nil
	}
	return &b.msgs[len(b.msgs)-1]
}

func (b *historyBuilder) addText(role Role, text string, images ...engine.Image) {
	if l := b.last(); l != nil && l.Role == role && len(l.ToolCalls) == 0 && len(l.ToolResults) == 0 {
		if l.Text != "" {
			l.Text += "\n\n"
		}
		l.Text += text
		l.Images = append(l.Images, images...)
		return
	}
	b.msgs = append(b.msgs, Message{Role: role, Text: text, Images: images})
}

func (b *historyBuilder) addCall(e engine.TranscriptEntry) {
	l := b.last()
	if !b.open || l == nil || l.Role != RoleAssistant {
		// A call after results (a new cycle) or after user text starts a new
		// assistant message; a call right after assistant text joins it.
		b.closeCalls()
		l = b.last()
		if l == nil || l.Role != RoleAssistant || len(l.ToolCalls) > 0 {
			b.msgs = append(b.msgs, Message{Role: RoleAssistant})
			l = b.last()
		}
		b.open = true
	}
	args := json.RawMessage(e.Input)
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	l.ToolCalls = append(l.ToolCalls, ToolCall{ID: e.ToolCallID, Name: e.Tool, Args: args})
	r := ToolResult{CallID: e.ToolCallID, Name: e.Tool, Content: e.Output, IsError: e.IsError}
	switch e.Status {
	case engine.ToolStatusRunning, "":
		if e.Output == "" {
			r.Content, r.IsError = engine.InterruptedNotRerun, true
		}
	case engine.ToolStatusInterrupted:
		if r.Content == "" {
			r.Content = engine.InterruptedNotRerun
		}
		r.IsError = true
	}
	b.results = append(b.results, r)
}

// closeCalls ends the open assistant tool-call message with its results.
func (b *historyBuilder) closeCalls() {
	if !b.open {
		return
	}
	b.msgs = append(b.msgs, Message{Role: RoleTool, ToolResults: b.results})
	b.results, b.open = nil, false
}

// ForVision returns msgs as a model with or without vision takes them:
// unchanged with vision; without it, each image becomes its label in the
// message's text ("[image: shot.png 120 KB]"), so a model the session
// switched to after an image was sent knows that one was, rather than
// having its provider reject the request.
func ForVision(msgs []Message, vision bool) []Message {
	if vision {
		return msgs
	}
	var out []Message
	for i, m := range msgs {
		if len(m.Images) == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		labels := make([]string, len(m.Images))
		for j, im := range m.Images {
			labels[j] = im.Label()
		}
		text := strings.Join(labels, " ")
		if m.Text != "" {
			text = m.Text + "\n\n" + text
		}
		out[i].Text, out[i].Images = text, nil
	}
	if out == nil {
		return msgs
	}
	return out
}

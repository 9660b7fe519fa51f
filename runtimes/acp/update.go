package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// update maps one session/update to kz events.
func (tr *turnRun) update(raw json.RawMessage) {
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		// Content is one block for message chunks and a list for tool
		// calls, so it is decoded by kind.
		Content json.RawMessage `json:"content"`
		Entries []struct {
			Content  string `json:"content"`
			Status   string `json:"status"`
			Priority string `json:"priority"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(raw, &u); err != nil {
		tr.rt.log.Warn("acp: malformed update", "err", err)
		return
	}
	switch u.SessionUpdate {
	case "agent_message_chunk":
		text := chunkText(u.Content)
		// Gemini CLI echoes a mode change as a message (protocol notes
		// §10); it is not the model's words.
		if text == "" || strings.HasPrefix(text, "[MODE_UPDATE]") {
			return
		}
		tr.msg.WriteString(text)
		tr.t.Emit(engine.Event{Type: engine.EventTextDelta, Text: text})
	case "agent_thought_chunk":
		if text := chunkText(u.Content); text != "" {
			tr.t.Emit(engine.Event{Type: engine.EventReasoningDelta, Text: text})
		}
	case "plan":
		var b strings.Builder
		b.WriteString("Plan:\n")
		for _, e := range u.Entries {
			fmt.Fprintf(&b, "- [%s] %s\n", e.Status, e.Content)
		}
		tr.t.Emit(engine.Event{Type: engine.EventReasoningDelta, Text: b.String()})
	case "tool_call", "tool_call_update":
		var tc toolCall
		if err := json.Unmarshal(raw, &tc); err != nil || tc.ToolCallID == "" {
			tr.rt.log.Warn("acp: malformed tool call", "err", err)
			return
		}
		st := tr.tool(tc)
		tr.start(st)
		if tc.Status == "completed" || tc.Status == "failed" {
			tr.finishTool(st, tc.Status == "failed", "")
		}
	default:
		// available_commands_update, current_mode_update, user message
		// chunks and kinds newer than this code: nothing to map.
	}
}

// chunkText returns the text of a text content block, or "".
func chunkText(raw json.RawMessage) string {
	var c struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil || c.Type != "text" {
		return ""
	}
	return c.Text
}

// tool merges an update into the known state of its tool call.
func (tr *turnRun) tool(tc toolCall) *toolState {
	st := tr.tools[tc.ToolCallID]
	if st == nil {
		st = &toolState{call: tc}
		tr.tools[tc.ToolCallID] = st
		return st
	}
	c := &st.call
	if tc.Title != "" {
		c.Title = tc.Title
	}
	if tc.Kind != "" {
		c.Kind = tc.Kind
	}
	if tc.Status != "" {
		c.Status = tc.Status
	}
	if tc.Content != nil {
		c.Content = tc.Content
	}
	if tc.Locations != nil {
		c.Locations = tc.Locations
	}
	if tc.RawInput != nil {
		c.RawInput = tc.RawInput
	}
	if tc.RawOutput != nil {
		c.RawOutput = tc.RawOutput
	}
	return st
}

// toolName is kz's name of a tool call: the agent's name, which
// Gemini's ids start with ("run_shell_command__run_shell_command_…"),
// else the call's kind. An MCP tool's name is kz's, mcp__SERVER__TOOL
// (kzMCPName), so that kz's rules for it hold on this runtime too.
func (tr *turnRun) toolName(c toolCall) string {
	if name, _, ok := strings.Cut(c.ToolCallID, "__"); ok && name != "" {
		if kz, ok := kzMCPName(name, tr.rt.cfg.MCPServers); ok {
			return kz
		}
		return name
	}
	if c.Kind != "" {
		return c.Kind
	}
	return "tool"
}

// command is the shell command of an execute call: the raw input's
// command when the agent sends it, else the title (Gemini's title is the
// command line).
func command(c toolCall) string {
	var in struct {
		Command any `json:"command"`
	}
	if len(c.RawInput) > 0 && json.Unmarshal(c.RawInput, &in) == nil {
		switch v := in.Command.(type) {
		case string:
			return v
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				parts = append(parts, fmt.Sprint(p))
			}
			return strings.Join(parts, " ")
		}
	}
	return c.Title
}

func (tr *turnRun) input(c toolCall) json.RawMessage {
	if len(c.RawInput) > 0 {
		return c.RawInput
	}
	b, _ := json.Marshal(map[string]any{"title": c.Title, "kind": c.Kind, "locations": c.Locations})
	return b
}

// start emits the start of a tool call once.
func (tr *turnRun) start(st *toolState) {
	if st.started {
		return
	}
	st.started = true
	tr.flush(false)
	c := st.call
	tr.t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: c.ToolCallID, Tool: tr.toolName(c), Input: tr.input(c),
		Paths: tr.paths(c)})
	if c.Kind == "execute" {
		tr.t.Emit(engine.Event{Type: engine.EventCommandStarted, ToolCallID: c.ToolCallID, Tool: tr.toolName(c), Command: command(c)})
	}
}

// finishTool emits the end of a tool call once. output overrides the
// text the agent sent (for calls kz rejected, which get no update).
func (tr *turnRun) finishTool(st *toolState, failed bool, output string) {
	if st.finished {
		return
	}
	st.finished = true
	c := st.call
	if output == "" {
		output = contentText(c.Content)
	}
	ev := engine.Event{Type: engine.EventToolCallFinished, ToolCallID: c.ToolCallID, Tool: tr.toolName(c), Output: output, IsError: failed}
	if tr.stopping {
		ev.Status = engine.ToolStatusInterrupted
	}
	tr.t.Emit(ev)
	if c.Kind == "execute" {
		// ACP carries no exit code (protocol notes §5): ExitCode stays nil.
		tr.t.Emit(engine.Event{Type: engine.EventCommandFinished, ToolCallID: c.ToolCallID, Tool: tr.toolName(c),
			Command: command(c), Output: output, IsError: failed})
	}
	if failed {
		return
	}
	for _, d := range c.Content {
		if d.Type != "diff" || d.Path == "" {
			continue
		}
		rel := tr.rel(d.Path)
		if tr.written[rel] {
			// kz wrote it itself and reported it then.
			delete(tr.written, rel)
			continue
		}
		tr.t.Emit(engine.Event{Type: engine.EventFileEdited, ToolCallID: c.ToolCallID, Tool: tr.toolName(c), Path: rel,
			Diff: unifiedDiff(rel, d.OldText, d.NewText)})
	}
}

func contentText(cs []toolContent) string {
	var parts []string
	for _, c := range cs {
		if c.Type == "content" && c.Content != nil && c.Content.Text != "" {
			parts = append(parts, c.Content.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// paths returns the absolute paths a tool call names, in locations and
// diffs, without repeats.
func (tr *turnRun) paths(c toolCall) []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		p = tr.abs(p)
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	for _, l := range c.Locations {
		add(l.Path)
	}
	for _, d := range c.Content {
		if d.Type == "diff" {
			add(d.Path)
		}
	}
	return out
}

func (tr *turnRun) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(tr.dir, p)
	}
	return filepath.Clean(p)
}

func (tr *turnRun) rel(p string) string {
	a := tr.abs(p)
	if r, err := filepath.Rel(tr.dir, a); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return a
}

// unifiedDiff renders a change as a unified diff. A nil old is a new
// file.
func unifiedDiff(rel string, old *string, newText string) string {
	from, o := rel, ""
	if old == nil || (*old == "" && newText != "") {
		from = diff.DevNull
	} else {
		o = *old
	}
	text, _, _ := diff.Unified(from, rel, []byte(o), []byte(newText))
	return text
}

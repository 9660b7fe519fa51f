package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/workspace"
)

// JSON-RPC error codes kz answers agent requests with.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	// codeRefused is a server-defined code for a request kz's gate or the
	// person refused.
	codeRefused = -32001
)

// maxFileRead bounds a file served to the agent.
const maxFileRead = 8 << 20

// request answers one request of the agent.
func (tr *turnRun) request(ctx context.Context, m wire) {
	var err error
	switch m.Method {
	case "session/request_permission":
		err = tr.permission(ctx, m)
	case "fs/write_text_file":
		err = tr.writeFile(ctx, m)
	case "fs/read_text_file":
		err = tr.readFile(m)
	default:
		tr.rt.log.Info("acp: request kz does not serve", "method", m.Method)
		err = tr.c.ReplyError(m.ID, codeMethodNotFound, "kz does not support "+m.Method)
	}
	if err != nil {
		tr.rt.log.Warn("acp: could not answer a request", "method", m.Method, "err", err)
	}
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Kind     string `json:"kind"`
}

// pick returns the id of the first option of the first kind offered.
func pick(opts []permissionOption, kinds ...string) string {
	for _, k := range kinds {
		for _, o := range opts {
			if o.Kind == k {
				return o.OptionID
			}
		}
	}
	return ""
}

// permission passes a tool call the agent wants to make through kz's gate
// and answers with the matching offered option. kz answers an allow with
// "allow once" even when the person allowed for the session: the gate
// remembers that scope itself, and an agent-side "always" would let later
// calls bypass kz.
func (tr *turnRun) permission(ctx context.Context, m wire) error {
	var p struct {
		Options  []permissionOption `json:"options"`
		ToolCall toolCall           `json:"toolCall"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.ToolCall.ToolCallID == "" {
		return tr.c.ReplyError(m.ID, codeInvalidParams, "malformed session/request_permission")
	}
	st := tr.tool(p.ToolCall)
	tr.start(st)
	c := st.call
	req := engine.PermissionRequest{ToolCallID: c.ToolCallID, Tool: toolName(c), Input: tr.input(c), Paths: tr.paths(c)}
	switch c.Kind {
	case "execute":
		req.Command = command(c)
	case "edit", "delete", "move":
		req.Write = true
		var diff strings.Builder
		for _, d := range c.Content {
			if d.Type == "diff" && d.Path != "" {
				diff.WriteString(unifiedDiff(tr.rel(d.Path), d.OldText, d.NewText))
			}
		}
		req.Diff = diff.String()
	}
	ans := tr.t.RequestPermission(ctx, req)
	if ctx.Err() != nil || tr.stopping {
		return tr.c.Reply(m.ID, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}})
	}
	var id string
	if ans.Allowed() {
		id = pick(p.Options, "allow_once", "allow_always")
		for _, d := range c.Content {
			if d.Type == "diff" && d.Path != "" {
				tr.allowedWrites[tr.rel(d.Path)] = allowedWrite{content: d.NewText, toolID: c.ToolCallID}
			}
		}
	} else {
		id = pick(p.Options, "reject_once", "reject_always")
		// The agent sends no update for a rejected call (protocol notes
		// §6): kz closes it itself.
		why := "denied by kz"
		if ans.Feedback != "" {
			why += ": " + ans.Feedback
		}
		defer tr.finishTool(st, true, why)
	}
	if id == "" {
		return tr.c.Reply(m.ID, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}})
	}
	return tr.c.Reply(m.ID, map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": id}})
}

func (tr *turnRun) workspace() (*workspace.Workspace, error) {
	if tr.ws != nil {
		return tr.ws, nil
	}
	ws, err := workspace.Open(tr.dir)
	if err != nil {
		return nil, err
	}
	tr.ws = ws
	return ws, nil
}

// writeFile serves fs/write_text_file through kz's workspace: confined to
// it, asked through the gate as a write (unless the person just allowed
// exactly this content for this path), and atomic.
func (tr *turnRun) writeFile(ctx context.Context, m wire) error {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Path == "" {
		return tr.c.ReplyError(m.ID, codeInvalidParams, "fs/write_text_file needs a path and content")
	}
	ws, err := tr.workspace()
	if err != nil {
		return tr.c.ReplyError(m.ID, codeInternal, err.Error())
	}
	rel, err := ws.Rel(p.Path)
	if err != nil {
		return tr.c.ReplyError(m.ID, codeRefused, "kz refused the write: "+err.Error())
	}
	abs, _ := ws.Abs(rel)
	var old *string
	if b, _, err := ws.ReadFile(rel, maxFileRead); err == nil {
		s := string(b)
		old = &s
	}
	diff := unifiedDiff(rel, old, p.Content)
	want, ok := tr.allowedWrites[rel]
	if !ok || want.content != p.Content {
		want = allowedWrite{}
		in, _ := json.Marshal(map[string]string{"path": abs})
		ans := tr.t.RequestPermission(ctx, engine.PermissionRequest{Tool: "write_text_file", Input: in,
			Paths: []string{abs}, Write: true, Diff: diff})
		if !ans.Allowed() {
			msg := "kz denied the write to " + rel
			if ans.Feedback != "" {
				msg += ": " + ans.Feedback
			}
			return tr.c.ReplyError(m.ID, codeRefused, msg)
		}
	}
	delete(tr.allowedWrites, rel)
	if err := ws.WriteFile(rel, []byte(p.Content), 0o644); err != nil {
		return tr.c.ReplyError(m.ID, codeInternal, "write "+rel+": "+err.Error())
	}
	tr.written[rel] = true
	tr.t.Emit(engine.Event{Type: engine.EventFileEdited, ToolCallID: want.toolID, Tool: "write_text_file", Path: rel, Diff: diff})
	return tr.c.Reply(m.ID, nil)
}

// readFile serves fs/read_text_file from the workspace (kz does not offer
// it, but an agent may still ask).
func (tr *turnRun) readFile(m wire) error {
	var p struct {
		Path  string `json:"path"`
		Line  int    `json:"line"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Path == "" {
		return tr.c.ReplyError(m.ID, codeInvalidParams, "fs/read_text_file needs a path")
	}
	ws, err := tr.workspace()
	if err != nil {
		return tr.c.ReplyError(m.ID, codeInternal, err.Error())
	}
	rel, err := ws.Rel(p.Path)
	if err != nil {
		return tr.c.ReplyError(m.ID, codeRefused, "kz refused the read: "+err.Error())
	}
	b, _, err := ws.ReadFile(rel, maxFileRead)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return tr.c.ReplyError(m.ID, -32002, "Resource not found: "+rel)
		}
		return tr.c.ReplyError(m.ID, codeInternal, err.Error())
	}
	text := string(b)
	if p.Line > 0 || p.Limit > 0 {
		lines := splitLines(text)
		from := max(p.Line-1, 0)
		from = min(from, len(lines))
		to := len(lines)
		if p.Limit > 0 {
			to = min(from+p.Limit, len(lines))
		}
		text = strings.Join(lines[from:to], "")
	}
	return tr.c.Reply(m.ID, map[string]string{"content": text})
}

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools"
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
func (tr *turnRun) request(ctx context.Context, m jsonrpc.Message) {
	var err error
	switch m.Method {
	case "session/request_permission":
		err = tr.permission(ctx, m)
	case "fs/write_text_file":
		err = tr.writeFile(ctx, m)
	case "fs/read_text_file":
		err = tr.readFile(ctx, m)
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
func (tr *turnRun) permission(ctx context.Context, m jsonrpc.Message) error {
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
	req := engine.PermissionRequest{ToolCallID: c.ToolCallID, Tool: tr.toolName(c), Input: tr.input(c), Paths: tr.paths(c)}
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
		if c.Kind == "edit" && req.Diff != "" {
			// The agent writes an edit through fs/write_text_file, which
			// kz serves: it can write what the person kept instead.
			req.Selection = engine.SelectionContent
		}
	}
	ans := tr.t.RequestPermission(ctx, req)
	if ctx.Err() != nil || tr.stopping {
		return tr.c.Reply(m.ID, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}})
	}
	var id string
	if ans.Allowed() {
		writes, err := tr.keptWrites(c, ans.Patch)
		if err != nil || writes == nil {
			why := "the person rejected every change"
			if err != nil {
				why = "kz could not apply the part the person kept: " + err.Error()
			}
			ans = engine.Answer{Decision: engine.DecisionDeny, Feedback: why}
		} else {
			maps.Copy(tr.allowedWrites, writes)
		}
	}
	if ans.Allowed() {
		id = pick(p.Options, "allow_once", "allow_always")
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

// env returns the tools environment kz's own file tools run in for this
// turn: the workspace (opened once) and the snapshot store that makes
// every write undoable.
func (tr *turnRun) env() (*tools.Env, error) {
	if tr.tenv != nil {
		return tr.tenv, nil
	}
	ws, err := workspace.Open(tr.dir)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	tr.ws = ws
	tr.tenv = tools.NewEnv(ws, tr.t.SessionID, tr.rt.cfg.Snapshots)
	return tr.tenv, nil
}

// writeFile serves fs/write_text_file through kz's write_file tool: the
// path is confined to the workspace (symlinks resolved), the write is
// judged by the gate like any other (unless the person just allowed
// exactly this content for this path through session/request_permission),
// the old content is snapshotted so the write can be undone, and the file
// is replaced atomically.
func (tr *turnRun) writeFile(ctx context.Context, m jsonrpc.Message) error {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Path == "" {
		return tr.c.ReplyError(m.ID, codeInvalidParams, "fs/write_text_file needs a path and content")
	}
	env, err := tr.env()
	if err != nil {
		return tr.c.ReplyError(m.ID, codeInternal, err.Error())
	}
	input, _ := json.Marshal(map[string]string{"path": p.Path, "content": p.Content})
	call, err := tools.WriteFile{}.Prepare(ctx, env, input)
	if err != nil {
		return tr.c.ReplyError(m.ID, codeRefused, "kz refused the write: "+err.Error())
	}
	rel, err := env.WS.Rel(p.Path)
	if err != nil {
		return tr.c.ReplyError(m.ID, codeRefused, "kz refused the write: "+err.Error())
	}
	rel = filepath.ToSlash(rel)
	want, ok := tr.allowedWrites[rel]
	toolID := want.toolID
	var kept []byte
	if ok && want.content == p.Content {
		kept = want.kept
	} else {
		tr.nwrites++
		toolID = fmt.Sprintf("acp_write_%d", tr.nwrites)
		req := call.Request()
		req.ToolCallID, req.Tool, req.Input = toolID, "write_text_file", tr.writeInput(p.Path)
		req.Selection = engine.SelectionContent
		// Absolute like the paths of the agent's own permission requests
		// (the named path, then the symlink-resolved one).
		for i, rp := range req.Paths {
			req.Paths[i] = tr.abs(rp)
		}
		ans := tr.t.RequestPermission(ctx, req)
		if !ans.Allowed() {
			msg := "kz denied the write to " + rel
			if ans.Feedback != "" {
				msg += ": " + ans.Feedback
			}
			return tr.c.ReplyError(m.ID, codeRefused, msg)
		}
		if kept, err = keptOfWrite(env, rel, req.Diff, ans.Patch); err != nil {
			return tr.c.ReplyError(m.ID, codeRefused, "kz could not write the part of "+rel+" the person kept: "+err.Error())
		}
	}
	if kept != nil {
		// The person kept part of the change: kz writes exactly that,
		// through the same confined, snapshotting write.
		input, _ := json.Marshal(map[string]string{"path": p.Path, "content": string(kept)})
		if call, err = (tools.WriteFile{}).Prepare(ctx, env, input); err != nil {
			return tr.c.ReplyError(m.ID, codeRefused, "kz refused the write: "+err.Error())
		}
	}
	delete(tr.allowedWrites, rel)
	rc := &tools.RunContext{Env: env, ToolCallID: toolID, Emit: func(ev engine.Event) {
		ev.ToolCallID, ev.Tool = toolID, "write_text_file"
		tr.t.Emit(ev)
	}}
	if _, err := call.Run(ctx, rc); err != nil {
		return tr.c.ReplyError(m.ID, codeInternal, "write "+rel+": "+err.Error())
	}
	tr.written[rel] = true
	return tr.c.Reply(m.ID, nil)
}

// writeInput is the tool input shown for a delegated write: the path only,
// the content is in the diff.
func (tr *turnRun) writeInput(path string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"path": tr.abs(path)})
	return b
}

// readFile serves fs/read_text_file from the workspace (kz does not offer
// it, but an agent may still ask).
func (tr *turnRun) readFile(ctx context.Context, m jsonrpc.Message) error {
	var p struct {
		Path  string `json:"path"`
		Line  int    `json:"line"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Path == "" {
		return tr.c.ReplyError(m.ID, codeInvalidParams, "fs/read_text_file needs a path")
	}
	env, err := tr.env()
	if err != nil {
		return tr.c.ReplyError(m.ID, codeInternal, err.Error())
	}
	rel, err := env.WS.Rel(p.Path)
	if err != nil {
		return tr.c.ReplyError(m.ID, codeRefused, "kz refused the read: "+err.Error())
	}
	res, err := env.WS.Resolve(rel)
	if err != nil {
		return tr.c.ReplyError(m.ID, codeRefused, "kz refused the read: "+err.Error())
	}
	// Reads pass the gate too (a read of a credential file inside the
	// workspace may need the person's consent), judged on both the named
	// and the symlink-resolved path.
	paths := []string{tr.abs(rel)}
	if res != rel {
		paths = append(paths, tr.abs(res))
	}
	in, _ := json.Marshal(map[string]string{"path": tr.abs(p.Path)})
	if ans := tr.t.RequestPermission(ctx, engine.PermissionRequest{Tool: "read_file", Input: in, Paths: paths}); !ans.Allowed() {
		return tr.c.ReplyError(m.ID, codeRefused, "kz denied the read of "+rel)
	}
	b, _, err := env.WS.ReadFile(res, maxFileRead)
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

// splitLines splits s after each newline, keeping them.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

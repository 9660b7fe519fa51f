package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
	"github.com/kaizen-code/kz/tools/mcp"
)

// What Codex 0.169 does for a call of an MCP tool kz handed it with
// approval mode "prompt" (mcp.go), verified with the real CLI
// (TestRealCodexMCPToolCallsPassKzGate,
// TestRealCodexMCPPersonConfigCannotBypassKz):
//
//   - the item/started of an mcpToolCall item (id = the model's call_id,
//     server, tool, arguments), then, before the server sees anything,
//     the server request mcpServer/elicitation/request, mode "form", an
//     empty requestedSchema and _meta {codex_approval_kind:
//     "mcp_tool_call", tool_name, tool_params}. It comes for every call,
//     the second call of a tool kz allowed before included, whatever the
//     tool's readOnlyHint.
//   - {"action": "accept", "content": {}} runs the call once. Codex can
//     remember an approval for the session or for good; kz never asks it
//     to: the gate keeps its own scopes.
//   - a JSON-RPC error makes Codex reject the call: the server never sees
//     it and the model gets "user rejected MCP tool call". kz answers every
//     refusal so. Under mode "prompt" a "decline" refused the call too,
//     but an earlier probe (another approval mode) saw "decline" and
//     "cancel" let the call run, so kz relies on the error only.
//   - a call the tool fails (isError) completes with status "failed" and
//     the tool's text as its result.
//
// errDenied is the JSON-RPC error code of a refused elicitation.
const errDenied = -32000

// approvalKindMCP is the _meta.codex_approval_kind of an elicitation that
// asks to run an MCP tool call.
const approvalKindMCP = "mcp_tool_call"

// elicitParams is the part of mcpServer/elicitation/request kz reads.
type elicitParams struct {
	ThreadID   string      `json:"threadId"`
	ServerName string      `json:"serverName"`
	Mode       string      `json:"mode"`
	Meta       *elicitMeta `json:"_meta"`
}

type elicitMeta struct {
	Kind       string          `json:"codex_approval_kind"`
	ToolName   string          `json:"tool_name"`
	ToolParams json.RawMessage `json:"tool_params"`
}

// elicitation answers one mcpServer/elicitation/request: an MCP tool call
// of a server kz handed Codex goes through kz's gate as mcp__SERVER__TOOL
// with the call's arguments, the name and input the native runtime and
// the other CLI runtimes give it, so that rules apply alike everywhere.
// Anything kz cannot map to such a call (another server's, a form a
// server itself asks the person to fill, malformed parameters) is
// refused: kz cannot show it faithfully, and a refusal is safe.
func (tr *turnRun) elicitation(ctx context.Context, m jsonrpc.Message) {
	req, err := tr.mcpRequest(m.Params)
	if err != nil {
		tr.rt.log.Warn("codex: mcp elicitation refused", "err", err)
		_ = tr.c.ReplyError(m.ID, errDenied, "kz refused the request: "+err.Error())
		return
	}
	ans := tr.t.RequestPermission(ctx, req)
	if ans.Allowed() && ctx.Err() == nil && !tr.stopping {
		if err := tr.c.Reply(m.ID, map[string]any{"action": "accept", "content": map[string]any{}}); err != nil {
			tr.rt.log.Warn("codex: could not answer an mcp approval", "err", err)
		}
		return
	}
	msg := "kz denied the call of " + req.Tool
	if ans.Feedback != "" {
		msg += ": " + ans.Feedback
	}
	if err := tr.c.ReplyError(m.ID, errDenied, msg); err != nil {
		tr.rt.log.Warn("codex: could not answer an mcp approval", "err", err)
	}
}

// mcpRequest maps an elicitation's parameters to the permission request
// of the MCP call it asks about.
func (tr *turnRun) mcpRequest(raw json.RawMessage) (engine.PermissionRequest, error) {
	var p elicitParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return engine.PermissionRequest{}, fmt.Errorf("malformed elicitation: %w", err)
	}
	if p.Meta == nil || p.Meta.Kind != approvalKindMCP || p.Mode != "form" {
		return engine.PermissionRequest{}, errors.New("kz answers only the approval of an MCP tool call, not a form or URL an MCP server asks the person to fill")
	}
	if p.ThreadID != "" && tr.threadID != "" && p.ThreadID != tr.threadID {
		return engine.PermissionRequest{}, fmt.Errorf("elicitation for thread %q, not this turn's", p.ThreadID)
	}
	if _, ok := tr.servers[p.ServerName]; !ok || p.ServerName == "" {
		return engine.PermissionRequest{}, fmt.Errorf("MCP server %q is not one kz configured", p.ServerName)
	}
	if p.Meta.ToolName == "" {
		return engine.PermissionRequest{}, errors.New("elicitation names no tool")
	}
	input := p.Meta.ToolParams
	switch {
	case len(input) == 0 || string(input) == "null":
		input = json.RawMessage(`{}`)
	case input[0] != '{' || !json.Valid(input):
		return engine.PermissionRequest{}, errors.New("the tool call's arguments are not a JSON object")
	}
	return engine.PermissionRequest{ToolCallID: tr.mcpCallID(p.ServerName, p.Meta.ToolName, input), Tool: mcp.ToolName(p.ServerName, p.Meta.ToolName),
		Input: input}, nil
}

// mcpCallID finds the mcpToolCall item an elicitation is about: Codex
// starts the item before it asks, and the elicitation names no item, so
// it is the started call, not yet asked about, of that server's tool with
// the same arguments. Among equal calls any one will do: they are judged
// alike. No such item (Codex did not report it) leaves the id empty.
func (tr *turnRun) mcpCallID(server, tool string, args json.RawMessage) string {
	var want any
	_ = json.Unmarshal(args, &want)
	for _, id := range slices.Sorted(maps.Keys(tr.items)) {
		it := tr.items[id]
		if it.Type != "mcpToolCall" || it.Server != server || it.Tool != tool || it.asked {
			continue
		}
		var got any
		if len(it.Arguments) > 0 {
			_ = json.Unmarshal(it.Arguments, &got)
		}
		if got == nil {
			got = map[string]any{}
		}
		if reflect.DeepEqual(got, want) {
			it.asked = true
			return id
		}
	}
	return ""
}

// methodElicitation is the server request Codex sends before each call of
// an MCP tool, and for forms an MCP server asks the person to fill.
const methodElicitation = "mcpServer/elicitation/request"

// mcpResult is an MCP tool call's result as Codex reports it.
type mcpResult struct {
	Content           []mcpContent    `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

type mcpContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType"`
}

// mcpInput is an MCP call's arguments as a tool input: always an object.
func mcpInput(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage(`{}`)
	}
	return args
}

// mcpOutput is the text of a finished MCP call, as kz's native runtime
// renders an MCP result: text content as it is, other content described.
// A call Codex reports failed is an error: one the tool itself failed
// (its result marked isError) carries the tool's text, one Codex refused
// or could not make carries Codex's message.
func mcpOutput(it *item) (string, bool) {
	isErr := it.Status != "completed" || it.Error != nil
	if it.Error != nil && it.Error.Message != "" {
		return it.Error.Message, true
	}
	var parts []string
	if it.Result != nil {
		for _, c := range it.Result.Content {
			switch c.Type {
			case "text":
				parts = append(parts, c.Text)
			default:
				parts = append(parts, fmt.Sprintf("[%s %s, not shown]", c.Type, c.MimeType))
			}
		}
		if len(parts) == 0 && len(it.Result.StructuredContent) > 0 && string(it.Result.StructuredContent) != "null" {
			parts = append(parts, string(it.Result.StructuredContent))
		}
	}
	if isErr && len(parts) == 0 {
		return it.Status, true
	}
	return strings.Join(parts, "\n"), isErr
}

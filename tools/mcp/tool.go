package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
)

// Tool is one tool of an MCP server as a kz tool. Its spec fails closed:
// it is read-only (and so offered outside full-autonomous mode, and run
// without asking) only when the server marks it readOnlyHint and the
// configuration trusts the server's annotations.
type Tool struct {
	m      *Manager
	server string
	// name is the tool's name on its server; spec.Name is kz's.
	name string
	spec tools.ToolSpec
}

var _ tools.Tool = (*Tool)(nil)

// newTool makes the kz tool of a server's tool.
func newTool(m *Manager, s Spec, t *sdk.Tool) (*Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || !json.Valid(schema) || bytes.Equal(schema, []byte("null")) {
		schema = []byte(`{"type":"object"}`)
	}
	ro := s.TrustAnnotations && t.Annotations != nil && t.Annotations.ReadOnlyHint
	destructive := !ro && (t.Annotations == nil || t.Annotations.DestructiveHint == nil || *t.Annotations.DestructiveHint)
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	desc = fmt.Sprintf("(MCP server %s, tool %s) %s", s.Name, t.Name, desc)
	return &Tool{m: m, server: s.Name, name: t.Name, spec: tools.ToolSpec{
		Name: ToolName(s.Name, t.Name), Schema: schema, Description: strings.TrimSpace(desc),
		ReadOnly: ro, Destructive: destructive, ConcurrencySafe: ro, Exposure: tools.ExposureNative,
	}}, nil
}

// Spec implements tools.Tool.
func (t *Tool) Spec() tools.ToolSpec { return t.spec }

// Prepare implements tools.Tool: the input must be one JSON object (the
// server validates it against its schema); no input is an empty object.
func (t *Tool) Prepare(_ context.Context, _ *tools.Env, input json.RawMessage) (tools.Call, error) {
	in := bytes.TrimSpace(input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		in = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if in[0] != '{' || json.Unmarshal(in, &obj) != nil {
		return nil, errors.New("tool input must be a JSON object")
	}
	return &call{t: t, args: json.RawMessage(in)}, nil
}

// call is one prepared call of an MCP tool.
type call struct {
	t    *Tool
	args json.RawMessage
}

// Request implements tools.Call. The gate judges an MCP tool by its name
// (rules such as mcp__server or mcp__server__tool), its mode and whether
// it is known read-only; it reads nothing of the input.
func (c *call) Request() engine.PermissionRequest { return engine.PermissionRequest{} }

// Run implements tools.Call: it calls the tool on its server. A result the
// server marks as an error comes back as an error result with its text.
func (c *call) Run(ctx context.Context, _ *tools.RunContext) (string, error) {
	res, err := c.t.m.call(ctx, c.t.server, c.t.name, c.args)
	if err != nil {
		return "", err
	}
	out := render(res)
	if res.IsError {
		if out == "" {
			out = "the tool reported an error"
		}
		return "", errors.New(out)
	}
	return out, nil
}

// render turns a result's content into the text the model reads. Binary
// content is described, not inlined: kz's tool results are text.
func render(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else {
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes, not shown]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

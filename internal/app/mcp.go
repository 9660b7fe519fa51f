package app

import (
	"context"

	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tui"
)

// MCP builds the MCP client of a session over the configured servers. A
// project's servers are in it only as "not trusted" until kz trust (the
// configuration marks them), and none starts before a turn or kz mcp list
// needs it. gate, when not nil, learns from it which MCP tools are
// read-only. It returns nil when no server is configured.
func (e *Env) MCP(gate *permission.Gate) *mcp.Manager {
	if len(e.Config.MCPServers) == 0 {
		return nil
	}
	m := mcp.NewManager(mcp.FromConfig(e.Config.MCPServers))
	if gate != nil {
		gate.SetMCPReadOnly(m.ReadOnly)
	}
	return m
}

// mcpLister shows the session's MCP servers in the TUI (/mcp).
type mcpLister struct{ m *mcp.Manager }

// MCPServers starts the servers that may start and lists them all.
func (l mcpLister) MCPServers(ctx context.Context) []tui.MCPServer {
	l.m.Start(ctx)
	var out []tui.MCPServer
	for _, s := range l.m.Statuses() {
		row := tui.MCPServer{Name: s.Name, Transport: string(s.Transport), State: string(s.State), Error: s.Error}
		for _, t := range s.Tools {
			name := t.Name
			if t.ReadOnly {
				name += " (read-only)"
			}
			row.Tools = append(row.Tools, name)
		}
		out = append(out, row)
	}
	return out
}

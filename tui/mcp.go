package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// MCPLister is the session's MCP servers as the TUI sees them (/mcp).
// internal/app implements it over tools/mcp; listing starts the servers
// that may start and have not, so it can block for their startup timeout
// and runs in a Cmd.
type MCPLister interface {
	MCPServers(ctx context.Context) []MCPServer
}

// MCPServer is one server in /mcp's list.
type MCPServer struct {
	Name, Transport, State string
	// Tools are the names the model sees (mcp__NAME__TOOL), " (read-only)"
	// appended to the read-only ones.
	Tools []string
	Error string
}

// cmdMCP lists the MCP servers with their state, tools and error.
func cmdMCP(m *Model, _ string) tea.Cmd {
	l, ctx := m.ext.mcp, m.ctx
	if l == nil {
		m.tr.notice("no MCP servers are configured (see [mcp.servers.NAME] in README.md)", "warn")
		m.tr.toBottom()
		return nil
	}
	m.tr.notice("starting the MCP servers…", "")
	m.tr.toBottom()
	return func() tea.Msg { return commandMsg{text: mcpList(l.MCPServers(ctx))} }
}

// mcpList renders the servers: one line each, then its tools or error.
func mcpList(servers []MCPServer) string {
	if len(servers) == 0 {
		return "no MCP servers are configured (see [mcp.servers.NAME] in README.md)"
	}
	var b strings.Builder
	for i, s := range servers {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s (%s) · %s · %d tools", s.Name, s.Transport, s.State, len(s.Tools))
		if s.Error != "" {
			b.WriteString("\n  error: " + s.Error)
		}
		for _, t := range s.Tools {
			b.WriteString("\n  " + t)
		}
	}
	return b.String()
}

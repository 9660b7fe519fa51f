package app

import (
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/permission"
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

package permission

import (
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// SetMCPReadOnly tells the gate which MCP tools are read-only: those
// whose server says readOnlyHint and whose configuration trusts that
// server's annotations. The MCP client learns it when it lists a server's
// tools, after the gate is built. Every other MCP tool is treated as one
// that writes: analysis-only and patch-proposal modes refuse it, and it is
// asked unless a rule allows it. Nil forgets every tool.
func (g *Gate) SetMCPReadOnly(readOnly func(tool string) bool) {
	if readOnly == nil {
		g.mcpReadOnly.Store(nil)
		return
	}
	g.mcpReadOnly.Store(&readOnly)
}

// isMCP reports whether the request is a call of an MCP tool.
func (e *eval) isMCP() bool {
	return strings.HasPrefix(e.q.Request.Tool, MCPToolPrefix) && len(e.q.Request.Tool) > len(MCPToolPrefix)
}

// mcpReadOnly reports whether the requested MCP tool is known read-only.
func (e *eval) mcpReadOnly() bool {
	f := e.g.mcpReadOnly.Load()
	return f != nil && (*f)(e.q.Request.Tool)
}

// mcpModePolicy refuses, outside full-autonomous mode, an MCP tool that is
// not known read-only: kz cannot see what it changes, so only a server's
// own trusted word that it changes nothing lets it run there.
func (e *eval) mcpModePolicy() (StageResult, bool) {
	if !e.isMCP() || e.q.Mode == engine.ModeFullAutonomous || e.mcpReadOnly() {
		return StageResult{}, false
	}
	return StageResult{Stage: StageMode, Decision: engine.DecisionDeny, Reason: fmt.Sprintf(
		"%s mode allows only MCP tools known to be read-only; %s is not (its server must mark it readOnlyHint and have trust_annotations = true)",
		e.q.Mode, e.q.Request.Tool)}, true
}

// mcpDefault answers an MCP tool that no rule, grant or permission mode
// decided: a known read-only one runs like kz's own reads, any other is
// asked.
func (e *eval) mcpDefault() StageResult {
	if e.mcpReadOnly() {
		return StageResult{Stage: StageAllow, Decision: engine.DecisionAllow,
			Reason: e.q.Request.Tool + " is read-only by the annotations of a server whose annotations you trust"}
	}
	return StageResult{Stage: StageAllow, Decision: engine.DecisionAsk,
		Reason: "ask before running " + e.q.Request.Tool + ": an MCP tool may change anything its server reaches"}
}

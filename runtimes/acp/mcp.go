package acp

import (
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/tools/mcp"
)

// mcpServer is one entry of the mcpServers parameter of session/new and
// session/load (ACP schema McpServer): a stdio server (name, command,
// args, env) or, with Type "http", a streamable HTTP one (name, url,
// headers). The arrays are pointers so that the fields of the other kind
// are left out while an empty one is still sent as []: Gemini CLI's
// schema requires them, null refused.
type mcpServer struct {
	Type    string       `json:"type,omitempty"`
	Name    string       `json:"name"`
	Command string       `json:"command,omitempty"`
	Args    *[]string    `json:"args,omitempty"`
	Env     *[]nameValue `json:"env,omitempty"`
	URL     string       `json:"url,omitempty"`
	Headers *[]nameValue `json:"headers,omitempty"`
}

// nameValue is ACP's EnvVariable and HttpHeader.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// acpMCPServers renders kz's MCP servers as ACP's mcpServers parameter,
// every ${VAR} expanded from environ (kz's own), as for Claude Code: the
// agent then needs none of those variables in its environment, which the
// commands it runs share. The result is sent to the agent only and never
// logged or stored. A server whose variable is not set is left out with a
// warning (it would start with an empty credential), and so is an HTTP
// server when the agent's initialize did not declare
// mcpCapabilities.http, since such an agent would refuse the whole
// session. The result is never nil: the parameter is required.
func acpMCPServers(servers []mcp.Spec, environ []string, httpOK bool, log *slog.Logger) []mcpServer {
	out := []mcpServer{}
	for _, s := range mcp.Runnable(servers) {
		switch s.Transport {
		case mcp.Stdio:
			env, err := s.ExpandedEnv(environ)
			if err != nil {
				log.Warn("acp: mcp server left out of the agent's session", "server", s.Name, "err", err)
				continue
			}
			args := append([]string{}, s.Args...)
			out = append(out, mcpServer{Name: s.Name, Command: s.Command, Args: &args, Env: nameValues(env)})
		case mcp.HTTP:
			if !httpOK {
				log.Warn("acp: mcp server left out of the agent's session: the agent takes no HTTP MCP servers (no mcpCapabilities.http)", "server", s.Name)
				continue
			}
			headers, err := s.ExpandedHeaders(environ)
			if err != nil {
				log.Warn("acp: mcp server left out of the agent's session", "server", s.Name, "err", err)
				continue
			}
			out = append(out, mcpServer{Type: "http", Name: s.Name, URL: s.URL, Headers: nameValues(headers)})
		}
	}
	return out
}

// nameValues lists m as ACP name/value pairs, sorted by name so that the
// parameter is the same on every run; never nil (Gemini refuses null).
func nameValues(m map[string]string) *[]nameValue {
	out := make([]nameValue, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, nameValue{Name: k, Value: m[k]})
	}
	return &out
}

// geminiMCPPrefix starts the name Gemini CLI gives an MCP tool:
// mcp_SERVER_TOOL, with every character outside [A-Za-z0-9_.:-] made _
// (its generateValidName).
const geminiMCPPrefix = "mcp_"

// kzMCPName maps the name an agent gives an MCP tool to kz's,
// mcp__SERVER__TOOL, so that kz's gate rules and cards are the same on
// every runtime. It reports false for a name that is not an MCP tool's.
// Gemini joins server and tool with a single _, which is ambiguous when
// the server's name holds one, so kz's own servers are matched first,
// the longest name winning ("my_srv" over "my"); a server kz does not
// know (one of the agent's own settings) is split at the first _, as
// Gemini itself does. Names already in kz's form are kept.
func kzMCPName(name string, servers []mcp.Spec) (string, bool) {
	if strings.HasPrefix(name, "mcp__") {
		return name, true
	}
	rest, ok := strings.CutPrefix(name, geminiMCPPrefix)
	if !ok || rest == "" {
		return "", false
	}
	best := ""
	for _, s := range servers {
		n := geminiValid(s.Name)
		if len(n) > len(best) && strings.HasPrefix(rest, n+"_") && len(rest) > len(n)+1 {
			best = n
		}
	}
	if best != "" {
		return mcp.ToolName(best, rest[len(best)+1:]), true
	}
	server, tool, ok := strings.Cut(rest, "_")
	if !ok || server == "" || tool == "" {
		return "", false
	}
	return mcp.ToolName(server, tool), true
}

// geminiValid is a server name as Gemini writes it in a tool's name.
func geminiValid(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r)) {
			return r
		}
		return '_'
	}, name)
}

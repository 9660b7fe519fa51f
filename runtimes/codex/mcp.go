package codex

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"github.com/kaizen-code/kz/tools/mcp"
)

// approvalPrompt is the approval mode kz gives every MCP server it hands
// Codex, as the server's default and for every tool: Codex then sends an
// mcpServer/elicitation/request before each call, which kz answers
// through its gate (elicit.go). The other modes are "auto" (Codex's
// default), under which Codex 0.169 called a tool its server marks
// readOnlyHint without asking, and "approve", under which it asked for
// nothing (both seen with the real CLI; see README).
const approvalPrompt = "prompt"

// mcpServers renders kz's MCP servers as Codex's mcp_servers config
// table, sent in the thread/start request's config (over the CLI's stdin,
// never on its command line or in a file): stdio servers get command,
// args and the whole environment they run with, which is the
// credential-free one kz gives every child plus the server's own env
// with ${VAR} expanded (mcp.Spec.ChildEnv), so that Codex adds nothing of
// its own environment; HTTP servers get url and http_headers with ${VAR}
// expanded. Expanding here keeps the variables out of Codex's
// environment, which every command it runs shares. A server whose
// variable is not set is left out, with a warning: Codex would start it
// with an empty credential.
//
// Each server is handed with approval mode "prompt" as its default;
// lockServers adds the same for every tool the person's own Codex config
// names.
func mcpServers(servers []mcp.Spec, environ []string, log *slog.Logger) map[string]any {
	out := map[string]any{}
	for _, s := range servers {
		if !s.Runnable() || !validServerName(s.Name) {
			if s.Runnable() {
				log.Warn("mcp server left out of codex's configuration: its name is not a plain word", "server", s.Name)
			}
			continue
		}
		entry := map[string]any{"enabled": true, "default_tools_approval_mode": approvalPrompt}
		switch s.Transport {
		case mcp.Stdio:
			env, err := s.ChildEnv(environ)
			if err != nil {
				log.Warn("mcp server left out of codex's configuration", "server", s.Name, "err", err)
				continue
			}
			m := make(map[string]any, len(env))
			for _, kv := range env {
				if k, v, ok := strings.Cut(kv, "="); ok {
					m[k] = v
				}
			}
			entry["command"], entry["args"], entry["env"] = s.Command, nonNil(s.Args), m
		case mcp.HTTP:
			headers, err := s.ExpandedHeaders(environ)
			if err != nil {
				log.Warn("mcp server left out of codex's configuration", "server", s.Name, "err", err)
				continue
			}
			entry["url"] = s.URL
			if len(headers) > 0 {
				entry["http_headers"] = headers
			}
		default:
			log.Warn("mcp server left out of codex's configuration: unknown transport", "server", s.Name, "transport", s.Transport)
			continue
		}
		if s.StartupTimeout > 0 {
			entry["startup_timeout_sec"] = math.Ceil(s.StartupTimeout.Seconds())
		}
		if s.ToolTimeout > 0 {
			entry["tool_timeout_sec"] = math.Ceil(s.ToolTimeout.Seconds())
		}
		out[s.Name] = entry
	}
	return out
}

// validServerName reports whether name can be a Codex server name that
// maps back to exactly one kz server: Codex names a server's tools
// mcp__NAME__tool and a name with "__" or characters outside
// [A-Za-z0-9_-] would be ambiguous or rewritten.
func validServerName(name string) bool {
	if name == "" || strings.Contains(name, "__") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func nonNil(a []string) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// personConfig is the part of Codex's effective configuration (config/read)
// kz reads: the person's own MCP servers and the tools their entries name.
type personConfig struct {
	Config struct {
		MCPServers map[string]struct {
			Tools map[string]json.RawMessage `json:"tools"`
		} `json:"mcp_servers"`
	} `json:"config"`
}

// lockServers makes every MCP call of the thread come to kz, given the
// servers kz hands Codex (mcpServers) and Codex's effective configuration
// raw (the result of config/read). Codex deep-merges the thread's config
// into the person's, so a person's tools.TOOL.approval_mode = "approve"
// under a server of kz's name outranks kz's default mode, and a person's
// own server with mode "approve" is called without asking anyone
// (TestRealCodexMCPPersonConfigCannotBypassKz, before this lock). So
// every tool the person's config names under one of kz's servers gets
// approval mode "prompt", and every server of the person's that kz did
// not hand is disabled, with mode "prompt" too in case it still starts:
// its elicitations are refused, since kz knows nothing of it. The
// result is the thread's mcp_servers, nil when there is nothing to send.
func lockServers(kz map[string]any, raw json.RawMessage) (map[string]any, error) {
	var pc personConfig
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &pc); err != nil {
			return nil, fmt.Errorf("codex config/read: %w", err)
		}
	}
	out := make(map[string]any, len(kz)+len(pc.Config.MCPServers))
	for name, e := range kz {
		out[name] = e
	}
	for name, srv := range pc.Config.MCPServers {
		entry, ours := out[name].(map[string]any)
		if !ours {
			entry = map[string]any{"enabled": false, "default_tools_approval_mode": approvalPrompt}
			out[name] = entry
		}
		if len(srv.Tools) == 0 {
			continue
		}
		tools := make(map[string]any, len(srv.Tools))
		for tool := range srv.Tools {
			tools[tool] = map[string]any{"approval_mode": approvalPrompt}
		}
		entry["tools"] = tools
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

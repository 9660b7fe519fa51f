package claudecode

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kaizen-code/kz/tools/mcp"
)

// mcpConfig renders kz's MCP servers as Claude Code's --mcp-config
// document ({"mcpServers": {NAME: {...}}}), with every ${VAR} expanded
// from environ. Expanding here, rather than passing the variables in
// Claude's environment for it to expand, keeps them out of the
// environment of every command Claude runs. A server whose variable is
// not set is left out, with a warning: Claude would start it with an
// empty credential.
func mcpConfig(servers []mcp.Spec, environ []string, log *slog.Logger) ([]byte, error) {
	out := map[string]any{}
	for _, s := range servers {
		switch s.Transport {
		case mcp.Stdio:
			env, err := s.ExpandedEnv(environ)
			if err != nil {
				log.Warn("mcp server left out of claude's configuration", "server", s.Name, "err", err)
				continue
			}
			out[s.Name] = map[string]any{"type": "stdio", "command": s.Command, "args": nonNil(s.Args), "env": env}
		case mcp.HTTP:
			headers, err := s.ExpandedHeaders(environ)
			if err != nil {
				log.Warn("mcp server left out of claude's configuration", "server", s.Name, "err", err)
				continue
			}
			out[s.Name] = map[string]any{"type": "http", "url": s.URL, "headers": headers}
		}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": out})
	if err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	return b, nil
}

func nonNil(a []string) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// writeMCPConfig writes the --mcp-config document to a file of its own,
// mode 0600 in a 0700 directory, rather than on the command line, where
// every process of the machine could read its credentials. remove deletes
// it once the CLI has exited.
func writeMCPConfig(servers []mcp.Spec, log *slog.Logger) (path string, remove func(), err error) {
	b, err := mcpConfig(servers, os.Environ(), log)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "kz-claude-mcp-")
	if err != nil {
		return "", nil, fmt.Errorf("mcp config: %w", err)
	}
	remove = func() { _ = os.RemoveAll(dir) }
	path = filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		remove()
		return "", nil, fmt.Errorf("mcp config: %w", err)
	}
	return path, remove, nil
}

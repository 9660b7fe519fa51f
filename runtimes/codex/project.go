package codex

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Codex layers a project's own .codex/config.toml (in the workspace and
// the directories up to its repository's root) over the person's config
// whenever the person trusted the project in Codex (projects.PATH.
// trust_level = "trusted", which Codex's first-run dialog writes). That
// file names programs Codex starts itself (mcp_servers, at the start of
// every thread), sets the environment of every command it runs
// (shell_environment_policy.set), and can change approvals and the
// sandbox: Codex 0.169 started a project's MCP server and gave its
// commands the project's variables under kz
// (TestRealProjectCodexConfigIgnored). Under kz the project's servers
// belong in kz's own [mcp.servers], started only after kz trust, so kz
// marks the workspace and every directory above it untrusted for Codex
// with a -c override, which outranks the person's config; Codex then
// reads no project layer, and no AGENTS.md either: kz hands every
// memory file to it itself (turn.go).

// untrustArgs are the arguments that make Codex trust neither dir nor any
// directory above it: one -c override whose inline table is deep-merged
// into the person's projects table, so that their other projects keep
// their trust. Keys are quoted TOML strings, since a -c key path would be
// split at the dots of a path.
func untrustArgs(dir string) []string {
	d := filepath.Clean(dir)
	if abs, err := filepath.Abs(d); err == nil {
		d = abs
	}
	var entries []string
	for {
		entries = append(entries, fmt.Sprintf("%s={trust_level=\"untrusted\"}", tomlString(d)))
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return []string{"-c", "projects={" + strings.Join(entries, ",") + "}"}
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

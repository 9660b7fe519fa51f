package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/internal/childenv"
)

// MCPFile is the [mcp] table as written: [mcp.servers.NAME] tables.
type MCPFile struct {
	Servers map[string]MCPServerFile `toml:"servers"`
}

// MCPServerFile is one [mcp.servers.NAME] table. A server is either a
// program kz starts and talks to over stdio (command, args, env) or a
// streamable HTTP endpoint (url, headers). Values of env and headers may
// name variables of kz's environment as ${VAR}: that is how a secret
// reaches a server without being written in a file.
type MCPServerFile struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// TrustAnnotations lets the server's readOnlyHint annotations count:
	// without it every tool of the server is treated as one that writes.
	TrustAnnotations bool `toml:"trust_annotations"`
	// StartupTimeout bounds the start and handshake (default 10s).
	StartupTimeout Duration `toml:"startup_timeout"`
	// ToolTimeout bounds one tool call (default 2m).
	ToolTimeout Duration `toml:"tool_timeout"`
	// Disabled keeps the server configured but never started.
	Disabled bool `toml:"disabled"`
}

// MCPTransport says how kz reaches an MCP server.
type MCPTransport string

// MCP transports.
const (
	MCPStdio MCPTransport = "stdio"
	MCPHTTP  MCPTransport = "http"
)

// MCPServer is one merged MCP server: its table, its name, the file that
// defines it, and whether kz may start it.
type MCPServer struct {
	MCPServerFile
	Name      string
	Transport MCPTransport
	// Source is the configuration file that defines the server.
	Source string
	// NotTrusted marks a server of a project file that is not trusted
	// (kz trust): it is listed, never started.
	NotTrusted bool
}

// mcpName is what a server name may hold. Its tools are called
// mcp__NAME__tool, so a name with "__" would make the split ambiguous,
// and the agent CLIs accept no other characters. The expression is compiled
// on first use, so that every kz process does not pay for it at start.
var mcpName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
})

// varRef is a ${VAR} reference inside an env or header value. The
// expression is compiled on first use, so that every kz process does not
// pay for it at start.
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([^}]*)\}`)
})

// envName is a valid environment variable name. The expression is compiled
// on first use, so that every kz process does not pay for it at start.
var envName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
})

// applyMCP merges one file's [mcp.servers.*] tables. A server of an
// untrusted project is kept, marked NotTrusted, so that kz mcp list can
// say why it does not run; it never replaces a server of the user file.
func (cfg *Config) applyMCP(m MCPFile, lines keyLines, full bool) error {
	names := slices.Sorted(maps.Keys(m.Servers))
	for _, name := range names {
		s := m.Servers[name]
		key := "mcp.servers." + name
		t, err := validateMCPServer(name, s, lines)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(cfg.MCPServers, func(x MCPServer) bool { return x.Name == name })
		if !full {
			what := "mcp server " + name
			cfg.Untrusted = append(cfg.Untrusted, what)
			if i >= 0 {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %s ignored until you trust this folder (kz trust)", lines.at(key), what))
				continue
			}
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %s not started until you trust this folder (kz trust)", lines.at(key), what))
		}
		srv := MCPServer{MCPServerFile: s, Name: name, Transport: t, Source: lines.file, NotTrusted: !full}
		if i >= 0 {
			cfg.MCPServers[i] = srv
		} else {
			cfg.MCPServers = append(cfg.MCPServers, srv)
		}
	}
	return nil
}

// validateMCPServer checks one server table and returns its transport.
// Errors name the file, line, server and field.
func validateMCPServer(name string, s MCPServerFile, lines keyLines) (MCPTransport, error) {
	key := "mcp.servers." + name
	bad := func(field, format string, args ...any) error {
		k := key
		if field != "" {
			k += "." + field
		}
		return fmt.Errorf("%s: mcp server %s: %s", lines.at(k), name, fmt.Sprintf(format, args...))
	}
	if !mcpName().MatchString(name) || strings.Contains(name, "__") {
		return "", bad("", "bad name %q: use letters, digits, - and single _ (its tools are called mcp__%s__TOOL)", name, name)
	}
	var t MCPTransport
	switch {
	case s.Command != "" && s.URL != "":
		return "", bad("url", "set either command (a stdio server) or url (an HTTP server), not both")
	case s.Command != "":
		t = MCPStdio
		if len(s.Headers) > 0 {
			return "", bad("headers", "headers are for url servers; a stdio server takes env")
		}
	case s.URL != "":
		t = MCPHTTP
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", bad("url", "%q: want an http:// or https:// URL", s.URL)
		}
		if u.User != nil {
			return "", bad("url", "credentials in the URL would be stored with the config; put them in headers as ${VAR}")
		}
		if len(s.Env) > 0 || len(s.Args) > 0 {
			return "", bad("env", "env and args are for stdio servers (command)")
		}
	default:
		return "", bad("command", "set command (a stdio server) or url (a streamable HTTP server)")
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if !envName().MatchString(k) {
			return "", bad("env."+k, "%q is not a variable name", k)
		}
		if err := checkRefs(s.Env[k]); err != nil {
			return "", bad("env."+k, "%v", err)
		}
		if childenv.Secret(k) && !varRef().MatchString(s.Env[k]) {
			return "", bad("env."+k, "looks like a secret written in the file; name the variable that holds it: %s = \"${%s}\"", k, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return "", bad("headers."+k, "%q is not a header name", k)
		}
		v := s.Headers[k]
		if err := checkRefs(v); err != nil {
			return "", bad("headers."+k, "%v", err)
		}
		if secretHeader(k) && !varRef().MatchString(v) {
			return "", bad("headers."+k, "a credential must not be written in the file; name the variable that holds it, e.g. \"Bearer ${TOKEN}\"")
		}
	}
	return t, nil
}

// checkRefs checks the ${VAR} references of a value.
func checkRefs(v string) error {
	for _, m := range varRef().FindAllStringSubmatch(v, -1) {
		if !envName().MatchString(m[1]) {
			return fmt.Errorf("${%s}: not a variable name", m[1])
		}
	}
	if strings.Count(v, "${") != len(varRef().FindAllString(v, -1)) {
		return fmt.Errorf("%q: unclosed ${", v)
	}
	return nil
}

// secretHeader says a header carries a credential by its name.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "authorization" || n == "proxy-authorization" || n == "cookie" || childenv.Secret(strings.ToUpper(strings.ReplaceAll(n, "-", "_")))
}

// VarRefs returns the variables a value names as ${VAR}, in order.
func VarRefs(v string) []string {
	var out []string
	for _, m := range varRef().FindAllStringSubmatch(v, -1) {
		out = append(out, m[1])
	}
	return out
}

// ExpandVars replaces every ${VAR} of v with lookup(VAR). It fails, naming
// the variable, when one is not set: a server started with an empty token
// fails later with a message that does not say why.
func ExpandVars(v string, lookup func(string) (string, bool)) (string, error) {
	var missing string
	out := varRef().ReplaceAllStringFunc(v, func(ref string) string {
		name := ref[2 : len(ref)-1]
		val, ok := lookup(name)
		if !ok && missing == "" {
			missing = name
		}
		return val
	})
	if missing != "" {
		return "", fmt.Errorf("%s is not set", missing)
	}
	return out, nil
}

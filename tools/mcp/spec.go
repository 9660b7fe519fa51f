// Package mcp is kz's MCP client: it starts the configured MCP servers
// (stdio programs and streamable HTTP endpoints) with the official MCP Go
// SDK, lists their tools and offers each as a kz tool named
// mcp__SERVER__TOOL, so that every call passes kz's permission gate and
// its result is capped and stored like any tool's. The agent CLIs get the
// same Specs, which each runtime package renders in its CLI's own format,
// so that one configuration serves every runtime.
package mcp

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/config"
)

// Transport says how kz reaches a server.
type Transport = config.MCPTransport

// Transports.
const (
	Stdio = config.MCPStdio
	HTTP  = config.MCPHTTP
)

// Default timeouts of a server that sets none.
const (
	DefaultStartupTimeout = 10 * time.Second
	DefaultToolTimeout    = 2 * time.Minute
)

// Spec is one configured server as kz starts it and hands it to the agent
// CLIs. Env and Headers keep the ${VAR} references as written: they are
// expanded only at the moment a process or a request needs them, so that
// no secret is held in a Spec, a log line or a stored event.
type Spec struct {
	Name      string
	Transport Transport
	Command   string
	Args      []string
	// Env is the server's configured environment, ${VAR} unexpanded.
	Env map[string]string
	URL string
	// Headers are the HTTP headers, ${VAR} unexpanded.
	Headers          map[string]string
	TrustAnnotations bool
	StartupTimeout   time.Duration
	ToolTimeout      time.Duration
	// NotTrusted marks a server of an untrusted project file; Disabled
	// one the configuration turns off. Neither is ever started.
	NotTrusted bool
	Disabled   bool
	// Source is the configuration file that defines the server.
	Source string
}

// Runnable reports whether kz may start the server.
func (s Spec) Runnable() bool { return !s.NotTrusted && !s.Disabled }

// FromConfig turns the merged configuration's servers into specs.
func FromConfig(servers []config.MCPServer) []Spec {
	out := make([]Spec, 0, len(servers))
	for _, s := range servers {
		sp := Spec{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: slices.Clone(s.Args), Env: s.Env, URL: s.URL,
			Headers: s.Headers, TrustAnnotations: s.TrustAnnotations, StartupTimeout: s.StartupTimeout.Duration,
			ToolTimeout: s.ToolTimeout.Duration, NotTrusted: s.NotTrusted, Disabled: s.Disabled, Source: s.Source}
		if sp.StartupTimeout <= 0 {
			sp.StartupTimeout = DefaultStartupTimeout
		}
		if sp.ToolTimeout <= 0 {
			sp.ToolTimeout = DefaultToolTimeout
		}
		out = append(out, sp)
	}
	return out
}

// Runnable returns the specs kz may start, for the agent CLIs.
func Runnable(specs []Spec) []Spec {
	var out []Spec
	for _, s := range specs {
		if s.Runnable() {
			out = append(out, s)
		}
	}
	return out
}

// ToolName is the name kz and the agent CLIs give a server's tool:
// mcp__SERVER__TOOL, with every character a model API refuses in a tool
// name replaced by _ and the whole cut to 64 bytes, as Claude Code does.
func ToolName(server, tool string) string {
	var b strings.Builder
	b.WriteString("mcp__")
	b.WriteString(server)
	b.WriteString("__")
	for _, r := range tool {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	n := b.String()
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// lookupEnv finds a variable in environ.
func lookupEnv(environ []string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := len(environ) - 1; i >= 0; i-- {
			if name, v, ok := strings.Cut(environ[i], "="); ok && name == k {
				return v, true
			}
		}
		return "", false
	}
}

// ChildEnv is the environment of a stdio server: the credential-free
// environment every child of kz gets (childenv.Base), plus the server's
// configured env with ${VAR} expanded from environ (kz's own).
func (s Spec) ChildEnv(environ []string) ([]string, error) {
	env, err := s.ExpandedEnv(environ)
	if err != nil {
		return nil, err
	}
	var cfg []string
	for _, k := range sortedKeys(env) {
		cfg = append(cfg, k+"="+env[k])
	}
	return childenv.Build(environ, childenv.Spec{Config: cfg}), nil
}

// ExpandedEnv is the server's configured env (only that, not the rest of
// a child's environment) with every ${VAR} expanded from environ, the
// last setting of a variable winning as in a process's environment. This
// is what kz hands an agent CLI that starts the server itself (Claude
// Code's --mcp-config, ACP's session/new): expanded by kz, the variables
// need not be in the agent's environment, which every command it runs
// shares. A variable that is not set fails, naming the server, the key
// and the variable (the first in key order, so the message is stable).
func (s Spec) ExpandedEnv(environ []string) (map[string]string, error) {
	return s.expand("env", s.Env, environ)
}

// ExpandedHeaders are the HTTP headers with ${VAR} expanded from environ,
// as ExpandedEnv.
func (s Spec) ExpandedHeaders(environ []string) (map[string]string, error) {
	return s.expand("header", s.Headers, environ)
}

// expand expands every value of m, one of the server's what.
func (s Spec) expand(what string, m map[string]string, environ []string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		v, err := config.ExpandVars(m[k], lookupEnv(environ))
		if err != nil {
			return nil, fmt.Errorf("mcp server %s: %s %s: %w", s.Name, what, k, err)
		}
		out[k] = v
	}
	return out, nil
}

// EnvRefs lists the variables the server's env and headers name, sorted:
// an agent CLI that expands them itself must get them in its environment.
func (s Spec) EnvRefs() []string {
	var out []string
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for _, v := range m {
			out = append(out, config.VarRefs(v)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// environ is kz's own environment; a variable so tests can replace it.
var environ = os.Environ

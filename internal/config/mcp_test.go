package config

import (
	"strings"
	"testing"
)

func TestMCPServersLoad(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, `
[mcp.servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}", LOG_LEVEL = "debug" }
trust_annotations = true
startup_timeout = "20s"

[mcp.servers.docs]
url = "https://docs.example.com/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}", X-Client = "kz" }
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCPServers) != 2 {
		t.Fatalf("servers %+v", cfg.MCPServers)
	}
	docs, gh := cfg.MCPServers[0], cfg.MCPServers[1]
	if docs.Name != "docs" || docs.Transport != MCPHTTP || docs.Headers["Authorization"] != "Bearer ${DOCS_TOKEN}" || docs.Source != p.UserConfig {
		t.Errorf("docs %+v", docs)
	}
	if gh.Name != "github" || gh.Transport != MCPStdio || !gh.TrustAnnotations || gh.StartupTimeout.Seconds() != 20 || gh.NotTrusted {
		t.Errorf("github %+v", gh)
	}
}

// Every mistake is reported with the file, the line, the server and the
// field.
func TestMCPServerErrorsNameServerAndField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, want string }{
		{"[mcp.servers.a]\nargs = [\"x\"]\n", "config.toml:1: mcp server a: set command (a stdio server) or url"},
		{"[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://h/\"\n", "config.toml:3: mcp server a: set either command"},
		{"[mcp.servers.a]\nurl = \"ftp://h/\"\n", "config.toml:2: mcp server a: \"ftp://h/\": want an http:// or https:// URL"},
		{"[mcp.servers.a]\nurl = \"https://u:pw@h/\"\n", "config.toml:2: mcp server a: credentials in the URL"},
		{"[mcp.servers.a]\nurl = \"https://h/\"\n\n[mcp.servers.a.headers]\nAuthorization = \"Bearer abc123\"\n", "config.toml:5: mcp server a: a credential must not be written in the file"},
		{"[mcp.servers.a]\nurl = \"https://h/\"\nheaders = { X-Api-Key = \"abc\" }\n", "config.toml:3: mcp server a: a credential must not be written"},
		{"[mcp.servers.a]\ncommand = \"x\"\nenv = { API_TOKEN = \"abc\" }\n", "config.toml:3: mcp server a: looks like a secret written in the file"},
		{"[mcp.servers.a]\ncommand = \"x\"\nenv = { A = \"${1BAD}\" }\n", "config.toml:3: mcp server a: ${1BAD}: not a variable name"},
		{"[mcp.servers.a]\ncommand = \"x\"\nenv = { A = \"${OPEN\" }\n", "unclosed ${"},
		{"[mcp.servers.a]\ncommand = \"x\"\nheaders = { A = \"b\" }\n", "config.toml:3: mcp server a: headers are for url servers"},
		{"[mcp.servers.a__b]\ncommand = \"x\"\n", "mcp server a__b: bad name"},
		{"[mcp.servers.\"a b\"]\ncommand = \"x\"\n", "bad name \"a b\""},
		{"[mcp.servers.a]\ncommand = \"x\"\nstartup_timeout = \"soon\"\n", "config.toml:3"},
		{"[mcp.servers.a]\ncommand = \"x\"\nport = 3\n", "unknown key \"mcp.servers.a.port\""},
	} {
		p := paths(t)
		write(t, p.UserConfig, c.body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
}

// An untrusted project's servers are listed as not trusted and never
// replace the user's; once trusted, they are like the user's.
func TestMCPProjectServersNeedTrust(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, "[mcp.servers.shared]\ncommand = \"user-server\"\n")
	write(t, p.ProjectFile, "[mcp.servers.shared]\ncommand = \"project-server\"\n\n[mcp.servers.proj]\ncommand = \"proj-server\"\n")
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]MCPServer{}
	for _, s := range cfg.MCPServers {
		byName[s.Name] = s
	}
	if s := byName["shared"]; s.Command != "user-server" || s.NotTrusted {
		t.Errorf("shared %+v", s)
	}
	if s := byName["proj"]; s.Command != "proj-server" || !s.NotTrusted || s.Source != p.ProjectFile {
		t.Errorf("proj %+v", s)
	}
	if !strings.Contains(strings.Join(cfg.Untrusted, ","), "mcp server proj") || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "kz trust") {
		t.Errorf("untrusted %v warnings %v", cfg.Untrusted, cfg.Warnings)
	}
	if err := Trust(p.DataDir, p.ProjectFile); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.MCPServers {
		if s.NotTrusted || s.Name == "shared" && s.Command != "project-server" {
			t.Errorf("after trust: %+v", s)
		}
	}
	// Changing the file withdraws the trust.
	write(t, p.ProjectFile, "[mcp.servers.proj]\ncommand = \"other-server\"\n")
	cfg, err = Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.MCPServers {
		if s.Name == "proj" && !s.NotTrusted {
			t.Errorf("a changed file kept its trust: %+v", s)
		}
	}
}

func TestExpandVars(t *testing.T) {
	t.Parallel()
	env := map[string]string{"A": "1", "EMPTY": ""}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got, err := ExpandVars("x${A}y${EMPTY}z", look); err != nil || got != "x1yz" {
		t.Errorf("got %q %v", got, err)
	}
	if _, err := ExpandVars("${A}${MISSING}", look); err == nil || err.Error() != "MISSING is not set" {
		t.Errorf("missing: %v", err)
	}
}

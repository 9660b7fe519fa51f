package permission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestReadRulesEverywhere (class: Read rules across bash, grep, glob and
// list_dir): Read(…) deny and ask rules apply to every read, not only
// read_file: kz's and other agents' search and list tools (their root), a
// shell command's redirections and read targets, and literal arguments
// that name a covered path.
func TestReadRulesEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for p, c := range map[string]string{"secret/a.txt": "s", "secret/sub/b.txt": "s", "docs/x.md": "d", "notes/private.md": "p"} {
		full := filepath.Join(f.ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rules := Rules{Deny: []string{"Read(./secret/**)"}, Ask: []string{"Read(notes/private.md)"}}
	cases := []struct {
		name   string
		tool   string
		cmd    string
		paths  []string
		rules  *Rules
		pm     engine.PermissionMode
		want   engine.Decision
		reason string
		// orDeny accepts a deny where an ask is wanted: once the
		// analysis knows the program reads its argument, the rule denies.
		orDeny bool
	}{
		{name: "read_file denied", tool: "read_file", paths: []string{"secret/a.txt"}, want: engine.DecisionDeny, reason: "matches the rule"},
		{name: "grep rooted in the denied dir", tool: "grep", paths: []string{"secret"}, want: engine.DecisionDeny},
		{name: "glob below the denied dir", tool: "glob", paths: []string{"secret/sub"}, want: engine.DecisionDeny},
		{name: "list_dir of the denied dir", tool: "list_dir", paths: []string{"secret"}, want: engine.DecisionDeny},
		{name: "Claude Code Grep", tool: "Grep", paths: []string{filepath.Join("secret", "sub")}, want: engine.DecisionDeny},
		{name: "Claude Code LS", tool: "LS", paths: []string{"secret"}, want: engine.DecisionDeny},
		{name: "Gemini search_file_content", tool: "search_file_content", paths: []string{"secret"}, want: engine.DecisionDeny},
		{name: "grep of the workspace root runs (results are filtered)", tool: "grep", paths: []string{"."}, want: engine.DecisionAllow},
		{name: "list_dir of another dir runs", tool: "list_dir", paths: []string{"docs"}, want: engine.DecisionAllow},
		{name: "ask rule asks for read_file", tool: "read_file", paths: []string{"notes/private.md"}, want: engine.DecisionAsk, reason: "matches the rule"},
		{name: "ask rule asks for bash redirect", cmd: "wc -l < notes/private.md", want: engine.DecisionAsk},
		{name: "bash redirect denied", cmd: "cat < secret/a.txt", want: engine.DecisionDeny, reason: "reads secret/a.txt"},
		{name: "bash redirect after cd denied", cmd: "cd secret && cat < a.txt", want: engine.DecisionDeny},
		{name: "bash redirect through .. denied", cmd: "cat < docs/../secret/a.txt", want: engine.DecisionDeny},
		{name: "bash redirect glob may match: asked", cmd: "cat < secret/*.txt", want: engine.DecisionAsk},
		{name: "bash argument asks at least", cmd: "cat secret/a.txt", want: engine.DecisionAsk, reason: "secret/a.txt", orDeny: true},
		{name: "bash argument to an unknown program asks", cmd: "nl secret/sub/b.txt", want: engine.DecisionAsk, orDeny: true},
		{name: "bash argument in yolo still asks", cmd: "grep -r x secret", pm: engine.PermissionYolo, want: engine.DecisionAsk, orDeny: true},
		{name: "unrelated bash read runs", cmd: "cat < docs/x.md", want: engine.DecisionAllow},
		{name: "unrelated glob runs", cmd: "wc -l docs/*.md", want: engine.DecisionAllow},
		{name: "bare Read deny covers bash reads", cmd: "wc -l < docs/x.md", rules: &Rules{Deny: []string{"Read"}}, want: engine.DecisionDeny},
		{name: "bare Read deny covers grep", tool: "grep", paths: []string{"."}, rules: &Rules{Deny: []string{"Read"}}, want: engine.DecisionDeny},
		{name: "home rule covers a bash read of home", cmd: "cat < ~/x", rules: &Rules{Deny: []string{"Read(~/x)"}}, want: engine.DecisionDeny},
		{name: "any-depth rule covers a nested file", tool: "read_file", paths: []string{"docs/x.md"}, rules: &Rules{Deny: []string{"Read(x.md)"}}, want: engine.DecisionDeny},
		{name: "write target is not a read", cmd: "echo x > secret/new.txt", rules: &Rules{Deny: []string{"Read(./secret/**)"}, Allow: []string{"Bash(echo:*)", "Edit(**)"}}, want: engine.DecisionAllow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := rules
			if c.rules != nil {
				rs = *c.rules
			}
			g := f.gate(t, Options{User: rs})
			q := gateCase{tool: c.tool, cmd: c.cmd, paths: c.paths, pm: c.pm}.query(f.ws)
			rep := g.Evaluate(context.Background(), q)
			if rep.Decision != c.want && !(c.orDeny && rep.Decision == engine.DecisionDeny) {
				t.Fatalf("decision %s, want %s (stage %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Reason)
			}
			if !strings.Contains(rep.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", rep.Reason, c.reason)
			}
		})
	}
}

// TestReadDecision: the file tools ask the gate about every file they
// come across; Read rules and credentials decide.
func TestReadDecision(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: Rules{Deny: []string{"Read(./secret/**)"}, Ask: []string{"Read(*.log)"}, Allow: []string{"Read(./secret/ok.txt)"}}})
	for p, want := range map[string]engine.Decision{
		"secret/a.txt":             engine.DecisionDeny,
		"secret/ok.txt":            engine.DecisionDeny,
		"secret":                   engine.DecisionDeny,
		"src/main.go":              "",
		"build/x.log":              engine.DecisionAsk,
		".env":                     engine.DecisionDeny,
		"config/.env.production":   engine.DecisionDeny,
		"certs/server.key":         engine.DecisionDeny,
		"README.md":                "",
		"secretive/a.txt":          "",
		"docs/id_rsa.pub":          engine.DecisionDeny,
		"sub/.ssh/authorized_keys": engine.DecisionDeny,
	} {
		d, why := g.ReadDecision(f.ws, filepath.Join(f.ws, p))
		if d != want {
			t.Errorf("%s: %q (%s), want %q", p, d, why, want)
		}
		if d != "" && why == "" {
			t.Errorf("%s: no rule or reason", p)
		}
	}
	if d, _ := g.ReadDecision(f.ws, filepath.Join(f.home, ".ssh", "id_ed25519")); d != engine.DecisionDeny {
		t.Errorf("home key: %q", d)
	}
}

// TestReadDenyRoots: the roots the sandbox can hide for Read deny rules.
func TestReadDenyRoots(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: Rules{Deny: []string{"Read(./secret/**)", "Read(~/notes.txt)", "Read(.env)", "Read(./**/x)",
		"Read(//etc/shadow)", "Read(config/*.pem)", "Read", "Read(~/**)", "Read(../*)"}, Ask: []string{"Read(./docs/**)"}}})
	got := g.ReadDenyRoots(f.ws)
	want := []string{filepath.Join(f.ws, "secret"), filepath.Join(f.home, "notes.txt"), "/etc/shadow", filepath.Join(f.ws, "config")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("roots\n%q\nwant\n%q", got, want)
	}
}

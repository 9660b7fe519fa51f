package tools

// Class "Read rules in the search tools": Read(…) deny and ask rules, and
// credential files, hold inside the results of grep, glob and list_dir,
// not only for the root path the gate judged. The rules are real rules of
// the real gate (gateReadPolicy asks permission.Gate.Evaluate about a
// read_file of each entry); the files are real files.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// gateReadPolicy is a ReadPolicy on the real gate: the decision the gate
// gives a read_file of the entry. The reason is the rule when one decided
// (it is the same for every file the rule covers) and the gate's reason
// otherwise.
type gateReadPolicy struct {
	g     *permission.Gate
	calls atomic.Int64
}

func (p *gateReadPolicy) ReadDecision(ws, abs string) (engine.Decision, string) {
	p.calls.Add(1)
	rep := p.g.Evaluate(context.Background(), engine.GateQuery{Workspace: ws, Mode: engine.ModeFullAutonomous,
		PermissionMode: engine.PermissionAsk, Request: engine.PermissionRequest{Tool: "read_file", Paths: []string{abs}}})
	if rep.Rule != "" {
		return rep.Decision, rep.Rule
	}
	return rep.Decision, rep.Reason
}

// readRulesFixture is a workspace with public files, files that rules
// cover, credential files in several spellings and links into a denied
// directory. Every secret line holds "secret-"; every line holds MARK.
func readRulesFixture(t *testing.T, rules permission.Rules) (*fixture, *gateReadPolicy) {
	t.Helper()
	f := newFixture(t)
	for rel, content := range map[string]string{
		"src/main.go":             "package main // MARK public-src\n",
		"docs/readme.md":          "MARK asked-doc\n",
		"secrets/prod.txt":        "MARK secret-prod\n",
		"secrets/nested/deep.txt": "MARK secret-deep\n",
		"config/app.secret.yaml":  "MARK secret-yaml\n",
		"config/app.yaml":         "MARK public-yaml\n",
		".env":                    "MARK=secret-env\n",
		".env.local":              "MARK=secret-envlocal\n",
		"sub/.ENV":                "MARK=secret-envupper\n",
		"sub/.Env.Production":     "MARK=secret-envmixed\n",
		"keys/server.key":         "MARK secret-key\n",
		"keys/README":             "MARK public-keys-readme\n",
		"id_rsa":                  "MARK secret-idrsa\n",
		".ssh/config":             "MARK secret-sshdir\n",
		".hidden/notes.txt":       "MARK secret-hidden\n",
		".hidden.txt":             "MARK public-hidden-file\n",
	} {
		f.write(t, rel, content)
	}
	for link, target := range map[string]string{"link-to-secrets": "secrets", "notes-link": "secrets/prod.txt"} {
		if err := os.Symlink(target, filepath.Join(f.ws.Dir(), link)); err != nil {
			t.Fatal(err)
		}
	}
	g, err := permission.New(permission.Options{Home: filepath.Join(f.base, "home"), User: rules})
	if err != nil {
		t.Fatal(err)
	}
	p := &gateReadPolicy{g: g}
	f.env.SetReadPolicy(p)
	return f, p
}

// standardRules deny a directory, a glob pattern, a hidden directory and
// .env, and ask before docs/.
var standardRules = permission.Rules{
	Deny: []string{"Read(secrets/**)", "Read(**/*.secret.yaml)", "Read(.hidden)", "Read(.env)"},
	Ask:  []string{"Read(docs/**)"},
}

func TestReadRulesInSearchResults(t *testing.T) {
	t.Parallel()
	type want struct {
		err      bool
		has      []string
		hasNot   []string
		withheld string
	}
	allSecrets := []string{"secret-"}
	cases := []struct {
		name  string
		rules *permission.Rules // nil: standardRules
		// noPolicy runs without a ReadPolicy: only the credential check.
		noPolicy bool
		tool     string
		input    map[string]any
		want     want
	}{
		{name: "grep the workspace skips denied, asked and credential files", tool: "grep",
			input: map[string]any{"pattern": "MARK"},
			want: want{has: []string{"public-src", "public-yaml", "public-hidden-file", "public-keys-readme"},
				hasNot: append(allSecrets, "asked-doc"), withheld: "denied by the permission rules"}},
		{name: "grep files_with_matches names no denied or credential file", tool: "grep",
			input: map[string]any{"pattern": "MARK", "output_mode": "files_with_matches"},
			want: want{has: []string{"src/main.go"}, hasNot: []string{"secrets/", ".env", "server.key", "id_rsa", ".ssh", ".hidden/", "app.secret", "docs/", ".ENV", ".Env"},
				withheld: "credential"}},
		{name: "grep count counts no denied file", tool: "grep",
			input: map[string]any{"pattern": "MARK", "output_mode": "count"},
			want:  want{has: []string{"src/main.go:1"}, hasNot: []string{"secrets/", ".env", "docs/"}, withheld: "withheld"}},
		{name: "grep with an include glob that matches denied files", tool: "grep",
			input: map[string]any{"pattern": "MARK", "glob": "*.txt"},
			want:  want{hasNot: allSecrets, withheld: "denied by the permission rules"}},
		{name: "grep with an include glob naming .env spelled otherwise", tool: "grep",
			input: map[string]any{"pattern": "MARK", "glob": "**/.[eE][nN][vV]*"},
			want:  want{hasNot: allSecrets, withheld: "credential"}},
		{name: "grep of a denied directory", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": "secrets"}, want: want{err: true, hasNot: allSecrets}},
		{name: "grep of a nested denied directory", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": "secrets/nested"}, want: want{err: true, hasNot: allSecrets}},
		{name: "grep of a link into a denied directory", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": "link-to-secrets"}, want: want{err: true, hasNot: allSecrets}},
		{name: "grep of a file link into a denied directory", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": "notes-link"}, want: want{err: true, hasNot: allSecrets}},
		{name: "grep of .env itself shows no content", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": ".env.local"}, want: want{hasNot: allSecrets, withheld: "credential"}},
		{name: "grep of a directory the person was asked about searches it", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": "docs"}, want: want{has: []string{"asked-doc"}}},
		{name: "grep of a case variant of .env", tool: "grep",
			input: map[string]any{"pattern": "MARK", "path": "sub"}, want: want{hasNot: allSecrets, withheld: "2 credential files"}},
		{name: "grep with no policy still withholds credentials", noPolicy: true, tool: "grep",
			input: map[string]any{"pattern": "MARK"},
			want: want{has: []string{"public-src", "secret-prod", "asked-doc"},
				hasNot: []string{"secret-env", "secret-key", "secret-idrsa", "secret-sshdir"}, withheld: "credential"}},
		{name: "glob everything omits denied entries", tool: "glob",
			input: map[string]any{"pattern": "**/*"},
			want: want{has: []string{"src/main.go", "docs/readme.md", ".env.local", "config/app.yaml"},
				hasNot: []string{"secrets/", ".hidden/", "app.secret.yaml", "\n.env\n"}, withheld: "denied by the permission rules"}},
		{name: "glob spelling .env with a class", tool: "glob",
			input: map[string]any{"pattern": ".[e]nv"}, want: want{hasNot: []string{".env"}, withheld: "1 entry denied"}},
		{name: "glob spelling .env with a star", tool: "glob",
			input: map[string]any{"pattern": "*env"}, want: want{hasNot: []string{".env"}, withheld: "denied"}},
		{name: "glob spelling .env with a question mark at any depth", tool: "glob",
			input: map[string]any{"pattern": "**/.en?"}, want: want{hasNot: []string{".env"}, withheld: "denied"}},
		{name: "glob into a denied directory", tool: "glob",
			input: map[string]any{"pattern": "secrets/**"}, want: want{hasNot: []string{"prod.txt", "deep.txt"}, withheld: "denied"}},
		{name: "glob of a denied directory", tool: "glob",
			input: map[string]any{"pattern": "*", "path": "secrets"}, want: want{err: true, hasNot: []string{"prod.txt"}}},
		{name: "list_dir of the workspace omits denied entries", tool: "list_dir",
			input: map[string]any{},
			want: want{has: []string{"src/", "docs/", ".env.local", "id_rsa", ".ssh/"},
				hasNot: []string{"secrets/", ".hidden/", "\n.env\n"}, withheld: "entries denied"}},
		{name: "list_dir of a denied directory", tool: "list_dir",
			input: map[string]any{"path": "secrets"}, want: want{err: true, hasNot: []string{"prod.txt", "nested"}}},
		{name: "list_dir of a link to a denied directory", tool: "list_dir",
			input: map[string]any{"path": "link-to-secrets"}, want: want{err: true, hasNot: []string{"prod.txt"}}},
		{name: "list_dir omits a file a glob rule denies", tool: "list_dir",
			input: map[string]any{"path": "config"}, want: want{has: []string{"app.yaml"}, hasNot: []string{"app.secret.yaml"}, withheld: "1 entry denied"}},
		{name: "list_dir of a hidden denied directory", tool: "list_dir",
			input: map[string]any{"path": ".hidden"}, want: want{err: true, hasNot: []string{"notes.txt"}}},
		{name: "deny rules on an extension at any depth and on a bare directory name", rules: &permission.Rules{Deny: []string{"Read(**/*.md)", "Read(src)"}}, tool: "grep",
			input: map[string]any{"pattern": "MARK"}, want: want{has: []string{"public-yaml"}, hasNot: []string{"asked-doc", "public-src"}, withheld: "2 entries denied"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules := standardRules
			if c.rules != nil {
				rules = *c.rules
			}
			f, _ := readRulesFixture(t, rules)
			if c.noPolicy {
				f.env.SetReadPolicy(nil)
			}
			r := f.call(t, c.tool, c.input)
			if r.IsError != c.want.err {
				t.Fatalf("error = %v, want %v: %q", r.IsError, c.want.err, r.Output)
			}
			// The note may name rules and kinds of file; the listing
			// above it must not name what was withheld.
			body, _, _ := strings.Cut(r.Output, "(withheld: ")
			out := "\n" + body
			for _, s := range c.want.has {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, r.Output)
				}
			}
			for _, s := range c.want.hasNot {
				if strings.Contains(out, s) {
					t.Errorf("output holds %q:\n%s", s, r.Output)
				}
			}
			if c.want.withheld != "" && (!strings.Contains(r.Output, "(withheld: ") || !strings.Contains(r.Output, c.want.withheld)) {
				t.Errorf("output does not say %q was withheld:\n%s", c.want.withheld, r.Output)
			}
		})
	}
}

// TestWithheldNoteNamesNoDeniedPath checks the note says how many entries
// were withheld and by which rule, never which ones.
func TestWithheldNoteNamesNoDeniedPath(t *testing.T) {
	t.Parallel()
	f, _ := readRulesFixture(t, standardRules)
	r := f.call(t, "grep", map[string]any{"pattern": "MARK", "output_mode": "files_with_matches"})
	i := strings.Index(r.Output, "(withheld: ")
	if i < 0 {
		t.Fatalf("no note: %q", r.Output)
	}
	note := r.Output[i:]
	for _, s := range []string{"prod.txt", "app.secret.yaml", "notes.txt", "readme.md", ".env.local", "id_rsa"} {
		if strings.Contains(note, s) {
			t.Errorf("the note names %q: %s", s, note)
		}
	}
	if !strings.Contains(note, "Read(secrets/**)") && !strings.Contains(note, "Read(") {
		t.Errorf("the note does not name the rule: %s", note)
	}
}

// TestReadPolicyPrunesDeniedDirectories counts the policy's calls: a
// denied directory is judged once and never walked, so its files are
// neither opened nor judged.
func TestReadPolicyPrunesDeniedDirectories(t *testing.T) {
	t.Parallel()
	f, p := readRulesFixture(t, permission.Rules{Deny: []string{"Read(big)"}})
	for i := range 200 {
		f.write(t, filepath.Join("big", "d", string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt"), "MARK secret-big\n")
	}
	before := p.calls.Load()
	r := f.call(t, "grep", map[string]any{"pattern": "MARK"})
	if strings.Contains(r.Output, "secret-big") || !strings.Contains(r.Output, "1 entry denied") {
		t.Fatalf("got %q", r.Output)
	}
	if n := p.calls.Load() - before; n > 40 {
		t.Errorf("the policy was consulted %d times; the denied directory was walked", n)
	}
}

// TestSetReadPolicyIsPerEnv checks each Env keeps its own policy, nil
// removes it.
func TestSetReadPolicyIsPerEnv(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := NewEnv(f.ws, "a", nil), NewEnv(f.ws, "b", nil)
	pa := &gateReadPolicy{}
	a.SetReadPolicy(pa)
	if a.ReadPolicy() != pa || b.ReadPolicy() != nil {
		t.Fatal("policies leaked between Envs")
	}
	a.SetReadPolicy(nil)
	if a.ReadPolicy() != nil {
		t.Fatal("nil did not remove the policy")
	}
}

func TestCredentialNames(t *testing.T) {
	t.Parallel()
	for _, p := range []string{".env", ".env.local", ".ENV", "sub/.Env.Production", ".envrc", "a/b/server.KEY", "cert.pem",
		"id_rsa", "id_ed25519.pub", ".ssh/config", "x/.aws/credentials", ".netrc", ".git-credentials", "store.jks", "apple.p8"} {
		if !isCredentialPath(p) {
			t.Errorf("%s is not treated as a credential", p)
		}
	}
	for _, p := range []string{"main.go", "environment.go", "docs/keys.md", "keyboard.txt", "ssh/config", "src/env/x.go"} {
		if isCredentialPath(p) {
			t.Errorf("%s is treated as a credential", p)
		}
	}
}

package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsNeverReadACredential: memory is read with no one asked and
// the model sees all of it, so an import that names a credential (the
// .env beside a repository's CLAUDE.md, a key, anything in .ssh, a link
// to one, one of the home's credential files when the home is the
// project, a key in kz's config directory) is refused with a problem
// that says why, and its content is in no memory file; the other imports
// are read.
func TestImportsNeverReadACredential(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	home := repo(t)
	user := filepath.Join(home, ".config", "kz")
	tree(t, home, map[string]string{
		".env":                     "KEY=" + secret,
		"deploy/.ssh/id_ed25519":   secret,
		"certs/Server.PEM":         secret,
		".codex/auth.json":         secret,
		".config/gh/hosts.yml":     secret,
		".config/kz/keys/anth.key": secret,
		".config/kz/shared.md":     "shared rules",
		"docs/style.md":            "style rules",
		"AGENTS.md": strings.Join([]string{"@.env", "@deploy/.ssh/id_ed25519", "@certs/Server.PEM", "@.codex/auth.json",
			"@~/.config/gh/hosts.yml", "@~/.config/kz/keys/anth.key", "@notes.md", "@docs/style.md", "@~/.config/kz/shared.md"}, "\n"),
	})
	// A harmless name that leads to the .env.
	if err := os.Symlink(".env", filepath.Join(home, "notes.md")); err != nil {
		t.Fatal(err)
	}
	r := Load(context.Background(), Options{Workspace: home, UserDir: user, Home: home})
	var read []string
	for _, f := range r.Files {
		read = append(read, f.Name)
		if strings.Contains(f.Content, secret) {
			t.Errorf("%s: a secret is in memory", f.Path)
		}
	}
	if len(r.Files) != 3 {
		t.Errorf("read %q, want AGENTS.md and the two rules files", read)
	}
	refused := 0
	for _, p := range r.Problems {
		if strings.Contains(p, "never read into memory") {
			refused++
		}
	}
	if refused != 7 {
		t.Errorf("%d imports refused as credentials, want 7: %q", refused, r.Problems)
	}
}

package permission

import (
	"slices"
	"testing"
)

// TestProtectedNames checks the exported predicates against the gate's own
// lists, whatever the case of the name.
func TestProtectedNames(t *testing.T) {
	t.Parallel()
	for _, n := range []string{".git", ".GIT", ".kz", ".claude", ".codex", ".mcp.json", ".bashrc", ".Zshrc", ".envrc"} {
		if !IsProtectedName(n) {
			t.Errorf("%s not protected", n)
		}
	}
	for _, n := range []string{"git", ".gitignore", "src", "README.md", ".env", "kz"} {
		if IsProtectedName(n) {
			t.Errorf("%s protected", n)
		}
	}
	for _, n := range []string{".env", ".env.local", ".ENV", "server.pem", "tls.key", "id_rsa", "id_ed25519.pub", ".netrc", ".ssh", ".aws", "credentials.json", ".envrc", "apple.p8"} {
		if !IsCredentialName(n) {
			t.Errorf("%s not a credential", n)
		}
	}
	for _, n := range []string{"environment.go", "keys.go", "README.md", ".git", ".gitignore"} {
		if IsCredentialName(n) {
			t.Errorf("%s taken for a credential", n)
		}
	}
	home := HomeCredentialPaths()
	for _, n := range []string{".ssh", ".aws", ".netrc", ".git-credentials", ".config/gh", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json"} {
		if !slices.Contains(home, n) {
			t.Errorf("home credentials lack %s", n)
		}
	}
	if !slices.IsSorted(home) {
		t.Error("home credentials are not sorted")
	}
}

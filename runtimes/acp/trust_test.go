package acp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// geminiProjectConfig finds what Gemini CLI would load from a trusted
// workspace and its parents, and nothing of the person's own home.
func TestGeminiProjectConfig(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(root, "src", "repo", "ws")
	write := func(rel string) string {
		p := filepath.Join(root, rel)
		clitest.Dirs(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clitest.Dirs(t, ws, home)
	env := []string{"HOME=" + home}
	if got := geminiProjectConfig(ws, env, true); len(got) != 0 {
		t.Fatalf("clean workspace: %v", got)
	}
	for _, tc := range []struct {
		name, file string
		localEnv   bool
		found      bool
	}{
		{"workspace settings", "src/repo/ws/.gemini/settings.json", false, true},
		{"workspace policies only", "src/repo/ws/.gemini/policies/p.toml", false, true},
		{"workspace .env read", "src/repo/ws/.env", true, true},
		{"workspace .env ignored", "src/repo/ws/.env", false, false},
		{"parent's .gemini/.env", "src/repo/.gemini/.env", false, true},
		{"grandparent's .env read", "src/.env", true, true},
		{"parent's settings are not read by Gemini", "src/repo/.gemini/settings.json", false, false},
		{"the person's own .gemini/.env", "home/.gemini/.env", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.file)
			defer func() { _ = os.RemoveAll(filepath.Join(root, tc.file[:len(tc.file)-len(filepath.Base(tc.file))])) }()
			defer func() { _ = os.Remove(p) }()
			got := geminiProjectConfig(ws, env, tc.localEnv)
			want := p
			if filepath.Dir(p) == filepath.Join(ws, ".gemini") || filepath.Dir(filepath.Dir(p)) == filepath.Join(ws, ".gemini") {
				want = filepath.Join(ws, ".gemini")
			}
			if has := slices.Contains(got, want); has != tc.found {
				t.Errorf("found %v, want %s found=%v", got, want, tc.found)
			}
		})
	}
	// A workspace that is the person's home is their own Gemini directory.
	write("home/.gemini/settings.json")
	if got := geminiProjectConfig(home, env, false); len(got) != 0 {
		t.Errorf("home as workspace: %v", got)
	}
}

// kz sets the agent's trust variable for every process, replacing one
// the person's environment passes, and trusts only a workspace without
// the agent's own configuration; an agent without a trust variable keeps
// its own rules.
func TestDecideTrust(t *testing.T) {
	ws := t.TempDir()
	rt := New(GeminiPreset())
	env := []string{"HOME=/nonexistent", geminiTrustVar + "=true"}
	out, w := rt.decideTrust(ws, env, false)
	if !w.decided || !w.trusted || childenv.Lookup(out, geminiTrustVar) != "true" || len(out) != 2 {
		t.Errorf("clean workspace: %v %+v", out, w)
	}
	clitest.Dirs(t, filepath.Join(ws, ".gemini"))
	out, w = rt.decideTrust(ws, env, false)
	if !w.untrusted() || childenv.Lookup(out, geminiTrustVar) != "false" || len(out) != 2 || len(w.found) != 1 {
		t.Errorf("workspace with .gemini: %v %+v", out, w)
	}
	other := New(Config{Name: "other", Command: "agent"})
	if out, w := other.decideTrust(ws, env, true); w.decided || !slices.Equal(out, env) {
		t.Errorf("agent without a trust variable: %v %+v", out, w)
	}
}

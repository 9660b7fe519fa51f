package claudecode

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// hookGuard passes disableAllHooks unless no hook can reach the CLI: a
// Claude home without settings or with settings of known hook-free keys
// only, none of the directories hooks are declared in, and no .claude in
// the workspace or above it but of settings of such keys, memory files
// and a former home's transcripts. Everything it does not recognise gets
// the flag.
func TestHookGuard(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, home, ws string)
		guard bool
	}{
		{"an empty home", func(*testing.T, string, string) {}, false},
		{"no home directory at all", func(t *testing.T, home, _ string) { rm(t, home) }, false},
		{"settings of known keys", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `{"model":"opus","permissions":{"allow":["Read"]},"env":{"A":"b"},"theme":"dark"}`)
		}, false},
		{"settings with hooks", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"true"}]}]}}`)
		}, true},
		{"settings with a status line", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `{"statusLine":{"type":"command","command":"true"}}`)
		}, true},
		{"settings enabling a plugin", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `{"enabledPlugins":{"x@y":true}}`)
		}, true},
		{"settings with a key kz does not know", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `{"model":"opus","somethingNew":{}}`)
		}, true},
		{"settings that are not JSON", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `{"model":`)
		}, true},
		{"settings that are a JSON array", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `[]`)
		}, true},
		{"settings that are null", func(t *testing.T, home, _ string) {
			write(t, filepath.Join(home, "settings.json"), `null`)
		}, true},
		{"settings that cannot be read", func(t *testing.T, home, _ string) {
			mkdir(t, filepath.Join(home, "settings.json"))
		}, true},
		{"settings behind a dangling link", func(t *testing.T, home, _ string) {
			if err := os.Symlink(filepath.Join(home, "gone"), filepath.Join(home, "settings.json")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a skills directory", func(t *testing.T, home, _ string) { mkdir(t, filepath.Join(home, "skills")) }, true},
		{"an agents directory", func(t *testing.T, home, _ string) { mkdir(t, filepath.Join(home, "agents")) }, true},
		{"a commands directory", func(t *testing.T, home, _ string) { mkdir(t, filepath.Join(home, "commands")) }, true},
		{"a plugins directory", func(t *testing.T, home, _ string) { mkdir(t, filepath.Join(home, "plugins")) }, true},
		{"a hooks entry that is a file", func(t *testing.T, home, _ string) { write(t, filepath.Join(home, "hooks"), "") }, true},
		{"a dangling skills link", func(t *testing.T, home, _ string) {
			if err := os.Symlink(filepath.Join(home, "gone"), filepath.Join(home, "skills")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"an empty project .claude", func(t *testing.T, _, ws string) { mkdir(t, filepath.Join(ws, ".claude")) }, false},
		{"a project .claude with the permissions Claude keeps", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(ws, ".claude", "settings.local.json"), `{"permissions":{"allow":["Bash(go test:*)"]}}`)
			write(t, filepath.Join(ws, ".claude", "settings.json"), `{"$schema":"x","model":"opus"}`)
			write(t, filepath.Join(ws, ".claude", "CLAUDE.md"), "# notes\n")
		}, false},
		{"a project .claude whose local settings have hooks", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(ws, ".claude", "settings.local.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`)
		}, true},
		{"a project .claude whose settings have a key kz does not know", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(ws, ".claude", "settings.json"), `{"permissions":{},"somethingNew":1}`)
		}, true},
		{"a project .claude whose settings are not JSON", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(ws, ".claude", "settings.local.json"), `{`)
		}, true},
		{"a project .claude with skills", func(t *testing.T, _, ws string) { mkdir(t, filepath.Join(ws, ".claude", "skills", "x")) }, true},
		{"a project .claude with agents", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(ws, ".claude", "agents", "a.md"), "---\n---\n")
		}, true},
		{"a project .claude with commands", func(t *testing.T, _, ws string) { mkdir(t, filepath.Join(ws, ".claude", "commands")) }, true},
		{"a project .claude with hooks", func(t *testing.T, _, ws string) { write(t, filepath.Join(ws, ".claude", "hooks"), "") }, true},
		{"a project .claude with an entry kz does not know", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(ws, ".claude", "rules", "r.md"), "x")
		}, true},
		{"a project .claude that is a file", func(t *testing.T, _, ws string) { write(t, filepath.Join(ws, ".claude"), "") }, true},
		{"a project .claude that is a dangling link", func(t *testing.T, _, ws string) {
			if err := os.Symlink(filepath.Join(ws, "gone"), filepath.Join(ws, ".claude")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a project .claude linking to a directory with skills", func(t *testing.T, _, ws string) {
			other := filepath.Join(filepath.Dir(ws), "other")
			mkdir(t, filepath.Join(other, "skills"))
			if err := os.Symlink(other, filepath.Join(ws, ".claude")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a .claude above the workspace holding a former home's transcripts", func(t *testing.T, _, ws string) {
			mkdir(t, filepath.Join(filepath.Dir(ws), ".claude", "projects", "-src-ws"))
		}, false},
		{"a .claude above the workspace with hooks in its settings", func(t *testing.T, _, ws string) {
			write(t, filepath.Join(filepath.Dir(ws), ".claude", "settings.json"), `{"hooks":{}}`)
		}, true},
		{"a .claude two levels above the workspace with plugins", func(t *testing.T, _, ws string) {
			mkdir(t, filepath.Join(filepath.Dir(filepath.Dir(ws)), ".claude", "plugins"))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			home, ws := filepath.Join(dir, "home", ".claude"), filepath.Join(dir, "src", "ws")
			mkdir(t, home)
			mkdir(t, ws)
			tc.setup(t, home, ws)
			env := []string{"HOME=" + filepath.Join(dir, "home"), "CLAUDE_CONFIG_DIR=" + home}
			got := hookGuard(env, ws)
			if want := tc.guard; (got != nil) != want {
				t.Fatalf("hookGuard = %q, want the guard: %v", got, want)
			}
			if got != nil && !slices.Equal(got, []string{"--settings", `{"disableAllHooks":true}`}) {
				t.Fatalf("hookGuard = %q", got)
			}
		})
	}
}

// The Claude home found by HOME (no CLAUDE_CONFIG_DIR) is the .claude
// of a directory above a workspace in it: that one is the home, not a
// project's, and does not call for the guard by itself; any other .claude
// above the workspace is checked as a project's.
func TestHookGuardHomeAboveTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "proj")
	mkdir(t, filepath.Join(dir, ".claude"))
	mkdir(t, ws)
	env := []string{"HOME=" + dir}
	if got := hookGuard(env, ws); got != nil {
		t.Fatalf("hookGuard = %q for a workspace below the Claude home's parent", got)
	}
	env = []string{"HOME=" + dir, "CLAUDE_CONFIG_DIR=" + filepath.Join(dir, "elsewhere")}
	if got := hookGuard(env, ws); got != nil {
		t.Fatalf("hookGuard = %q for an empty .claude above the workspace", got)
	}
	if got := hookGuard([]string{"HOME=" + dir}, "relative/ws"); got == nil {
		t.Fatal("a relative workspace was not guarded against")
	}
	if got := hookGuard([]string{"HOME=" + dir, "CLAUDE_CONFIG_DIR=relative"}, ws); got != nil {
		// A relative CLAUDE_CONFIG_DIR is ignored by claudeHome, which
		// falls back to HOME's .claude.
		t.Fatalf("hookGuard = %q", got)
	}
	mkdir(t, filepath.Join(dir, ".claude", "skills"))
	if got := hookGuard(env, ws); got == nil {
		t.Fatal("a .claude with skills above the workspace that is not the Claude home was not guarded against")
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rm(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

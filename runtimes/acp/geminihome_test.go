package acp

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaizen-code/kz/internal/proc"
)

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The overlay bounds general.maxAttempts, sets advanced.ignoreLocalEnv,
// keeps every other setting and a lower bound of the user's, links the rest of the user's Gemini directory,
// never writes the user's settings, keeps what the agent created and leaves
// nothing behind.
func TestGeminiOverlay(t *testing.T) {
	for _, tc := range []struct {
		name, settings string
		want           float64
	}{
		{"no settings file", "", 2},
		{"user allows more", `{"general":{"maxAttempts":10,"vimMode":true},"model":{"name":"m"}}`, 2},
		{"user allows fewer", `{"general":{"maxAttempts":1}}`, 1},
		{"no general section", `{"model":{"name":"m"}}`, 2},
		{"user reads local .env", `{"advanced":{"ignoreLocalEnv":false,"autoConfigureMemory":true}}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, tmp := t.TempDir(), t.TempDir()
			real := filepath.Join(home, ".gemini")
			if err := os.MkdirAll(filepath.Join(real, "tmp", "proj", "chats"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(real, "oauth_creds.json"), []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.settings != "" {
				if err := os.WriteFile(filepath.Join(real, "settings.json"), []byte(tc.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o, err := newGeminiOverlay([]string{"HOME=" + home, "TMPDIR=" + tmp}, 2, slog.Default())
			if err != nil {
				t.Fatal(err)
			}
			if o.env() != "GEMINI_CLI_HOME="+o.root || filepath.Dir(o.root) != tmp {
				t.Errorf("overlay %s, env %s", o.root, o.env())
			}
			dir := filepath.Join(o.root, ".gemini")
			got := readSettings(t, filepath.Join(dir, "settings.json"))
			general, _ := got["general"].(map[string]any)
			if general["maxAttempts"] != tc.want {
				t.Errorf("maxAttempts %v, want %v (settings %v)", general["maxAttempts"], tc.want, got)
			}
			// A trusted Gemini must take no project .env (trust.go).
			if advanced, _ := got["advanced"].(map[string]any); advanced["ignoreLocalEnv"] != true {
				t.Errorf("advanced.ignoreLocalEnv not set: %v", got)
			}
			if tc.settings != "" {
				var user map[string]any
				_ = json.Unmarshal([]byte(tc.settings), &user)
				for k := range user {
					if _, ok := got[k]; !ok {
						t.Errorf("setting %q lost: %v", k, got)
					}
				}
				if ug, _ := user["general"].(map[string]any); ug != nil && ug["vimMode"] == true && general["vimMode"] != true {
					t.Errorf("general.vimMode lost: %v", got)
				}
				if b, _ := os.ReadFile(filepath.Join(real, "settings.json")); string(b) != tc.settings {
					t.Errorf("the user's settings changed: %s", b)
				}
			}
			for _, name := range []string{"tmp", "history", "oauth_creds.json"} {
				if target, err := os.Readlink(filepath.Join(dir, name)); err != nil || target != filepath.Join(real, name) {
					t.Errorf("%s links to %q, %v", name, target, err)
				}
			}
			// What the agent writes through the links lands in the real
			// directory; what it creates in the overlay is kept on Close.
			if err := os.WriteFile(filepath.Join(dir, "tmp", "proj", "chats", "s.jsonl"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "installation_id"), []byte("id"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(o.root); !os.IsNotExist(err) {
				t.Errorf("overlay left behind: %v", err)
			}
			for _, name := range []string{"tmp/proj/chats/s.jsonl", "installation_id", "oauth_creds.json"} {
				if _, err := os.Stat(filepath.Join(real, name)); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(real, "settings.json")); tc.settings == "" && err == nil {
				t.Errorf("kz created the user's settings: %s", b)
			}
		})
	}
}

// A settings file kz cannot parse (Gemini accepts comments) is an error:
// the caller then runs the agent with its own bound rather than replacing
// the user's settings.
func TestGeminiOverlayUnparsableSettings(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "settings.json"), []byte("{ // comment\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, err := newGeminiOverlay([]string{"HOME=" + home, "TMPDIR=" + t.TempDir()}, 2, slog.Default()); err == nil {
		_ = o.Close()
		t.Fatal("no error for an unparsable settings file")
	}
}

// An overlay on another file system (TMPDIR on tmpfs) still keeps the files
// the agent created, by copying them.
func TestGeminiOverlayAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "kz-test-")
	if err != nil {
		t.Skipf("no /dev/shm here: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shm) })
	home := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(shm, &a) != nil || syscall.Stat(home, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same file system as the test's temporary directory")
	}
	o, err := newGeminiOverlay([]string{"HOME=" + home, "TMPDIR=" + shm}, 2, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.root, ".gemini", "projects.json"), []byte(`{"projects":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(home, ".gemini", "projects.json")); err != nil || string(got) != `{"projects":{}}` {
		t.Errorf("projects.json = %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(shm); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
}

// An overlay whose kz was killed (so never closed) is removed by the next
// overlay made under the same TMPDIR; one whose kz still runs, one with a
// name kz does not make and the person's Gemini directory are left alone.
func TestGeminiOverlaySweepsOverlaysOfKilledKz(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	real := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(real, "oauth_creds.json")
	if err := os.WriteFile(creds, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, ".gemini"), 0o700); err != nil {
			t.Fatal(err)
		}
		// Like a real overlay: a link into the person's directory.
		if err := os.Symlink(creds, filepath.Join(dir, ".gemini", "oauth_creds.json")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	self := proc.SelfStart()
	killed := mk(fmt.Sprintf("kz-gemini-home-%d-%d-123", dead.Process.Pid, self))
	reused := mk(fmt.Sprintf("kz-gemini-home-%d-%d-456", os.Getpid(), self-1))
	running := mk(fmt.Sprintf("kz-gemini-home-%d-%d-789", os.Getpid(), self))
	unknown := mk("kz-gemini-home-12345")
	o, err := newGeminiOverlay([]string{"HOME=" + home, "TMPDIR=" + tmp}, 2, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = o.Close() }()
	for path, want := range map[string]bool{killed: false, reused: false, running: true, unknown: true, o.root: true, creds: true} {
		if _, err := os.Lstat(path); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", path, err == nil, want)
		}
	}
	if want := fmt.Sprintf("kz-gemini-home-%d-%d-", os.Getpid(), self); !strings.HasPrefix(filepath.Base(o.root), want) {
		t.Errorf("overlay %s is not named after its kz (%s…)", o.root, want)
	}
}

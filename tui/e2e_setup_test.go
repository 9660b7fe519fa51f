package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/store"
)

// setupKey is the key pasted into the setup screen: it must end up in
// the key file and in the fake's request headers, and nowhere else.
const setupKey = "sk-ant-e2e-setup-5f3c9a7d1e"

// setupAnswer is the fake server's answer to the first message.
const setupAnswer = "Hello from the fake server, first answer."

// keyedAnthropic is a fake Anthropic Messages API that refuses any key
// but setupKey with a 401, answers a request without tools (the setup's
// test) with "OK" and a turn of kz's agent with setupAnswer.
type keyedAnthropic struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys []string
}

func newKeyedAnthropic(t *testing.T) *keyedAnthropic {
	f := &keyedAnthropic{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		key := r.Header.Get("X-Api-Key")
		f.mu.Lock()
		f.keys = append(f.keys, key)
		f.mu.Unlock()
		if key != setupKey {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		var req struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.Unmarshal(raw, &req)
		text := "OK"
		if len(req.Tools) > 0 {
			text = setupAnswer
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(llmtest.Render(llm.ProviderAnthropic, llmtest.Reply{Text: text}))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// TestE2EFirstRunSetup is the first run of issue 16: an empty HOME and
// XDG dirs, no agent CLI on PATH, the real kz binary in tmux. The setup
// screen opens by itself; the person picks Anthropic, pastes a key,
// points the base URL at a fake server on 127.0.0.1, picks a model from
// the catalog, sees the test pass and saves; kz reopens on the new
// runtime, and the first message gets the fake's answer, on screen and in
// the store. A second, headless kz -p in the same HOME works with the
// written config. The key is in its 0600 file only: not in config.toml,
// the session database or the log.
func TestE2EFirstRunSetup(t *testing.T) {
	if os.Getenv("KZ_E2E") != "1" {
		t.Skip("end-to-end test: set KZ_E2E=1 (make e2e) to run kz in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("KZ_E2E=1 but tmux is not installed")
	}
	tmp := t.TempDir()
	kz := e2eBinary(t, tmp)
	home := filepath.Join(tmp, "home")
	work, bin := filepath.Join(home, "work"), filepath.Join(tmp, "bin")
	for _, d := range []string{work, bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// PATH holds only the OS sandbox, when the machine has it: no agent
	// CLI is found, as on a fresh machine.
	if bw, err := exec.LookPath("bwrap"); err == nil {
		if err := os.Symlink(bw, filepath.Join(bin, "bwrap")); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + bin, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TMPDIR=" + tmp, "TERM=xterm-256color"}
	api := newKeyedAnthropic(t)

	p := &pane{t: t, socket: fmt.Sprintf("kz-e2e-setup-%d", os.Getpid()), name: "kz"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	shell := fmt.Sprintf("cd %q && env -i %s %q; echo KZ-EXITED-$?; /bin/sleep 30", work, strings.Join(quoteAll(env), " "), kz)
	p.tmux("new-session", "-d", "-s", p.name, "-x", "120", "-y", "40", shell)

	p.waitFor("the setup screen", "Set up kz")
	p.waitFor("the CLI check", "none on PATH (claude, codex, gemini)")
	p.keys("Enter")
	p.waitFor("the key step", "Base URL")
	// The key arrives as a bracketed paste, as a terminal sends it.
	p.tmux("set-buffer", "-b", "key", setupKey)
	p.tmux("paste-buffer", "-p", "-b", "key", "-t", p.name)
	p.waitFor("the masked key", "•••••••")
	p.keys("Tab", "Tab", "C-u")
	p.send(api.srv.URL)
	p.keys("Enter")
	p.waitFor("the catalog's models", "claude-sonnet-4-5")
	p.send("sonnet-4-5")
	p.waitGone("the filtered list", "claude-opus-4-5")
	p.keys("Enter")
	p.waitFor("the passed test", "✓ claude-sonnet-4-5 at "+api.srv.URL+" answered.")
	if s := p.screen(); strings.Contains(s, setupKey) {
		t.Fatalf("the key is on screen:\n%s", s)
	}
	p.keys("Enter")
	p.waitFor("the session on the new runtime", "kz is set up: runtime anthropic (claude-sonnet-4-5)")

	cfgPath := filepath.Join(home, ".config", "kz", "config.toml")
	keyPath := filepath.Join(home, ".config", "kz", "keys", "anthropic.key")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil || !bytes.Contains(cfg, []byte(`default_runtime = "anthropic"`)) || !bytes.Contains(cfg, []byte(keyPath)) {
		t.Fatalf("config.toml (%v):\n%s", err, cfg)
	}
	if st, err := os.Stat(keyPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}

	p.send("say hello")
	p.keys("Enter")
	p.waitFor("the first answer", setupAnswer)
	p.waitGone("the end of the turn", "running")
	p.send("/quit")
	p.keys("Enter")
	p.waitFor("kz to exit", "KZ-EXITED-0")

	// The answer is stored.
	data := filepath.Join(home, ".local", "share", "kz")
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	si, err := st.LatestSession(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := st.Transcript(ctx, si.ID)
	_ = st.Close()
	if err != nil || !strings.Contains(fmt.Sprint(tr), setupAnswer) {
		t.Fatalf("stored transcript (%v): %+v", err, tr)
	}

	// A second kz, headless, in the same HOME.
	cmd := exec.Command(kz, "-p", "hi")
	cmd.Dir, cmd.Env = work, env
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), setupAnswer) {
		t.Fatalf("kz -p hi: %v\n%s", err, out)
	}

	// The key is nowhere but its file (and the fake's headers).
	files, _ := filepath.Glob(filepath.Join(data, "kz.db*"))
	files = append(files, cfgPath, filepath.Join(home, ".local", "state", "kz", "kz.log"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(setupKey)) {
			t.Errorf("the key is in %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "kz", "kz.log")); err != nil {
		t.Errorf("no log file to check: %v", err)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	for _, k := range api.keys {
		if k != setupKey {
			t.Errorf("the fake got key %q", k)
		}
	}
}

// quoteAll quotes each NAME=value for the shell.
func quoteAll(env []string) []string {
	out := make([]string, len(env))
	for i, e := range env {
		out[i] = fmt.Sprintf("%q", e)
	}
	return out
}

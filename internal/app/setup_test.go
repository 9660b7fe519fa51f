package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/internal/headless"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tui"
)

// firstRunHome gives the test an empty HOME and XDG directories, no
// agent CLI on PATH and no key variable, and works in an empty folder.
func firstRunHome(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "XDG_STATE_HOME": filepath.Join(home, ".local", "state"),
		"PATH": filepath.Join(home, "bin"), "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""} {
		t.Setenv(k, v)
	}
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	return home
}

// TestSetupThenFirstAnswer is the setup service end to end from an empty
// HOME: nothing can run, a refused key is explained, the right one is
// tested and saved, and the next kz -p runs on the written runtime
// against the fake server. The key is in its 0600 file and nowhere else:
// not in config.toml, not in the session database.
func TestSetupThenFirstAnswer(t *testing.T) {
	home := firstRunHome(t)
	ctx := context.Background()
	const key = "sk-ant-setup-0123456789abcdef"
	api := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Status: 401}, llmtest.Reply{Text: "OK"},
		llmtest.Reply{Text: "Hello from the fake server."})

	a, err := Open(ctx, Options{Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if !a.NoRuntime || !a.TUI().OpenSetup || a.TUI().Setup == nil {
		t.Fatalf("with nothing configured the TUI does not open on the setup screen (NoRuntime %v)", a.NoRuntime)
	}
	svc := a.SetupService()
	a.Close()
	if clis := svc.CLIs(ctx); len(clis) != 0 {
		t.Errorf("CLIs found on an empty PATH: %+v", clis)
	}
	models, err := svc.Models(ctx, tui.SetupChoice{Provider: tui.SetupAnthropic, BaseURL: api.URL})
	if err != nil || !slices.Contains(models, "claude-sonnet-4-5") || slices.ContainsFunc(models, func(m string) bool { return strings.HasPrefix(m, "gpt") }) {
		t.Fatalf("anthropic models %v (%v)", models, err)
	}
	choice := tui.SetupChoice{Provider: tui.SetupAnthropic, Key: key, BaseURL: api.URL, Model: "claude-sonnet-4-5"}
	if err := svc.Test(ctx, choice); err == nil || !strings.Contains(err.Error(), "the key was refused") {
		t.Fatalf("a 401 gave %v", err)
	}
	if err := svc.Test(ctx, choice); err != nil {
		t.Fatalf("test: %v", err)
	}
	if got := api.Requests()[1].Header.Get("X-Api-Key"); got != key {
		t.Errorf("the test sent key %q", got)
	}
	res, err := svc.Save(ctx, choice)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(home, ".config", "kz", "config.toml")
	if res.ConfigPath != cfgPath || res.KeyPath != filepath.Join(home, ".config", "kz", "keys", "anthropic.key") || res.Runtime != "anthropic" {
		t.Errorf("result %+v", res)
	}
	for _, p := range []string{cfgPath, res.KeyPath} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, st, err)
		}
	}
	cfgText, _ := os.ReadFile(cfgPath)
	if bytes.Contains(cfgText, []byte(key)) || !bytes.Contains(cfgText, []byte("api_key_file")) || !bytes.Contains(cfgText, []byte(api.URL)) {
		t.Errorf("config.toml:\n%s", cfgText)
	}

	// The next kz runs on it, headless.
	a, err = Open(ctx, Options{})
	if err != nil {
		t.Fatalf("open after setup: %v", err)
	}
	if st := a.Session.State(); st.Runtime != "anthropic" || st.Model != "claude-sonnet-4-5" {
		t.Errorf("session on %s/%s", st.Runtime, st.Model)
	}
	var out bytes.Buffer
	final, err := headless.Run(ctx, a.Session, "hi", headless.FormatText, &out, io.Discard)
	if err != nil || final.Status != "complete" || !strings.Contains(out.String(), "Hello from the fake server.") {
		t.Fatalf("first answer: %v %s %q", err, final.Status, out.String())
	}
	if err := a.CloseSession(ctx); err != nil {
		t.Fatal(err)
	}
	a.Close()
	dbs, _ := filepath.Glob(filepath.Join(home, ".local", "share", "kz", "kz.db*"))
	if len(dbs) == 0 {
		t.Fatal("no session database")
	}
	for _, p := range dbs {
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
			t.Errorf("the key is in %s", p)
		}
	}
}

// TestSetupServiceExplainsFailures: a refused connection, a server that
// never answers and an unknown model each get a sentence that says what
// to fix.
func TestSetupServiceExplainsFailures(t *testing.T) {
	firstRunHome(t)
	ctx := context.Background()
	svc := &SetupService{UserConfig: filepath.Join(t.TempDir(), "config.toml"), Timeout: 300 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	c := tui.SetupChoice{Provider: tui.SetupAnthropic, Key: "sk-1", BaseURL: closed, Model: "claude-sonnet-4-5"}
	if err := svc.Test(ctx, c); err == nil || !strings.Contains(err.Error(), "nothing answers at "+closed) {
		t.Errorf("refused: %v", err)
	}
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer silent.Close()
	c.BaseURL = silent.URL
	if err := svc.Test(ctx, c); err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("silent: %v", err)
	}
	api := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Status: 404, ErrorBody: `{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}`})
	c.BaseURL, c.Model = api.URL, "nope"
	if err := svc.Test(ctx, c); err == nil || !strings.Contains(err.Error(), "is nope a model of this provider?") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := svc.Save(ctx, tui.SetupChoice{Provider: tui.SetupAnthropic, Key: "two\nlines", BaseURL: api.URL, Model: "m"}); err == nil {
		t.Error("a key of two lines was saved")
	}
	if _, err := os.Stat(svc.UserConfig); !os.IsNotExist(err) {
		t.Errorf("a refused key still wrote the config (%v)", err)
	}
}

// TestSetupServiceOllama lists the server's models from /v1/models and
// writes the OpenAI-compatible runtime kz's ollama preset is, at the
// address given, with no key.
func TestSetupServiceOllama(t *testing.T) {
	home := firstRunHome(t)
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{{"id": "qwen2.5-coder:7b"}}})
	}))
	defer srv.Close()
	svc := &SetupService{UserConfig: filepath.Join(home, ".config", "kz", "config.toml")}
	c := tui.SetupChoice{Provider: tui.SetupOllama, BaseURL: srv.URL}
	models, err := svc.Models(ctx, c)
	if err != nil || !slices.Equal(models, []string{"qwen2.5-coder:7b"}) {
		t.Fatalf("models %v (%v)", models, err)
	}
	c.Model = models[0]
	if _, err := svc.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	e, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	rt := e.Config.Runtimes["ollama"]
	if e.Config.DefaultRuntime != "ollama" || rt.BaseURL != srv.URL+"/v1" || rt.Provider != "openai" || rt.APIKeyFile != "" || rt.Models[0] != "qwen2.5-coder:7b" {
		t.Errorf("written: default %q, %+v", e.Config.DefaultRuntime, rt)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "kz", "keys")); !os.IsNotExist(err) {
		t.Errorf("a key folder was made for a runtime with no key (%v)", err)
	}
}

package llm_test

import (
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

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// TestPingEveryProvider: one small request reaches each provider's fake
// through the client a turn uses, and a refused key is an auth error
// after one attempt.
func TestPingEveryProvider(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.New(t, p, llmtest.Reply{Text: "OK"}, llmtest.Reply{Status: 401})
			if err := llm.Ping(context.Background(), s.Config(), "m-1"); err != nil {
				t.Fatalf("ping: %v", err)
			}
			reqs := s.Requests()
			if len(reqs) != 1 || !reqs[0].Contains("OK") {
				t.Fatalf("requests: %+v", reqs)
			}
			err := llm.Ping(context.Background(), s.Config(), "m-1")
			if engine.KindOf(err) != engine.ErrAuth {
				t.Fatalf("refused key: %v (kind %s), want auth", err, engine.KindOf(err))
			}
			if n := len(s.Requests()); n != 2 {
				t.Errorf("%d requests, want 2: a refused key is not retried", n)
			}
		})
	}
}

// TestPingRefusedAndSilentEndpoints: nothing listening and a server that
// never answers both end in a clear error within the bound.
func TestPingRefusedAndSilentEndpoints(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	cfg := llmtest.New(t, llm.ProviderAnthropic).Config()
	cfg.BaseURL = closed
	err = llm.Ping(context.Background(), cfg, "m")
	if engine.KindOf(err) != engine.ErrRuntimeMissing || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("refused: %v", err)
	}

	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer silent.Close()
	cfg.BaseURL, cfg.Timeout = silent.URL, 200*time.Millisecond
	start := time.Now()
	err = llm.Ping(context.Background(), cfg, "m")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a silent server held the ping %v", d)
	}
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("silent: %v", err)
	}
}

// TestListModelsOfACompatibleServer reads GET /models as Ollama and
// OpenRouter answer it, through the OpenAI SDK, with the key sent.
func TestListModelsOfACompatibleServer(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{
			{"id": "qwen2.5-coder:7b", "object": "model"}, {"id": "llama3.2:latest", "object": "model"}, {"id": "qwen2.5-coder:7b", "object": "model"}}})
	}))
	defer srv.Close()
	cfg := llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.URL + "/v1", APIKeyEnv: "K",
		LookupEnv: func(k string) (string, bool) { return "sk-list", k == "K" }}
	ids, err := llm.ListModels(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"llama3.2:latest", "qwen2.5-coder:7b"}; !slices.Equal(ids, want) {
		t.Errorf("models %v, want %v", ids, want)
	}
	if auth != "Bearer sk-list" {
		t.Errorf("authorization %q", auth)
	}
	cfg.BaseURL = srv.URL + "/nothing"
	if _, err := llm.ListModels(context.Background(), cfg); err == nil {
		t.Error("a 404 listed models")
	}
	if _, err := llm.ListModels(context.Background(), llm.Config{Provider: llm.ProviderAnthropic}); err == nil {
		t.Error("listed the models of a provider kz reads from its catalog")
	}
}

// TestAPIKeyFile: the key comes from the file, first line trimmed, and
// wins over the variable; a file others may read, an empty or a missing
// one is an auth error naming it.
func TestAPIKeyFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "a.key")
	if err := os.WriteFile(key, []byte("  sk-from-file \nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Text: "OK"})
	cfg := s.Config()
	cfg.APIKeyFile = key
	if err := llm.Ping(context.Background(), cfg, "m"); err != nil {
		t.Fatal(err)
	}
	if got := s.Requests()[0].Header.Get("X-Api-Key"); got != "sk-from-file" {
		t.Errorf("sent key %q, want the file's", got)
	}
	for name, setup := range map[string]func() error{
		"readable by others": func() error { return os.Chmod(key, 0o644) },
		"empty":              func() error { return os.WriteFile(key, []byte("\n"), 0o600) },
		"missing":            func() error { return os.Remove(key) },
	} {
		if err := os.WriteFile(key, []byte("sk\n"), 0o600); err != nil && name != "missing" {
			t.Fatal(err)
		}
		if err := setup(); err != nil {
			t.Fatal(err)
		}
		err := cfg.Check()
		if engine.KindOf(err) != engine.ErrAuth || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", name, err)
		}
		_ = os.Remove(key)
	}
}

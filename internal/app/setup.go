package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/tui"
)

// SetupService backs the TUI's setup screen: it finds the agent CLIs and
// their logins, lists a provider's models, tests a choice with one real
// request through the client the runtime will use, and writes the key
// file and the user config. It holds no key: a pasted key travels in the
// tui.SetupChoice it is given, goes to the test request's header and the
// key file, and nowhere else.
type SetupService struct {
	// UserConfig is the user config file it writes; the keys go in the
	// keys folder beside it.
	UserConfig string
	// Catalog lists the API providers' models; nil is the embedded one.
	Catalog *llm.Catalog
	// Getenv, LookPath and Home replace the process's (tests); Timeout,
	// when set, bounds a test request below llm.ProbeTimeout.
	Getenv   func(string) string
	LookPath func(string) (string, error)
	Home     string
	Timeout  time.Duration
}

var _ tui.SetupService = (*SetupService)(nil)

// SetupService returns the setup screen's service over the app's user
// config and model catalog.
func (a *App) SetupService() *SetupService {
	cat, err := llm.CatalogFrom(a.Env.Config.Models)
	if err != nil {
		cat = llm.DefaultCatalog()
	}
	return &SetupService{UserConfig: a.Env.Paths.UserConfig, Catalog: cat}
}

// setupCLIs are the agent CLIs the setup screen offers, by preset name.
var setupCLIs = []string{"claude", "codex", "gemini"}

// CLIs finds the agent CLIs on PATH and asks each whether it is logged
// in: Claude Code and Codex with their own status commands, Gemini CLI by
// its key variables or the sign-in it keeps under ~/.gemini.
func (s *SetupService) CLIs(ctx context.Context) []tui.SetupCLI {
	look := s.LookPath
	if look == nil {
		look = exec.LookPath
	}
	var out []tui.SetupCLI
	for _, name := range setupCLIs {
		path, err := look(name)
		if err != nil {
			continue
		}
		c := tui.SetupCLI{Name: name, Path: path, LoggedIn: true}
		if name == "gemini" {
			if !s.geminiSignedIn() {
				c.LoggedIn, c.Hint = false, "gemini is installed but not signed in: run `gemini` once to sign in, or set GEMINI_API_KEY"
			}
		} else {
			rc := runtimes.Presets[name]
			rc.Command = path
			if l := runtimes.CheckLogin(ctx, rc); l.State == runtimes.LoginMissing {
				c.LoggedIn, c.Hint = false, l.Hint
			}
		}
		out = append(out, c)
	}
	return out
}

// geminiSignedIn: Gemini CLI runs with a key variable, or with the
// Google sign-in it stores in ~/.gemini/oauth_creds.json.
func (s *SetupService) geminiSignedIn() bool {
	if s.EnvSet("GEMINI_API_KEY") || s.EnvSet("GOOGLE_API_KEY") {
		return true
	}
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(home, ".gemini", "oauth_creds.json"))
	return err == nil
}

// EnvSet reports whether the variable is set and not empty.
func (s *SetupService) EnvSet(name string) bool {
	get := s.Getenv
	if get == nil {
		get = os.Getenv
	}
	return name != "" && get(name) != ""
}

// Models lists the catalog's models of an API provider, and asks Ollama
// and OpenRouter for their own lists.
func (s *SetupService) Models(ctx context.Context, c tui.SetupChoice) ([]string, error) {
	rc, err := s.runtimeFor(c, "")
	if err != nil {
		return nil, err
	}
	if c.Provider == tui.SetupOllama || c.Provider == tui.SetupOpenRouter {
		cfg, err := s.clientConfig(rc, c)
		if err != nil {
			return nil, err
		}
		ids, err := llm.ListModels(ctx, cfg)
		if err != nil {
			return nil, errors.New(explain(err, c))
		}
		if len(ids) == 0 && c.Provider == tui.SetupOllama {
			return nil, errors.New("no model on this Ollama server yet: run `ollama pull qwen2.5-coder`, or type a model id")
		}
		return ids, nil
	}
	cat := s.Catalog
	if cat == nil {
		cat = llm.DefaultCatalog()
	}
	var ids []string
	for _, m := range cat.Models() {
		if string(m.Provider) == rc.Provider && !m.Local {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// Test sends one minimal request to the chosen model, configured exactly
// as the runtime will be, and says in a sentence what failed.
func (s *SetupService) Test(ctx context.Context, c tui.SetupChoice) error {
	rc, err := s.runtimeFor(c, "")
	if err != nil {
		return err
	}
	cfg, err := s.clientConfig(rc, c)
	if err != nil {
		return err
	}
	if s.Timeout > 0 {
		cfg.Timeout = s.Timeout
	}
	if err := llm.Ping(ctx, cfg, c.Model); err != nil {
		return errors.New(explain(err, c))
	}
	return nil
}

// Save writes a pasted key to its file, then the runtime to the user
// config as its default.
func (s *SetupService) Save(_ context.Context, c tui.SetupChoice) (tui.SetupResult, error) {
	if c.CLI != "" {
		if _, ok := runtimes.Presets[c.CLI]; !ok {
			return tui.SetupResult{}, fmt.Errorf("unknown agent CLI %q", c.CLI)
		}
		if err := config.SetDefaultRuntime(s.UserConfig, c.CLI, nil); err != nil {
			return tui.SetupResult{}, err
		}
		return tui.SetupResult{Runtime: c.CLI, ConfigPath: s.UserConfig}, nil
	}
	name := setupRuntimeName(c.Provider)
	res := tui.SetupResult{Runtime: name, Model: c.Model, ConfigPath: s.UserConfig}
	keyFile := ""
	if c.Key != "" {
		var err error
		if keyFile, err = config.WriteKeyFile(filepath.Dir(s.UserConfig), name, c.Key); err != nil {
			return res, err
		}
		res.KeyPath = keyFile
	}
	rc, err := s.runtimeFor(c, keyFile)
	if err != nil {
		return res, err
	}
	return res, config.SetDefaultRuntime(s.UserConfig, name, &rc)
}

// setupRuntimeName is the runtime a provider is written as: the preset's
// name where kz has one, so that the setup configures the runtime kz
// runtimes already lists.
func setupRuntimeName(p tui.SetupProvider) string {
	if p == tui.SetupGemini {
		return "gemini-api"
	}
	return string(p)
}

// runtimeFor is the runtime the choice configures. The key is named by
// keyFile or the variable; a pasted key not yet saved is in neither.
// base_url is written only when it is not the provider's own endpoint.
func (s *SetupService) runtimeFor(c tui.SetupChoice, keyFile string) (config.Runtime, error) {
	_, defURL, ok := tui.ProviderDefaults(c.Provider)
	if !ok {
		return config.Runtime{}, fmt.Errorf("unknown provider %q", c.Provider)
	}
	rc := config.Runtime{Kind: config.KindNative, Provider: string(c.Provider), APIKeyFile: keyFile}
	if keyFile == "" {
		rc.APIKeyEnv = c.KeyEnv
	}
	base := strings.TrimRight(c.BaseURL, "/")
	switch c.Provider {
	case tui.SetupOpenRouter:
		rc.Provider, rc.BaseURL = "openai", base
	case tui.SetupOllama:
		if !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
		rc.Provider, rc.BaseURL = "openai", base
	default:
		if base != strings.TrimRight(defURL, "/") {
			rc.BaseURL = base
		}
	}
	if c.Model != "" {
		rc.Models = []string{c.Model}
	}
	return rc, nil
}

// clientConfig is the client configuration of rc, as the runtime builds
// it, with a pasted key handed over in memory.
func (s *SetupService) clientConfig(rc config.Runtime, c tui.SetupChoice) (llm.Config, error) {
	cfg, err := llm.ConfigFrom(rc)
	if err != nil {
		return cfg, err
	}
	switch {
	case c.Key != "":
		key, err := config.CleanKey(c.Key)
		if err != nil {
			return cfg, err
		}
		cfg.APIKeyEnv = "KZ_SETUP_KEY"
		cfg.LookupEnv = func(name string) (string, bool) { return key, name == "KZ_SETUP_KEY" }
	case s.Getenv != nil:
		cfg.LookupEnv = func(name string) (string, bool) { v := s.Getenv(name); return v, v != "" }
	}
	return cfg, nil
}

// explain turns a client's error into what the person can do about it.
func explain(err error, c tui.SetupChoice) string {
	var re *engine.RuntimeError
	if !errors.As(err, &re) {
		return err.Error()
	}
	switch {
	case re.Kind == engine.ErrAuth:
		return "the key was refused (" + re.Message + "): check it, or paste it again"
	case re.Kind == engine.ErrRuntimeMissing && strings.Contains(re.Message, "within"):
		return c.BaseURL + " did not answer in time (" + re.Message + "): check the base URL"
	case re.Kind == engine.ErrRuntimeMissing:
		return "nothing answers at " + c.BaseURL + ": check the base URL (is the server running?)"
	case re.Kind == engine.ErrBadRequest && c.Model != "":
		return "the request was refused (" + re.Message + "): is " + c.Model + " a model of this provider?"
	}
	return re.Message
}

package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// fakeSetup is a setup service with the behaviour of a small world: keys
// are refused unless they are goodKey (or come from a set variable), a
// base URL in down refuses connections, and Save records what it wrote.
type fakeSetup struct {
	mu      sync.Mutex
	clis    []SetupCLI
	env     map[string]bool
	models  map[SetupProvider][]string
	goodKey string
	down    map[string]bool
	tests   []SetupChoice
	saved   []SetupChoice
	saveErr error
}

func newFakeSetup() *fakeSetup {
	return &fakeSetup{
		clis: []SetupCLI{{Name: "claude", Path: "/usr/local/bin/claude", LoggedIn: true},
			{Name: "codex", Path: "/usr/local/bin/codex", Hint: "codex is installed but not logged in: run `codex login`"}},
		env: map[string]bool{},
		models: map[SetupProvider][]string{SetupAnthropic: {"claude-haiku-4-5", "claude-opus-4-5", "claude-sonnet-4", "claude-sonnet-4-5"},
			SetupOllama: {"llama3.2:latest", "qwen2.5-coder:7b"}},
		goodKey: "sk-ant-good-1234",
		down:    map[string]bool{},
	}
}

func (f *fakeSetup) CLIs(context.Context) []SetupCLI { return f.clis }
func (f *fakeSetup) EnvSet(name string) bool         { return f.env[name] }

func (f *fakeSetup) Models(_ context.Context, c SetupChoice) ([]string, error) {
	// Only the servers' own lists need the network; the catalog does not.
	if f.down[c.BaseURL] && providerOf(c.Provider).serverModels {
		return nil, fmt.Errorf("nothing answers at %s (connection refused)", c.BaseURL)
	}
	return f.models[c.Provider], nil
}

func (f *fakeSetup) Test(_ context.Context, c SetupChoice) error {
	f.mu.Lock()
	f.tests = append(f.tests, c)
	f.mu.Unlock()
	switch {
	case f.down[c.BaseURL]:
		return fmt.Errorf("nothing answers at %s (connection refused)", c.BaseURL)
	case c.Provider != SetupOllama && c.KeyEnv == "" && c.Key != f.goodKey:
		return errors.New("the key was refused (HTTP 401): check it and paste it again")
	}
	return nil
}

func (f *fakeSetup) Save(_ context.Context, c SetupChoice) (SetupResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.saveErr != nil {
		return SetupResult{}, f.saveErr
	}
	f.saved = append(f.saved, c)
	name := string(c.Provider)
	if c.CLI != "" {
		name = c.CLI
	}
	return SetupResult{Runtime: name, Model: c.Model, ConfigPath: "/home/u/.config/kz/config.toml"}, nil
}

// setupModel is a quiet model with the setup screen open, as Run opens
// it when no runtime is available.
func setupModel(t *testing.T, svc SetupService, w, h int) *Model {
	t.Helper()
	m := testModel(t, newFake(), w, h)
	m.ext.setup = svc
	m.update(runCmd(m.openSetup())[0])
	if m.setup == nil {
		t.Fatal("the setup screen did not open")
	}
	return m
}

func paste(m *Model, s string) { m.update(tea.PasteMsg{Content: s}) }

// mustShow fails unless the screen holds every text.
func mustShow(t *testing.T, m *Model, texts ...string) {
	t.Helper()
	s := m.screen()
	for _, x := range texts {
		if !strings.Contains(s, x) {
			t.Fatalf("screen lacks %q:\n%s", x, s)
		}
	}
}

// TestSetupPasteKeyFailThenFix walks the whole path of a person with an
// Anthropic key: a wrong key pasted, a failed test, back to fix it, the
// right key, a passed test, the configuration written. The key is never
// on screen, and Run's result carries what was written.
func TestSetupPasteKeyFailThenFix(t *testing.T) {
	svc := newFakeSetup()
	m := setupModel(t, svc, 100, 30)
	mustShow(t, m, "Set up kz", "Anthropic", "OpenRouter", "Ollama", "Gemini", "claude", "logged in", "run `codex login`")

	m.press("enter")
	mustShow(t, m, "Set up kz · Anthropic", "Key", "or variable", "Base URL", "https://api.anthropic.com")
	m.press("enter")
	mustShow(t, m, "paste the key, or name a variable that holds it")
	paste(m, "sk-ant-wrong-9999")
	if s := m.screen(); strings.Contains(s, "sk-ant-wrong") || !strings.Contains(s, "•••••") {
		t.Fatalf("the pasted key is not masked:\n%s", s)
	}
	m.press("enter")
	mustShow(t, m, "claude-sonnet-4-5", "claude-opus-4-5")
	m.typeText("sonnet 4-5")
	if s := m.screen(); strings.Contains(s, "claude-opus-4-5") || !strings.Contains(s, "› claude-sonnet-4-5") {
		t.Fatalf("the filter does not narrow the list:\n%s", s)
	}
	m.press("enter")
	mustShow(t, m, "The test of claude-sonnet-4-5 at https://api.anthropic.com failed", "HTTP 401", "enter fix the key or URL")

	// Back to the key: the wrong one is replaced by the right one.
	m.press("enter")
	mustShow(t, m, "Key")
	m.press("ctrl+u")
	paste(m, "  "+svc.goodKey+"\n")
	m.press("enter", "enter")
	mustShow(t, m, "✓ claude-sonnet-4-5 at https://api.anthropic.com answered.")
	m.press("enter")
	if m.setup != nil || m.setupDone == nil {
		t.Fatal("saving did not end the setup screen")
	}
	if got := m.setupDone.Result.Runtime; got != "anthropic" {
		t.Errorf("result runtime %q", got)
	}
	if len(svc.saved) != 1 || svc.saved[0].Key != svc.goodKey || svc.saved[0].Model != "claude-sonnet-4-5" || svc.saved[0].KeyEnv != "" {
		t.Errorf("saved %+v", svc.saved)
	}
	if len(svc.tests) != 2 {
		t.Errorf("%d tests, want 2", len(svc.tests))
	}
	for _, it := range m.tr.items {
		if strings.Contains(it.text, "sk-ant") {
			t.Errorf("a key reached the transcript: %q", it.text)
		}
	}
	if slices.ContainsFunc(m.history, func(h string) bool { return strings.Contains(h, "sk-ant") }) || strings.Contains(m.input.Value(), "sk-ant") {
		t.Error("a key reached the input or its history")
	}
}

// TestSetupConnectionFailsThenFixed: a base URL where nothing answers
// fails the test with what to fix; enter goes back to the key step, where
// the URL is fixed, and the test passes.
func TestSetupConnectionFailsThenFixed(t *testing.T) {
	svc := newFakeSetup()
	svc.down["http://127.0.0.1:1"] = true
	m := setupModel(t, svc, 100, 30)
	m.press("enter")
	paste(m, svc.goodKey)
	m.press("tab", "tab", "ctrl+u")
	m.typeText("http://127.0.0.1:1")
	m.press("enter", "enter")
	mustShow(t, m, "The test of claude-haiku-4-5 at http://127.0.0.1:1 failed", "nothing answers at http://127.0.0.1:1")
	m.press("r")
	mustShow(t, m, "nothing answers at http://127.0.0.1:1")
	m.press("enter")
	mustShow(t, m, "› Base URL")
	m.press("ctrl+u")
	m.typeText("http://127.0.0.1:8080")
	m.press("enter", "enter")
	mustShow(t, m, "✓ claude-haiku-4-5 at http://127.0.0.1:8080 answered.")
	if n := len(svc.tests); n != 3 {
		t.Errorf("%d tests, want 3 (failed, retried, fixed)", n)
	}
	// m picks another model after a failure.
	svc.down["http://127.0.0.1:8080"] = true
	m.press("esc", "enter")
	mustShow(t, m, "failed")
	m.press("m")
	mustShow(t, m, "type to filter")
}

// TestSetupEscGoesBack: esc goes back one step from each step, keeps
// what was typed, and closes the screen from the first; ctrl+c closes it
// from anywhere.
func TestSetupEscGoesBack(t *testing.T) {
	svc := newFakeSetup()
	m := setupModel(t, svc, 100, 30)
	m.press("enter")
	paste(m, svc.goodKey)
	m.press("enter")
	mustShow(t, m, "claude-sonnet-4-5")
	m.press("esc")
	mustShow(t, m, "or variable")
	m.press("esc")
	mustShow(t, m, "API providers")
	// The same provider again keeps the pasted key.
	m.press("enter", "enter", "enter")
	mustShow(t, m, "answered.")
	m.press("esc")
	mustShow(t, m, "type to filter")
	m.press("esc", "esc", "esc")
	if m.setup != nil {
		t.Fatal("esc on the first step did not close the screen")
	}
	if len(svc.saved) != 0 {
		t.Errorf("closing saved %+v", svc.saved)
	}
	m.press("/")
	m.typeText("setup")
	m.press("enter")
	if m.setup == nil {
		t.Fatal("/setup did not open the screen")
	}
	m.update(runCmd(m.setup.loadCLIs())[0])
	m.press("down", "enter", "ctrl+c")
	if m.setup != nil {
		t.Fatal("ctrl+c did not close the screen")
	}
}

// TestSetupCLIs: a CLI that is not logged in says what to run and cannot
// be picked; a logged-in one is confirmed and saved with no key step.
func TestSetupCLIs(t *testing.T) {
	svc := newFakeSetup()
	m := setupModel(t, svc, 100, 30)
	m.press("up") // the last row: codex
	m.press("enter")
	mustShow(t, m, "✗ codex is installed but not logged in: run `codex login`", "API providers")
	m.press("up", "enter")
	mustShow(t, m, "Set up kz · claude", "Use claude, logged in, as kz's default runtime?", `default_runtime = "claude"`)
	m.press("esc")
	mustShow(t, m, "API providers")
	m.press("enter", "enter")
	if m.setupDone == nil || len(svc.saved) != 1 || svc.saved[0].CLI != "claude" || svc.saved[0].Provider != "" {
		t.Fatalf("saved %+v", svc.saved)
	}
}

// TestSetupEnvironmentVariable: the usual variable, when set, is offered
// instead of a paste; a variable that is not set is refused.
func TestSetupEnvironmentVariable(t *testing.T) {
	svc := newFakeSetup()
	svc.env["OPENAI_API_KEY"] = true
	svc.models[SetupOpenAI] = []string{"gpt-5", "gpt-5-mini"}
	m := setupModel(t, svc, 100, 30)
	m.press("down", "enter")
	mustShow(t, m, "Set up kz · OpenAI", "OPENAI_API_KEY")
	m.press("ctrl+u")
	m.typeText("MY_UNSET_KEY")
	m.press("enter")
	mustShow(t, m, "MY_UNSET_KEY is not set in kz's environment")
	m.press("ctrl+u")
	m.typeText("OPENAI_API_KEY")
	m.press("enter", "down", "enter")
	mustShow(t, m, "✓ gpt-5-mini at https://api.openai.com/v1 answered.")
	m.press("enter")
	if len(svc.saved) != 1 || svc.saved[0].KeyEnv != "OPENAI_API_KEY" || svc.saved[0].Key != "" || svc.saved[0].Model != "gpt-5-mini" {
		t.Fatalf("saved %+v", svc.saved)
	}
}

// TestSetupOllama: no key, an address instead; a server that does not
// answer is said so, with a way back to fix the address; its own models
// are listed; a model id not listed can be typed.
func TestSetupOllama(t *testing.T) {
	svc := newFakeSetup()
	svc.down["http://127.0.0.1:1"] = true
	m := setupModel(t, svc, 100, 30)
	m.press("down", "down", "down", "enter")
	s := m.screen()
	if !strings.Contains(s, "Ollama needs no key") || strings.Contains(s, "or variable") || !strings.Contains(s, "http://127.0.0.1:11434") {
		t.Fatalf("the Ollama step:\n%s", s)
	}
	m.press("ctrl+u")
	m.typeText("ftp://x")
	m.press("enter")
	mustShow(t, m, "the base URL must start with http:// or https://")
	m.press("ctrl+u")
	m.typeText("http://127.0.0.1:1/")
	m.press("enter")
	mustShow(t, m, "nothing answers at http://127.0.0.1:1 (connection refused)")
	m.press("esc", "ctrl+u")
	m.typeText("http://127.0.0.1:11434")
	m.press("enter")
	mustShow(t, m, "qwen2.5-coder:7b", "llama3.2:latest")
	m.typeText("mistral:7b")
	mustShow(t, m, "no listed model matches")
	m.press("enter")
	mustShow(t, m, "✓ mistral:7b at http://127.0.0.1:11434 answered.")
	m.press("enter")
	if len(svc.saved) != 1 || svc.saved[0].Model != "mistral:7b" || svc.saved[0].BaseURL != "http://127.0.0.1:11434" {
		t.Fatalf("saved %+v", svc.saved)
	}
}

// TestSetupStaleAnswers: the answer to a test the person left (esc) is
// dropped, and a failed save keeps the screen open with the error.
func TestSetupStaleAnswers(t *testing.T) {
	svc := newFakeSetup()
	m := setupModel(t, svc, 100, 30)
	m.press("enter")
	paste(m, svc.goodKey)
	m.press("enter")
	// Start the test without running it, leave, then deliver its answer.
	_, cmd := m.Update(keyMsg("enter"))
	m.press("esc")
	for _, msg := range runCmd(cmd) {
		m.update(msg)
	}
	if m.setup.step != stepModel || m.setup.tested {
		t.Fatalf("a stale answer moved the screen: step %s tested %v", m.setup.step, m.setup.tested)
	}
	svc.saveErr = errors.New("config.toml:3: unknown key \"colour\"; fix it first, kz has not changed it")
	m.press("enter", "enter")
	mustShow(t, m, "could not write the configuration", "fix it first")
	if m.setup == nil || m.setupDone != nil {
		t.Fatal("a failed save closed the screen")
	}
}

// TestSetupRefusedWhileRunning: /setup waits for the running turn.
func TestSetupRefusedWhileRunning(t *testing.T) {
	m := testModel(t, newFake(), 100, 30)
	m.ext.setup = newFakeSetup()
	m.status.running = true
	if m.openSetup(); m.setup != nil {
		t.Fatal("opened during a turn")
	}
	mustShow(t, m, "a turn is running")
	m.status.running = false
	m.ext.setup = nil
	if m.openSetup(); m.setup != nil {
		t.Fatal("opened without a service")
	}
}

// TestGoldenSetup renders each step at 80×24 and 120×40.
func TestGoldenSetup(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		svc := newFakeSetup()
		m := setupModel(t, svc, w, h)
		golden(t, "setup_provider", w, m.setup.view(w, h))
		m.press("enter")
		paste(m, "sk-ant-secret")
		golden(t, "setup_key", w, m.setup.view(w, h))
		m.press("enter")
		golden(t, "setup_model", w, m.setup.view(w, h))
		m.press("enter")
		golden(t, "setup_test_failed", w, m.setup.view(w, h))
		if got := strings.Count(m.setup.view(w, h), "\n") + 1; got != h {
			t.Errorf("%dx%d: the screen has %d lines", w, h, got)
		}
	}
}

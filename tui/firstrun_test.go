package tui

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
)

// TestDetectFindsCLIsKeysAndOllama runs Detect over a PATH holding only a
// codex executable, an environment with only OPENAI_API_KEY, and a real
// listener standing in for Ollama; then with the listener closed.
func TestDetectFindsCLIsKeysAndOllama(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	env := map[string]string{"OPENAI_API_KEY": "sk-test"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	opts := DetectOptions{Getenv: func(k string) string { return env[k] }, OllamaAddr: addr}

	d := Detect(context.Background(), opts)
	got := map[string]bool{}
	for _, f := range append(append(d.CLIs, d.Keys...), d.Ollama) {
		got[f.Name] = f.OK
	}
	want := map[string]bool{"claude": false, "codex": true, "gemini": false,
		"ANTHROPIC_API_KEY": false, "OPENAI_API_KEY": true, "GEMINI_API_KEY": false, "Ollama": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s found = %t, want %t (%+v)", k, got[k], v, d)
		}
	}
	if d.CLIs[1].Where != filepath.Join(bin, "codex") || d.Ollama.Where != "listening on "+addr {
		t.Errorf("where: codex %q, ollama %q", d.CLIs[1].Where, d.Ollama.Where)
	}

	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if d := Detect(context.Background(), opts); d.Ollama.OK || !strings.Contains(d.Ollama.Where, "nothing listens on "+addr) {
		t.Fatalf("closed port reported as %+v", d.Ollama)
	}
}

// TestFirstRunTextSaysWhatWasFoundAndHowToEnable checks the first-run
// screen names every CLI, key and the Ollama port with how to enable the
// missing ones, lists the known runtimes with their reasons, and points to
// the demo.
func TestFirstRunTextSaysWhatWasFoundAndHowToEnable(t *testing.T) {
	d := Detection{
		CLIs: []Found{{Name: "claude", Where: "not on PATH", Enable: "npm i -g @anthropic-ai/claude-code"},
			{Name: "codex", OK: true, Where: "/usr/bin/codex"}},
		Keys:   []Found{{Name: "ANTHROPIC_API_KEY", Where: "not set", Enable: "export ANTHROPIC_API_KEY=…"}, {Name: "OPENAI_API_KEY", OK: true, Where: "set"}},
		Ollama: Found{Name: "Ollama", Where: "nothing listens on 127.0.0.1:11434", Enable: "run `ollama serve`"},
	}
	s := FirstRunReport([]engine.RuntimeInfo{{Name: "claude", Unavailable: "claude is not on PATH"}, {Name: "native"}}, d)
	for _, want := range []string{
		"✗ claude: not on PATH; to enable: npm i -g @anthropic-ai/claude-code",
		"✓ codex: /usr/bin/codex",
		"✗ ANTHROPIC_API_KEY: not set; to enable: export ANTHROPIC_API_KEY=…",
		"✓ OPENAI_API_KEY: set",
		"✗ Ollama: nothing listens on 127.0.0.1:11434; to enable: run `ollama serve`",
		"✗ claude: claude is not on PATH", "✓ native is ready", "kz --demo",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("first-run text lacks %q:\n%s", want, s)
		}
	}
	// The real detection covers the three CLIs, three keys and the port,
	// each with a way to enable it.
	real := Detect(context.Background(), DetectOptions{LookPath: func(string) (string, error) { return "", os.ErrNotExist },
		Getenv: func(string) string { return "" }, OllamaAddr: closedAddr(t)})
	s = FirstRunReport(nil, real)
	for _, want := range []string{"claude-code", "@openai/codex", "@google/gemini-cli", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "ollama serve"} {
		if !strings.Contains(s, want) {
			t.Errorf("first-run text lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "✓") {
		t.Errorf("nothing was found, yet:\n%s", s)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestWrapHangingIndentsContinuations(t *testing.T) {
	got := wrapHanging("Header line\n  ✗ claude: not on PATH; to enable: npm i -g @anthropic-ai/claude-code then log in\nshort", 40)
	want := []string{
		"Header line",
		"  ✗ claude: not on PATH; to enable: npm",
		"    i -g @anthropic-ai/claude-code then",
		"    log in",
		"short",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range wrapHanging(strings.Repeat("x", 100)+" "+strings.Repeat("y ", 50), 30) {
		if ansi.StringWidth(l) > 30 {
			t.Fatalf("line %q wider than 30", l)
		}
	}
}

// TestQuickProfileNeverAsksTmux checks the colour profile Run starts with
// comes from the environment alone and says when tmux could raise it: an
// output that is no terminal has no colours and nothing to ask.
func TestQuickProfileNeverAsksTmux(t *testing.T) {
	var buf strings.Builder
	p, ask := quickProfile(&buf, []string{"TERM=xterm-256color", "TMUX=/tmp/tmux-0/default,1,0", "PATH=/nonexistent"})
	if p != colorprofile.NoTTY || ask {
		t.Fatalf("buffer output: profile %v, ask tmux %t", p, ask)
	}
	// A terminal: forced with CLICOLOR_FORCE, as colorprofile allows.
	// PATH holds no tmux, so a call to it would fail: the profile must
	// come from TERM alone.
	env := []string{"TERM=tmux-256color", "CLICOLOR_FORCE=1", "TMUX=/tmp/tmux-0/default,1,0", "PATH=" + t.TempDir()}
	p, ask = quickProfile(&buf, env)
	if p != colorprofile.ANSI256 || !ask {
		t.Fatalf("tmux-256color: profile %v, ask tmux %t", p, ask)
	}
	p, ask = quickProfile(&buf, []string{"TERM=xterm-256color", "COLORTERM=truecolor", "CLICOLOR_FORCE=1", "TMUX=/tmp/tmux-0/default,1,0"})
	if p != colorprofile.TrueColor || ask {
		t.Fatalf("truecolor: profile %v, ask tmux %t", p, ask)
	}
	if _, ask = quickProfile(&buf, env[:3:3][:2]); ask {
		t.Fatal("asks tmux outside tmux")
	}
}

package cli

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// TestRuntimeLinesFitEightyColumns feeds the short listing the reasons
// that make it wide: a long error, one that quotes a CLI's output over
// several lines, a runtime name longer than the column, wide characters.
// Every line fits, each runtime stays on one line, and what is cut ends
// with an ellipsis.
func TestRuntimeLinesFitEightyColumns(t *testing.T) {
	lines := []runtimeLine{
		{Name: "claude", Why: "claude is installed but not logged in: run `claude auth login`"},
		{Name: "ollama", Why: "http://127.0.0.1:11434/v1 is unreachable: dial tcp 127.0.0.1:11434: connect: connection refused " + strings.Repeat("x", 200)},
		{Name: "codex", Why: "codex --version failed:\nError: something\n   at line 3"},
		{Name: "a-runtime-with-a-very-long-configured-name", Why: "GEMINI_API_KEY is not set"},
		{Name: "wide", Why: strings.Repeat("模型", 60)},
		{Name: "anthropic", Ready: true, Why: readyReason("", []string{"claude-sonnet-4-5"})},
	}
	var buf bytes.Buffer
	if err := writeRuntimeLines(&buf, lines, runtimesWidth); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != len(lines)+1 {
		t.Fatalf("%d lines for %d runtimes:\n%s", len(got), len(lines), buf.String())
	}
	for _, l := range got {
		if w := ansi.StringWidth(l); w > runtimesWidth || !utf8.ValidString(l) {
			t.Errorf("line of width %d: %q", w, l)
		}
	}
	for i, want := range []string{
		"RUNTIME               READY  WHY",
		"claude                no     claude is installed but not logged in: run `claude…",
		"ollama                no     http://127.0.0.1:11434/v1 is unreachable: dial tcp…",
		"codex                 no     codex --version failed:",
		"a-runtime-with-a-ve…  no     GEMINI_API_KEY is not set",
		"anthropic             yes    model claude-sonnet-4-5",
	} {
		idx := i
		if i == 5 {
			idx = 6
		}
		if got[idx] != want {
			t.Errorf("line %d:\n got %q\nwant %q", idx, got[idx], want)
		}
	}
	if !strings.HasSuffix(got[5], "…") {
		t.Errorf("wide reason not cut: %q", got[5])
	}
	// Short names leave the reason the room.
	buf.Reset()
	if err := writeRuntimeLines(&buf, lines[:1], runtimesWidth); err != nil {
		t.Fatal(err)
	}
	if want := "claude   no     claude is installed but not logged in: run `claude auth login`\n"; !strings.HasSuffix(buf.String(), want) {
		t.Errorf("short names:\n%s", buf.String())
	}
	if readyReason("2.1.197", []string{"sonnet"}) != "version 2.1.197, model sonnet" || readyReason("", nil) != "" {
		t.Error("readyReason")
	}
}

// TestRuntimesCommandIsShortUnlessVerbose runs kz runtimes over a
// configuration whose runtimes have long names and reasons: the listing
// fits 80 columns and shows no capabilities; --verbose shows them, with
// the whole reason.
func TestRuntimesCommandIsShortUnlessVerbose(t *testing.T) {
	sb := newSandbox(t)
	long := "a-very-long-runtime-name-that-goes-on-and-on"
	sb.userConfig("[runtimes." + long + "]\nkind = \"native\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1/" + strings.Repeat("deep/", 30) + "\"\nmodels = [\"m\"]\n")
	out, errOut, code := sb.kz("runtimes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := ansi.StringWidth(l); w > runtimesWidth {
			t.Errorf("line of width %d: %q", w, l)
		}
	}
	if strings.Contains(out, "filesystem_edit") || !strings.Contains(out, "a-very-long-runtime…  no     http://127.0.0.1:1/v1/deep/") {
		t.Errorf("short listing:\n%s", out)
	}
	out, _, code = sb.kz("runtimes", "--verbose")
	if code != 0 || !strings.Contains(out, "filesystem_edit") || !strings.Contains(out, long) || !strings.Contains(out, strings.Repeat("deep/", 30)) {
		t.Errorf("verbose listing (exit %d):\n%s", code, out)
	}
}

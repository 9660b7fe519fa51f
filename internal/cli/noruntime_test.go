package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestHeadlessWithNoRuntimeSaysWhyAndWhatToDo runs kz -p on a machine
// with nothing: no CLI on PATH, no key, no Ollama. Every format exits 1
// with "kz: no runtime is available:" and each runtime's short reason on
// one stderr line, then the hint line; json and stream-json print a
// final_result whose error_kind is runtime_missing.
func TestHeadlessWithNoRuntimeSaysWhyAndWhatToDo(t *testing.T) {
	sb := newSandbox(t)
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "")
	}
	// Ollama's preset points at a port nothing listens on here.
	sb.userConfig("[runtimes.ollama]\nkind = \"native\"\nprovider = \"openai\"\nbase_url = \"http://" + closedLoopback(t) + "/v1\"\nmodels = [\"qwen2.5-coder\"]\n")
	for _, format := range []string{"text", "json", "stream-json"} {
		out, errOut, code := sb.kz("-p", "hi", "--output-format", format)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != 1 || len(lines) != 2 {
			t.Fatalf("%s: exit %d, stderr:\n%s", format, code, errOut)
		}
		for _, want := range []string{"kz: no runtime is available: ", "claude: claude is not on PATH", "anthropic: ANTHROPIC_API_KEY not set",
			"ollama: http://127.0.0.1:"} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("%s: stderr lacks %q:\n%s", format, want, lines[0])
			}
		}
		if !strings.HasPrefix(lines[0], "kz: no runtime is available: ") || strings.Contains(lines[0], "runtime_missing") {
			t.Errorf("%s: first line %q", format, lines[0])
		}
		if !strings.HasPrefix(lines[1], "hint: run kz to set one up, or set ANTHROPIC_API_KEY") {
			t.Errorf("%s: hint line %q", format, lines[1])
		}
		if format == "text" {
			if out != "" {
				t.Errorf("text stdout %q", out)
			}
			continue
		}
		evs := streamEvents(t, out)
		if len(evs) != 1 || evs[0].Type != engine.EventFinalResult || evs[0].ErrorKind != engine.ErrRuntimeMissing ||
			!strings.HasPrefix(evs[0].Text, "no runtime is available: ") {
			t.Errorf("%s: stdout %s", format, out)
		}
	}
}

// closedLoopback is a loopback address nothing listens on.
func closedLoopback(t *testing.T) string {
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

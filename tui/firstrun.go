package tui

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// OllamaAddr is where a local Ollama server listens by default; the
// "ollama" runtime preset talks to it.
const OllamaAddr = "127.0.0.1:11434"

// Detection is what kz found on this machine that could serve as a
// runtime: the agent CLIs on PATH, the API key variables set, and whether
// a local Ollama server answers. The first-run screen shows it.
type Detection struct {
	// CLIs are claude, codex and gemini, in that order.
	CLIs []Found
	// Keys are the API key variables kz's presets read.
	Keys []Found
	// Ollama is the local Ollama port.
	Ollama Found
}

// Found is one thing Detect looked for.
type Found struct {
	Name string
	OK   bool
	// Where is the path of a CLI, "set" for a key, the address for
	// Ollama, or why it was not found.
	Where string
	// Enable says exactly how to enable it.
	Enable string
}

// DetectOptions replace what Detect reads, for tests. The zero value
// reads the real PATH, environment and Ollama port.
type DetectOptions struct {
	LookPath   func(string) (string, error)
	Getenv     func(string) string
	OllamaAddr string
	// DialTimeout bounds the Ollama check (default 300ms: a loopback
	// connection either succeeds or is refused at once).
	DialTimeout time.Duration
}

// firstRunCLIs are the agent CLIs kz drives, with how to install each.
var firstRunCLIs = []struct{ cmd, enable string }{
	{"claude", "npm i -g @anthropic-ai/claude-code, then run `claude` once to log in (or set ANTHROPIC_API_KEY)"},
	{"codex", "npm i -g @openai/codex, then `codex login` (or set OPENAI_API_KEY)"},
	{"gemini", "npm i -g @google/gemini-cli, then run `gemini` once to sign in (or set GEMINI_API_KEY)"},
}

// firstRunKeys are the API key variables kz's presets use, with the
// runtimes each one enables.
var firstRunKeys = []struct{ name, enables string }{
	{"ANTHROPIC_API_KEY", "kz's own agent on Claude (runtime anthropic) and the claude CLI"},
	{"OPENAI_API_KEY", "kz's own agent on OpenAI (runtime openai) and the codex CLI"},
	{"GEMINI_API_KEY", "kz's own agent on Gemini (runtime gemini-api) and the gemini CLI"},
}

// Detect looks for the agent CLIs on PATH, the API key variables and a
// local Ollama server. The only network traffic is one TCP connection
// attempt to the Ollama address (loopback by default), bounded by ctx and
// DialTimeout.
func Detect(ctx context.Context, o DetectOptions) Detection {
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.OllamaAddr == "" {
		o.OllamaAddr = OllamaAddr
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 300 * time.Millisecond
	}
	var d Detection
	for _, c := range firstRunCLIs {
		f := Found{Name: c.cmd, Enable: c.enable}
		if p, err := o.LookPath(c.cmd); err == nil {
			f.OK, f.Where = true, p
		} else {
			f.Where = "not on PATH"
		}
		d.CLIs = append(d.CLIs, f)
	}
	for _, k := range firstRunKeys {
		f := Found{Name: k.name, Where: "not set", Enable: fmt.Sprintf("export %s=… enables %s", k.name, k.enables)}
		if o.Getenv(k.name) != "" {
			f.OK, f.Where = true, "set"
		}
		d.Keys = append(d.Keys, f)
	}
	d.Ollama = Found{Name: "Ollama", Where: "nothing listens on " + o.OllamaAddr,
		Enable: "install Ollama (https://ollama.com), run `ollama serve` and `ollama pull qwen2.5-coder` (runtime ollama)"}
	dctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	if conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", o.OllamaAddr); err == nil {
		_ = conn.Close()
		d.Ollama.OK, d.Ollama.Where = true, "listening on "+o.OllamaAddr
	}
	return d
}

// FirstRunText explains, for a person with no usable runtime, what kz
// found on this machine and how to enable each runtime. infos is
// Session.Runtimes() (or runtimes.Infos), the runtimes kz knows with why
// each cannot run. It looks at PATH, the environment and the Ollama port
// (see Detect).
func FirstRunText(infos []engine.RuntimeInfo) string {
	return FirstRunReport(infos, Detect(context.Background(), DetectOptions{}))
}

// FirstRunReport is FirstRunText over a given detection.
func FirstRunReport(infos []engine.RuntimeInfo, d Detection) string {
	var b strings.Builder
	b.WriteString("No runtime is available yet. This is what kz found on this machine:\n")
	line := func(f Found) {
		if f.OK {
			fmt.Fprintf(&b, "  ✓ %s: %s\n", f.Name, f.Where)
			return
		}
		fmt.Fprintf(&b, "  ✗ %s: %s; to enable: %s\n", f.Name, f.Where, f.Enable)
	}
	b.WriteString("Agent CLIs on PATH\n")
	for _, f := range d.CLIs {
		line(f)
	}
	b.WriteString("API key variables\n")
	for _, f := range d.Keys {
		line(f)
	}
	b.WriteString("Local model\n")
	line(d.Ollama)
	if len(infos) > 0 {
		b.WriteString("Runtimes kz knows\n")
		for _, r := range infos {
			if r.Unavailable == "" {
				fmt.Fprintf(&b, "  ✓ %s is ready\n", r.Name)
				continue
			}
			fmt.Fprintf(&b, "  ✗ %s: %s\n", r.Name, r.Unavailable)
		}
	}
	b.WriteString("/setup sets one up here; or enable one as above and restart kz (kz runtimes lists what it can use), or try every key first with: kz --demo")
	return b.String()
}

package runtimes

import (
	"path/filepath"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
)

// Describe says in one line what a configured runtime is: the agent CLI it
// drives (with its version when kz asked for it), or the loop and the
// provider and default model it talks to. The runtime picker shows it
// beside the runtime's name, which is the person's own and says little.
func Describe(rc config.Runtime, e engine.RuntimeEntry) string {
	model := ""
	if len(e.Models) > 0 {
		model = e.Models[0]
	}
	var what string
	switch rc.Kind {
	case config.KindClaudeCode:
		what = "Claude Code CLI"
	case config.KindCodex:
		what = "Codex CLI"
	case config.KindACP:
		switch base := filepath.Base(rc.Command); {
		case base == "gemini":
			what = "Gemini CLI (ACP)"
		case rc.Command == "":
			what = "ACP agent"
		default:
			what = "ACP agent " + base
		}
	case config.KindNative, config.KindCompletion:
		provider := firstNonEmpty(rc.Provider, "anthropic")
		loop := "native"
		if rc.Kind == config.KindCompletion {
			loop = "completion, text only"
		}
		return strings.TrimSpace(loop + " · " + provider + " " + model)
	case config.KindScripted:
		return strings.TrimSpace("scripted replay · " + model)
	default:
		return string(rc.Kind)
	}
	if v := versionNumber(e.Version); v != "" {
		what += " " + v
	}
	return what
}

// versionNumber is the first word of a CLI's version output that starts
// with a digit ("2.0.14 (Claude Code)" gives "2.0.14", "codex-cli 0.46.0"
// gives "0.46.0"), or "".
func versionNumber(v string) string {
	for _, w := range strings.Fields(v) {
		w = strings.TrimPrefix(w, "v")
		if w != "" && w[0] >= '0' && w[0] <= '9' {
			return w
		}
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

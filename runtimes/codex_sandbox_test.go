package runtimes

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes/codex"
)

// TestCodexSandboxFromConfig: the sandbox key reaches the Codex runtime,
// empty means workspace-write, and an unknown value is an error naming the
// runtime before anything starts.
func TestCodexSandboxFromConfig(t *testing.T) {
	for in, want := range map[string]codex.Sandbox{
		"":                   codex.SandboxWorkspaceWrite,
		"read-only":          codex.SandboxReadOnly,
		"workspace-write":    codex.SandboxWorkspaceWrite,
		"danger-full-access": codex.SandboxFullAccess,
	} {
		e, err := Build("cx", config.Runtime{Kind: config.KindCodex, Command: "codex", Sandbox: in}, Options{})
		if err != nil {
			t.Fatalf("sandbox %q: %v", in, err)
		}
		rt, ok := e.Runtime.(*codex.Runtime)
		if !ok {
			t.Fatalf("sandbox %q: runtime %T", in, e.Runtime)
		}
		if got := rt.SandboxMode(); got != want {
			t.Errorf("sandbox %q: got %q, want %q", in, got, want)
		}
	}
	_, err := Build("cx", config.Runtime{Kind: config.KindCodex, Command: "codex", Sandbox: "wide-open"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "runtime cx") || !strings.Contains(err.Error(), `"wide-open"`) {
		t.Fatalf("unknown sandbox: %v", err)
	}
}

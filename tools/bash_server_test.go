//go:build linux

package tools

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/tools/sandbox"
)

// TestBashRunsOnTheSandboxServer: under bubblewrap the bash tool's
// commands run on the session's sandbox server of their confinement (kz
// itself as PID 1 of the sandbox), one after the other on the same one;
// a command that times out gets SIGTERM first, so that its trap can clean
// up within the grace period, and nothing of it is left.
func TestBashRunsOnTheSandboxServer(t *testing.T) {
	f := newFixture(t)
	f.withSandbox(t, sandbox.KindBubblewrap)
	f.answerWith(wsConf)
	// PID 1's command line, and its start time (field 22 of its stat).
	probe := map[string]any{"command": "tr '\\0' ' ' < /proc/1/cmdline; echo; cut -d' ' -f22 /proc/1/stat"}
	first := f.call(t, "bash", probe)
	if !strings.Contains(first.Output, "__kz_sandbox_server") {
		t.Fatalf("not on a sandbox server: %+v", first)
	}
	if again := f.call(t, "bash", probe); again.Output != first.Output {
		t.Errorf("another server: %q, then %q", first.Output, again.Output)
	}
	r := f.call(t, "bash", map[string]any{"command": "trap 'echo cleaned up; exit 0' TERM; sleep 5151; echo not reached", "timeout_ms": 300})
	if !strings.Contains(r.Output, "cleaned up") || !strings.Contains(r.Output, "timed out") || strings.Contains(r.Output, "not reached") {
		t.Errorf("timeout: %+v", r)
	}
	waitGone(t, "5151")
	if again := f.call(t, "bash", probe); again.Output != first.Output {
		t.Errorf("the timeout cost the server: %q", again.Output)
	}
}

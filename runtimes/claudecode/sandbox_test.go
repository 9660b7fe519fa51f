package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// confinedProbe is a command the agent runs after kz's approval, and what
// must hold afterwards.
type confinedProbe struct {
	name, cmd string
	// check inspects the host after the turn, and the probe's output.
	check func(t *testing.T, ws, outside, out string)
}

// confinedProbes are the class "a CLI's approved commands cannot write
// outside the workspace or into .git": a write to the workspace works
// (the profile is workspace-write), writes to .git, its hooks and config,
// and to a directory outside the workspace do not reach the host, and kz's
// own process is not there to read.
func confinedProbes(kzPid int) []confinedProbe {
	absent := func(rel ...string) func(t *testing.T, ws, outside, out string) {
		return func(t *testing.T, ws, outside, out string) {
			t.Helper()
			for _, r := range rel {
				p := filepath.Join(ws, r)
				if strings.HasPrefix(r, "OUT/") {
					p = filepath.Join(outside, strings.TrimPrefix(r, "OUT/"))
				}
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was created on the host (the command said %q)", p, out)
				}
			}
		}
	}
	return []confinedProbe{
		{"write in the workspace", "echo ok > inside.txt && cat inside.txt", func(t *testing.T, ws, _, out string) {
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("the workspace is not writable: %q %v (the command said %q)", b, err, out)
			}
		}},
		{"marker in .git/info", "mkdir -p .git/info; touch .git/info/kz-marker; echo done", absent(".git/info/kz-marker")},
		{"a git hook", "mkdir -p .git/hooks; printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo done",
			absent(".git/hooks/pre-commit")},
		{"git config", "echo '[core]' >> .git/config; echo '  fsmonitor = touch /tmp/pwned' >> .git/config; cat .git/config",
			func(t *testing.T, ws, _, out string) {
				if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(b), "fsmonitor") {
					t.Errorf(".git/config was changed: %s", b)
				}
			}},
		{"outside the workspace", "touch OUT/kz-marker; echo done", absent("OUT/kz-marker")},
		{"kz's environment", "cat /proc/" + strconv.Itoa(kzPid) + "/environ | wc -c",
			func(t *testing.T, _, _, out string) {
				// kz is in another PID namespace: its pid names nothing.
				if !strings.Contains(out, "No such file or directory") {
					t.Errorf("the command could read kz's /proc entry: %s", out)
				}
			}},
	}
}

// outsideDir is a directory outside the workspace and outside /tmp (which
// the sandbox replaces with a private one, so that a write there would not
// show on the host for another reason).
func outsideDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "kz15-outside-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// TestRealClaudeConfined runs the real CLI under kz's sandbox: every probe
// is approved by kz and runs through Claude's Bash tool; the turn still
// completes through the credential proxy.
func TestRealClaudeConfined(t *testing.T) {
	probes := confinedProbes(os.Getpid())
	bin := realClaude(t)
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ws, ".git", "hooks"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := outsideDir(t)
	conf := clitest.Confiner(t, ws)
	api := newFakeAPI(t, probeScript(asLeakProbes(probes, outside), "Bash", func(cmd string) any {
		return map[string]string{"command": cmd, "description": "probe"}
	}))
	rt := New(Config{Name: "claude", Command: bin, Workspace: ws, Env: realEnv(api, home), Confiner: conf})
	t.Cleanup(func() { _ = rt.Close() })
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	final := h.Run(t, ctx, "Try to escape")
	if final.Status != string(engine.StatusComplete) || final.Output != "done" {
		t.Fatalf("the confined turn did not complete: %+v", final)
	}
	reqs := api.requests()
	if len(reqs) != len(probes)+1 {
		t.Fatalf("%d model requests, want %d", len(reqs), len(probes)+1)
	}
	for i, p := range probes {
		res, _ := reqs[i+1].toolResult()
		t.Run(p.name, func(t *testing.T) { p.check(t, ws, outside, contentText(res.Content)) })
	}
}

// asLeakProbes turns the confined probes into the scripted commands, with
// OUT/ naming the outside directory.
func asLeakProbes(ps []confinedProbe, outside string) []leakProbe {
	out := make([]leakProbe, len(ps))
	for i, p := range ps {
		out[i] = leakProbe{name: p.name, cmd: strings.ReplaceAll(p.cmd, "OUT/", outside+"/")}
	}
	return out
}

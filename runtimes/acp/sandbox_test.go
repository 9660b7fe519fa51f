package acp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// newSandbox is the session sandbox of a test, or a skip where this
// machine has no bubblewrap (a failure when KZ_REQUIRE_SANDBOX is set).
func newSandbox(t *testing.T, ws string) agentcli.Confiner {
	t.Helper()
	if st := sandbox.Probe(); st.Kind != sandbox.KindBubblewrap {
		if os.Getenv("KZ_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no bubblewrap here: %s", st.Reason)
		}
		t.Skipf("no bubblewrap here: %s", st.Reason)
	}
	sb, err := sandbox.New(sandbox.Policy{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return agentcli.NewConfiner(sb)
}

// TestRealGeminiConfined is the class "a CLI's approved commands cannot
// write outside the workspace or into .git" for Gemini CLI under kz's
// sandbox: each probe is approved by kz and run by run_shell_command. A
// write in the workspace works; a marker in .git/info (git may write the repository, never its info, hooks or config), a git hook, a change to
// .git/config and a marker outside the workspace (not under /tmp, which
// the sandbox replaces) never reach the host; kz's /proc entry is not
// there to read. Gemini keeps its sessions (its home is writable) and the
// turn completes through the credential proxy.
func TestRealGeminiConfined(t *testing.T) {
	outside, err := os.MkdirTemp("/var/tmp", "kz15-outside-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	absent := func(rel string) func(t *testing.T, ws, out string) {
		return func(t *testing.T, ws, out string) {
			if _, err := os.Stat(filepath.Join(ws, rel)); err == nil {
				t.Errorf("%s was created on the host (%s)", rel, out)
			}
		}
	}
	probes := []struct {
		name, cmd string
		check     func(t *testing.T, ws, out string)
	}{
		{"write in the workspace", "echo ok > inside.txt && cat inside.txt", func(t *testing.T, ws, out string) {
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("the workspace is not writable: %q %v (%s)", b, err, out)
			}
		}},
		{"marker in .git/info", "mkdir -p .git/info; touch .git/info/kz-marker; echo done", absent(".git/info/kz-marker")},
		{"a git hook", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo done", absent(".git/hooks/pre-commit")},
		{"git config", "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config; echo done", func(t *testing.T, ws, out string) {
			if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(b), "fsmonitor") {
				t.Errorf(".git/config was changed: %s", b)
			}
		}},
		{"outside the workspace", "touch " + outside + "/kz-marker; echo done", func(t *testing.T, _, out string) {
			if _, err := os.Stat(filepath.Join(outside, "kz-marker")); err == nil {
				t.Errorf("a marker was created outside the workspace (%s)", out)
			}
		}},
		{"kz's environment", "cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ | wc -c", func(t *testing.T, _, out string) {
			if !strings.Contains(out, "No such file or directory") {
				t.Errorf("the command could read kz's /proc entry: %s", out)
			}
		}},
	}
	api := newGeminiAPI(t, func(calls int, _ string) gstep {
		if calls < len(probes) {
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": probes[calls].cmd, "description": "probe"}}
		}
		return gstep{Text: "done"}
	})
	rt, ws := realSetupWith(t, api, []string{"GEMINI_API_KEY=" + realKey})
	rt.cfg.Confiner = newSandbox(t, ws)
	// The agent outlives the turn and must end before its sandbox.
	t.Cleanup(func() { _ = rt.Close() })
	h := newHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, harnessOpts{
		answer: func(engine.Event) engine.Answer { return engine.Answer{Decision: engine.DecisionAllow} }})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	final := h.run(t, ctx, "Try to escape")
	if final.Status != string(engine.StatusComplete) || final.Output != "done" {
		t.Fatalf("the confined turn did not complete: %+v", final)
	}
	reqs := api.requests()
	if len(reqs) != len(probes)+1 {
		t.Fatalf("%d model requests, want %d", len(reqs), len(probes)+1)
	}
	for i, p := range probes {
		out := lastFunctionResponse(reqs[i+1])
		t.Run(p.name, func(t *testing.T) { p.check(t, ws, out) })
	}
	// Gemini recorded the session in its real home, through the overlay.
	chats, _ := filepath.Glob(filepath.Join(filepath.Dir(ws), "home", ".gemini", "tmp", "*", "chats", "*"))
	if len(chats) == 0 {
		t.Error("Gemini could not keep its session in its home")
	}
}

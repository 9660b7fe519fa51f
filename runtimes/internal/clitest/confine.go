package clitest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ConfinedProbe is a command an agent runs under kz's sandbox after kz
// approves it, and what must hold on the host afterwards.
type ConfinedProbe struct {
	Name, Cmd string
	// Check inspects the host after the turn, given the workspace and
	// what the command printed (for its messages).
	Check func(t *testing.T, ws, out string)
}

// ConfinedProbes are the class "a CLI's approved commands cannot write
// outside the workspace or into .git". A write in the workspace works; a
// marker in .git/info (git may write the repository, never its info,
// hooks or config), a git hook, a change to .git/config and a marker in
// outside (a directory outside the workspace, see OutsideDir) never reach
// the host; kz's /proc entry is not there to read, because kz is in
// another PID namespace, where its pid names nothing. The workspace must
// hold .git/hooks and .git/config, as after git init.
func ConfinedProbes(outside string) []ConfinedProbe {
	return []ConfinedProbe{
		{"write in the workspace", "echo ok > inside.txt && cat inside.txt", func(t *testing.T, ws, out string) {
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("the workspace is not writable: %q %v (%s)", b, err, out)
			}
		}},
		{"marker in .git/info", "mkdir -p .git/info; touch .git/info/kz-marker; echo done", absentAt(".git/info/kz-marker")},
		{"a git hook", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo done", absentAt(".git/hooks/pre-commit")},
		{"git config", "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config; echo done", func(t *testing.T, ws, _ string) {
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
}

// absentAt checks that the path rel of the workspace was not created.
func absentAt(rel string) func(t *testing.T, ws, out string) {
	return func(t *testing.T, ws, out string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(ws, rel)); err == nil {
			t.Errorf("%s was created on the host (%s)", rel, out)
		}
	}
}

// OutsideDir is a directory outside the workspace and outside /tmp, which
// the sandbox replaces with a private one (so that a write there would
// not show on the host for another reason). It is removed when the test
// ends; where there is no /var/tmp the test is skipped.
func OutsideDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "kz15-outside-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

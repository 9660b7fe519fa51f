package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeTestFailsWhenACLICannotBeInstalled runs the Makefile's test
// recipe with an npm that always fails and an empty HOME, so that no
// pinned CLI is cached and none can be installed. GO is a script that
// records its calls: make test must stop with a message naming the CLI,
// after vet and before any go test.
func TestMakeTestFailsWhenACLICannotBeInstalled(t *testing.T) {
	t.Parallel()
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(tmp, "go-calls")
	writeExec(t, filepath.Join(bin, "npm"), "#!/bin/sh\necho 'npm: registry unreachable' >&2\nexit 1\n")
	writeExec(t, filepath.Join(bin, "fakego"), "#!/bin/sh\necho \"$1\" >> "+calls+"\n")
	cmd := exec.Command(makeBin, "--no-print-directory", "-C", root, "test", "GO="+filepath.Join(bin, "fakego"))
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + filepath.Join(tmp, "home")}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make test succeeded without its CLIs:\n%s", out)
	}
	if !strings.Contains(string(out), "make test: the pinned Claude Code CLI could not be installed") {
		t.Errorf("make test does not say which CLI failed:\n%s", out)
	}
	got, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != "vet" {
		t.Errorf("go was called as %q; want only vet, and no test run without the CLIs", got)
	}
}

func writeExec(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

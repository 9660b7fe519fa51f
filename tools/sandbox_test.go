//go:build linux

package tools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sandboxedBash runs script with bash under the wrapper, writes allowed in
// writable only, and returns its combined output and error.
func sandboxedBash(t *testing.T, dir string, writable []string, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), sandboxHelperEnv+"=1")
	if err := SandboxCommand(cmd, writable); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestSandboxConfinesWrites runs a shell under Landlock that tries every
// kind of write outside the workspace (through a subshell, through a
// symlink planted in the workspace, by rename, mkdir, symlink creation and
// truncation): the outside directory must be exactly as before, while
// writes inside, reads outside and /dev/null keep working.
func TestSandboxConfinesWrites(t *testing.T) {
	st := requireSandbox(t)
	t.Logf("%s", st.Reason)
	useSandboxTestWrapper(t)
	base := t.TempDir()
	ws, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "outbox")); err != nil {
		t.Fatal(err)
	}
	script := `
echo inside > a.txt && mkdir -p sub/deep && echo deep > sub/deep/f && echo wrote-inside
cat ` + outside + `/x && echo read-outside
echo x > /dev/null && echo devnull-ok
echo pwned > ` + outside + `/new
echo pwned >> ` + outside + `/x
: > ` + outside + `/x
echo pwned > outbox/viafollow
sh -c 'echo pwned > ` + outside + `/fromchild'
mkdir ` + outside + `/d
ln -s /etc ` + outside + `/link
mv a.txt ` + outside + `/moved
cp a.txt ` + outside + `/copied
rm -f ` + outside + `/x
truncate -s 0 ` + outside + `/x
true`
	out, err := sandboxedBash(t, ws, []string{ws}, script)
	if err != nil {
		t.Fatalf("sandboxed bash: %v\n%s", err, out)
	}
	for _, want := range []string{"wrote-inside", "secret", "read-outside", "devnull-ok", "Permission denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "sub", "deep", "f")); err != nil || string(b) != "deep\n" {
		t.Errorf("write inside: %q %v", b, err)
	}
	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "x" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("outside changed: %v\n%s", names, out)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(b) != "secret" {
		t.Errorf("outside/x = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Errorf("a.txt was moved out: %v", err)
	}
}

// TestSandboxKeepsCommandSetup checks that the rewrite keeps the working
// directory, the environment and the exit status of the real command.
func TestSandboxKeepsCommandSetup(t *testing.T) {
	requireSandbox(t)
	useSandboxTestWrapper(t)
	ws := t.TempDir()
	t.Setenv("KZ_SANDBOX_PROBE", "kept")
	out, err := sandboxedBash(t, ws, []string{ws}, `pwd; echo "$KZ_SANDBOX_PROBE"; exit 7`)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("exit = %v, want status 7\n%s", err, out)
	}
	if !strings.Contains(out, ws) || !strings.Contains(out, "kept") {
		t.Errorf("cwd or env lost:\n%s", out)
	}
}

// TestSandboxRefusesBadInvocations checks that the wrapper fails closed:
// malformed arguments, a missing command or a missing writable directory
// mean status 126 and nothing run.
func TestSandboxRefusesBadInvocations(t *testing.T) {
	requireSandbox(t)
	useSandboxTestWrapper(t)
	for name, args := range map[string][]string{
		"no separator":   {"kz", sandboxArg, "--rw", "/tmp"},
		"bad flag":       {"kz", sandboxArg, "--ro", "/tmp", "--", "true"},
		"no command":     {"kz", sandboxArg, "--rw", "/tmp", "--"},
		"unknown binary": {"kz", sandboxArg, "--rw", "/tmp", "--", "kz-no-such-program-xyz"},
		"not a wrapper":  {"kz", "run"},
	} {
		if code := SandboxMain(args); code != sandboxExitCode {
			t.Errorf("%s: status %d, want %d", name, code, sandboxExitCode)
		}
	}
	// A writable directory that does not exist is refused by the wrapper
	// itself (in a child, since success would exec).
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	out, err := sandboxedBash(t, ws, []string{filepath.Join(ws, "missing")}, "echo > "+marker)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != sandboxExitCode || !strings.Contains(out, "was not run") {
		t.Errorf("missing writable dir: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	if err := SandboxCommand(exec.Command("/bin/true"), []string{"relative/dir"}); err == nil {
		t.Error("relative writable dir accepted")
	}
	if err := SandboxCommand(exec.Command("/bin/true"), nil); err == nil {
		t.Error("no writable dir accepted")
	}
}

func TestIsSandboxInvocation(t *testing.T) {
	if !IsSandboxInvocation([]string{"kz", sandboxArg, "--", "x"}) {
		t.Error("wrapper not recognised")
	}
	for _, a := range [][]string{nil, {"kz"}, {"kz", "-p", sandboxArg}} {
		if IsSandboxInvocation(a) {
			t.Errorf("%q taken for the wrapper", a)
		}
	}
}

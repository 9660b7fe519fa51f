//go:build linux

package patch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// TestVerifyRunsInTheSandbox: a proposal's VERIFY command runs through the
// session's sandbox with the answer's confinement, like kz's bash tool: a
// read-only confinement (or none decided) cannot write the workspace,
// workspace-write can but not .git; a sandbox that cannot start the
// command does not run it and says why; without a sandbox it runs
// unconfined.
func TestVerifyRunsInTheSandbox(t *testing.T) {
	st := sandbox.Probe()
	if st.Kind != sandbox.KindBubblewrap {
		if os.Getenv("KZ_REQUIRE_SANDBOX") != "" {
			t.Fatalf("KZ_REQUIRE_SANDBOX is set but bubblewrap is not usable: %s", st.Reason)
		}
		t.Skip(st.Reason)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp("/var/tmp", "kz-patch-test-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	sb, err := sandbox.New(sandbox.Policy{Workspace: ws, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	env := childenv.Build(os.Environ(), childenv.Spec{})
	run := ShellRunner(sb, ws, env, time.Minute, 64<<10)
	script := "echo made > made.txt; echo pwned >> .git/config; echo done"
	for _, c := range []struct {
		conf   engine.Confinement
		writes bool
	}{
		{engine.Confinement{}, false},
		{engine.Confinement{Profile: engine.ProfileReadOnly}, false},
		{engine.Confinement{Profile: engine.ProfileWorkspaceWrite}, true},
		{engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Git: true}, true},
	} {
		_ = os.Remove(filepath.Join(ws, "made.txt"))
		out, code, err := run(context.Background(), c.conf, script)
		if err != nil || code != 0 || !strings.Contains(out, "done") {
			t.Fatalf("%s: %q %d %v", c.conf, out, code, err)
		}
		if _, err := os.Stat(filepath.Join(ws, "made.txt")); (err == nil) != c.writes {
			t.Errorf("%s: workspace write %v, want %v: %s", c.conf, err == nil, c.writes, out)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(b), "pwned") {
			t.Errorf("%s: .git/config written", c.conf)
		}
	}
	// A failing command is a failure, not an error.
	if _, code, err := run(context.Background(), engine.Confinement{}, "exit 4"); err != nil || code != 4 {
		t.Errorf("exit 4: %d %v", code, err)
	}
	// Under bubblewrap it runs on the session's sandbox server (kz itself
	// as PID 1 of the sandbox), as the bash tool's commands do.
	if out, code, err := run(context.Background(), engine.Confinement{}, "tr '\\0' ' ' < /proc/1/cmdline"); err != nil || code != 0 ||
		!strings.Contains(out, "__kz_sandbox_server") {
		t.Errorf("not on a sandbox server: %q %d %v", out, code, err)
	}
	// A command that outlives the timeout is killed with everything it
	// started, and the error says it timed out.
	token := "5252." + strconv.Itoa(os.Getpid()%1000)
	start := time.Now()
	short := ShellRunner(sb, ws, env, 500*time.Millisecond, 64<<10)
	_, code, err := short(context.Background(), engine.Confinement{Profile: engine.ProfileWorkspaceWrite},
		"trap '' TERM; setsid sleep "+token+" & (sleep "+token+" &); sleep "+token)
	if !errors.Is(err, context.DeadlineExceeded) || code != -1 {
		t.Errorf("timeout: %d %v", code, err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the timeout took %s", time.Since(start))
	}
	if processWith(token) {
		t.Error("a process of the timed-out command is still running")
	}
	// Without a sandbox the command runs unconfined.
	_ = os.Remove(filepath.Join(ws, "made.txt"))
	if _, code, err := ShellRunner(nil, ws, env, time.Minute, 64<<10)(context.Background(), engine.Confinement{}, "echo made > made.txt"); err != nil || code != 0 {
		t.Fatalf("unsandboxed: %d %v", code, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err != nil {
		t.Error("the unsandboxed command did not run")
	}
	// A closed sandbox runs nothing.
	_ = os.Remove(filepath.Join(ws, "made.txt"))
	_ = sb.Close()
	if _, _, err := run(context.Background(), engine.Confinement{Profile: engine.ProfileWorkspaceWrite}, "echo made > made.txt"); err == nil {
		t.Error("a closed sandbox ran the command")
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err == nil {
		t.Error("the command ran")
	}
}

// processWith reports whether a process whose command line holds token
// is running.
func processWith(token string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(token)) {
			return true
		}
	}
	return false
}

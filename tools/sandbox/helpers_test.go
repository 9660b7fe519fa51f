//go:build linux

package sandbox

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

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
)

// TestMain lets the test binary play kz's part as the Landlock wrapper
// (Command re-executes os.Executable()).
func TestMain(m *testing.M) {
	if IsWrapperInvocation(os.Args) {
		os.Exit(WrapperMain(os.Args))
	}
	goleak.VerifyTestMain(m)
}

// requireKind skips a test when the machine lacks the mechanism, unless
// KZ_REQUIRE_SANDBOX is set (CI), where it fails instead.
func requireKind(t testing.TB, k Kind) {
	t.Helper()
	if k == KindNone {
		// Running unconfined is asked for, never probed: every machine
		// can do it, so KZ_REQUIRE_SANDBOX has nothing to require.
		return
	}
	st := Probe()
	ok := st.Kind == k
	if k == KindLandlock {
		ok = st.LandlockABI > 0
	}
	if ok {
		return
	}
	if os.Getenv("KZ_REQUIRE_SANDBOX") != "" {
		t.Fatalf("KZ_REQUIRE_SANDBOX is set but %s is not usable: %s", k, st.Reason)
	}
	t.Skipf("%s is not usable here: %s", k, st.Reason)
}

// fixture is a workspace, a home and an outside directory, none of them
// under /tmp except the workspace (where the private /tmp must put it
// back), the home and the outside directory live under /var/tmp so that
// the private /tmp does not hide them by accident.
type fixture struct {
	ws, home, outside string
	sb                *Sandbox
	// route is how bubblewrap runs the fixture's commands.
	route route
}

func newFixture(t testing.TB, mech Kind) *fixture {
	t.Helper()
	requireKind(t, mech)
	f := &fixture{ws: realDir(t, t.TempDir()), home: varTmpDir(t, "home"), outside: varTmpDir(t, "outside")}
	kzConfig := filepath.Join(f.home, ".config", "kz")
	kzData := filepath.Join(f.home, ".local", "share", "kz")
	for _, d := range []string{kzConfig, kzData} {
		mkdir(t, d)
	}
	writeFile(t, filepath.Join(kzConfig, "config.toml"), "secret-kz-config")
	writeFile(t, filepath.Join(kzData, "kz.db"), "secret-kz-data")
	sb, err := New(Policy{Workspace: f.ws, Home: f.home, Hidden: []string{kzConfig, kzData}, Mechanism: mech})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	f.sb = sb
	return f
}

// varTmpDir makes a directory under /var/tmp, outside the /tmp that
// bubblewrap replaces, removed at the end of the test.
func varTmpDir(t testing.TB, name string) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "kz-sandbox-test-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeAll(d) })
	return realDir(t, d)
}

func realDir(t testing.TB, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// result is a finished sandboxed command.
type result struct {
	out      string
	code     int
	setupErr error
}

// run runs script with bash under c in the fixture's workspace.
func (f *fixture) run(t testing.TB, c engine.Confinement, script string) result {
	t.Helper()
	return f.runSpec(t, c, Spec{Argv: []string{"/bin/bash", "-c", script}})
}

func (f *fixture) runSpec(t testing.TB, c engine.Confinement, spec Spec) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if spec.Env == nil {
		spec.Env = childenv.Build(os.Environ(), childenv.Spec{})
	}
	if f.route == viaServer {
		return f.runOnServer(t, ctx, c, spec)
	}
	cmd, err := f.sb.Command(ctx, c, spec)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res := result{out: out.String(), setupErr: f.sb.SetupError(cmd)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return res
}

var (
	readOnly  = engine.Confinement{Profile: engine.ProfileReadOnly}
	wsWrite   = engine.Confinement{Profile: engine.ProfileWorkspaceWrite}
	wsWriteNt = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: true}
	wsWriteGt = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Git: true}
)

// exists reports whether p exists (without following a final symlink).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestLandlockConfinesWrites: where only Landlock is available, a
// read-only command writes nothing but the temp dir, and a
// workspace-write command writes the workspace and the temp dir, whatever
// the way (a child, a symlink planted in the workspace, rename, mkdir,
// symlink creation, truncation); reads and /dev/null keep working.
func TestLandlockConfinesWrites(t *testing.T) {
	f := newFixture(t, KindLandlock)
	writeFile(t, filepath.Join(f.outside, "x"), "secret")
	if err := os.Symlink(f.outside, filepath.Join(f.ws, "outbox")); err != nil {
		t.Fatal(err)
	}
	o := shellQuote(f.outside)
	escapes := []string{
		"echo pwned > " + o + "/new", "echo pwned >> " + o + "/x", ": > " + o + "/x", "echo pwned > outbox/viafollow",
		"sh -c 'echo pwned > " + f.outside + "/fromchild'", "mkdir " + o + "/d", "ln -s /etc " + o + "/link",
		"cp /etc/hostname " + o + "/copied", "rm -f " + o + "/x", "truncate -s 0 " + o + "/x",
		"echo pwned > " + shellQuote(f.home+"/.bashrc"),
	}
	for _, c := range []struct {
		conf    engine.Confinement
		inside  bool
		profile string
	}{{readOnly, false, "read-only"}, {wsWrite, true, "workspace-write"}} {
		t.Run(c.profile, func(t *testing.T) {
			script := "echo inside > a.txt; echo tmp > \"$TMPDIR/t\" && echo wrote-tmp; cat " + o + "/x && echo read-outside; echo x > /dev/null && echo devnull-ok; " +
				strings.Join(escapes, "; ") + "; true"
			r := f.run(t, c.conf, script)
			if r.setupErr != nil {
				t.Fatalf("setup: %v\n%s", r.setupErr, r.out)
			}
			for _, want := range []string{"wrote-tmp", "secret", "read-outside", "devnull-ok"} {
				if !strings.Contains(r.out, want) {
					t.Errorf("output lacks %q:\n%s", want, r.out)
				}
			}
			if got := exists(filepath.Join(f.ws, "a.txt")); got != c.inside {
				t.Errorf("workspace write: %v, want %v\n%s", got, c.inside, r.out)
			}
			ents, _ := os.ReadDir(f.outside)
			if len(ents) != 1 || readFile(t, filepath.Join(f.outside, "x")) != "secret" {
				t.Errorf("outside changed: %v\n%s", ents, r.out)
			}
			if exists(filepath.Join(f.home, ".bashrc")) {
				t.Error("home written")
			}
			_ = os.Remove(filepath.Join(f.ws, "a.txt"))
		})
	}
	if st := f.sb.Status(); st.Kind != KindLandlock || st.Full {
		t.Errorf("status %+v", st)
	}
}

// TestLandlockRefusesToRunUnconfined: a wrapper that cannot confine
// itself (a writable directory that does not exist, bad arguments) does
// not run the command, and SetupError says why; a failing command is not
// a setup failure.
func TestLandlockRefusesToRunUnconfined(t *testing.T) {
	f := newFixture(t, KindLandlock)
	marker := filepath.Join(f.ws, "ran")
	r := f.runSpec(t, wsWrite, Spec{Argv: []string{"/bin/bash", "-c", "echo > " + marker}, ExtraWritable: []string{filepath.Join(f.outside, "missing")}})
	if r.setupErr == nil || r.code != wrapperExitCode || exists(marker) {
		t.Errorf("missing writable dir: %+v", r)
	}
	if r := f.run(t, wsWrite, "exit 3"); r.setupErr != nil || r.code != 3 {
		t.Errorf("failing command: %+v", r)
	}
	for name, args := range map[string][]string{
		"no separator":   {"kz", wrapperArg, "--rw", "/tmp"},
		"bad flag":       {"kz", wrapperArg, "--ro", "/tmp", "--", "true"},
		"no command":     {"kz", wrapperArg, "--rw", "/tmp", "--"},
		"no writable":    {"kz", wrapperArg, "--", "true"},
		"bad status fd":  {"kz", wrapperArg, "--status-fd", "x", "--rw", "/tmp", "--", "true"},
		"unknown binary": {"kz", wrapperArg, "--rw", "/tmp", "--", "kz-no-such-program-xyz"},
		"relative dir":   {"kz", wrapperArg, "--rw", "tmp", "--", "true"},
		"not a wrapper":  {"kz", "run"},
	} {
		if code := WrapperMain(args); code != wrapperExitCode {
			t.Errorf("%s: status %d, want %d", name, code, wrapperExitCode)
		}
	}
	for _, a := range [][]string{nil, {"kz"}, {"kz", "-p", wrapperArg}} {
		if IsWrapperInvocation(a) {
			t.Errorf("%q taken for the wrapper", a)
		}
	}
}

// TestNoSandboxRunsUnconfined: on a machine without a sandbox a command
// still runs (after the gate's yes), unconfined, with the minimal
// environment and the session's temp dir.
func TestNoSandboxRunsUnconfined(t *testing.T) {
	f := newFixture(t, KindNone)
	t.Setenv("KZ_TEST_TOKEN", "tok")
	r := f.run(t, readOnly, "echo x > written && echo \"$TMPDIR\" && env")
	if r.code != 0 || !exists(filepath.Join(f.ws, "written")) {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.out, f.sb.TempDir()) || strings.Contains(r.out, "KZ_TEST_TOKEN") {
		t.Errorf("environment: %s", r.out)
	}
	if st := f.sb.Status(); st.Kind != KindNone || st.Full || st.Reason == "" {
		t.Errorf("status %+v", st)
	}
}

// TestPolicyChecked: New refuses a policy it cannot honour: no workspace,
// a workspace or writable directory that does not exist, a writable
// directory that would open the home, the root or kz's own directories.
func TestPolicyChecked(t *testing.T) {
	home := varTmpDir(t, "home")
	ws := realDir(t, t.TempDir())
	kzDir := filepath.Join(home, ".config", "kz")
	mkdir(t, kzDir)
	mkdir(t, filepath.Join(home, "cache"))
	for name, p := range map[string]Policy{
		"no workspace":        {Home: home},
		"missing workspace":   {Workspace: filepath.Join(ws, "missing"), Home: home},
		"missing writable":    {Workspace: ws, Home: home, Writable: []string{filepath.Join(ws, "nope")}},
		"writable home":       {Workspace: ws, Home: home, Writable: []string{"~"}},
		"writable root":       {Workspace: ws, Home: home, Writable: []string{"/"}},
		"writable above home": {Workspace: ws, Home: home, Writable: []string{filepath.Dir(home)}},
		"writable kz dir":     {Workspace: ws, Home: home, Writable: []string{kzDir}, Hidden: []string{kzDir}},
		"writable above kz":   {Workspace: ws, Home: home, Writable: []string{filepath.Join(home, ".config")}, Hidden: []string{kzDir}},
		"writable is a file":  {Workspace: ws, Home: home, Writable: []string{"/etc/hostname"}},
	} {
		if sb, err := New(p); err == nil {
			_ = sb.Close()
			t.Errorf("%s: accepted", name)
		}
	}
	sb, err := New(Policy{Workspace: ws, Home: home, Writable: []string{"~/cache"}, Hidden: []string{kzDir}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	if _, err := sb.Command(context.Background(), engine.Confinement{Profile: "bogus"}, Spec{Argv: []string{"true"}}); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := sb.Command(context.Background(), readOnly, Spec{}); err == nil {
		t.Error("empty argv accepted")
	}
	if _, err := sb.Command(context.Background(), readOnly, Spec{Argv: []string{"true"}, Dir: "relative"}); err == nil {
		t.Error("relative dir accepted")
	}
	cmd, err := sb.Command(context.Background(), readOnly, Spec{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	_ = sb.SetupError(cmd)
}

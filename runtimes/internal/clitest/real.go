package clitest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// The real-CLI tests drive the pinned CLIs (installed from npm by each
// runtime's install script) against a fake model API on 127.0.0.1. They
// skip where the CLI is missing, unless KZ_REQUIRE_CLIS is set (CI), where
// they fail; -short skips them too.

// Binary says where the tests of one real CLI find it.
type Binary struct {
	// Name is the CLI's name in messages ("claude").
	Name string
	// EnvVar names the variable that gives its path (KZ_CLAUDE_BIN).
	EnvVar string
	// Paths are where it may be installed otherwise, in order: paths or
	// glob patterns; an empty entry is skipped.
	Paths []string
	// Install is the script that installs it, from the repository root.
	Install string
}

// RealCLI returns the path of the real CLI b, or skips the test.
func RealCLI(t testing.TB, b Binary) string {
	t.Helper()
	if testing.Short() && os.Getenv("KZ_REQUIRE_CLIS") == "" {
		t.Skipf("real %s CLI tests skipped in -short mode", b.Name)
	}
	if p := os.Getenv(b.EnvVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", b.EnvVar, p, err)
		}
		return p
	}
	for _, pat := range b.Paths {
		if pat == "" {
			continue
		}
		matches, _ := filepath.Glob(pat)
		for _, p := range matches {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p
			}
		}
	}
	msg := "the " + b.Name + " CLI is not installed: run " + b.Install + " or set " + b.EnvVar
	if os.Getenv("KZ_REQUIRE_CLIS") != "" {
		t.Fatal(msg + " (KZ_REQUIRE_CLIS is set, so this fails instead of skipping)")
	}
	t.Skip(msg)
	return ""
}

// Repo is the repository's root, where install scripts put their .cache.
var Repo = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}()

// Dirs creates each directory (and its parents) or fails the test.
func Dirs(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// GitInit makes dir a git repository, as a person's project is.
func GitInit(t testing.TB, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
}

// ScratchDir is a test's scratch directory under the user's cache
// directory rather than the system temp dir (removed when the test ends):
// Codex refuses to create its helper links ("codex-linux-sandbox") under a
// CODEX_HOME in the temp dir, and every command it then runs in its own
// sandbox fails with "bwrap: execvp codex-linux-sandbox".
func ScratchDir(t testing.TB, prefix string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	base = filepath.Join(base, "kz", "test")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(base, prefix)
	if err != nil {
		return t.TempDir()
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Gate is kz's permission gate with the given rules, as a session uses
// it.
func Gate(t testing.TB, rules permission.Rules) engine.Gate {
	t.Helper()
	g, err := permission.New(permission.Options{User: rules, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Confiner is the session sandbox of a test's workspace ws, or a skip
// where this machine has no bubblewrap (a failure when KZ_REQUIRE_SANDBOX
// is set).
func Confiner(t testing.TB, ws string) agentcli.Confiner {
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

// FilesContaining reports the regular files under root that contain
// needle (a key that must not have been written anywhere).
func FilesContaining(root, needle string) []string {
	var hits []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), needle) {
			hits = append(hits, path)
		}
		return nil
	})
	return hits
}

// ProcessGone reports whether pid no longer runs; a zombie waiting for its
// reaper runs nothing.
func ProcessGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

// CheckGone waits until every process of pids is gone, up to wait for all
// of them together, and fails the test for each that still runs then,
// which it kills so that it outlives neither the check nor the test.
// after says what the processes must not outlive ("the interrupt").
func CheckGone(t testing.TB, wait time.Duration, after string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for _, pid := range pids {
		for !ProcessGone(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !ProcessGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d outlived %s", pid, after)
		}
	}
}

// Procs lists the live processes whose command line has argv as
// consecutive arguments (Procs("sleep", "38.5")).
func Procs(argv ...string) []int {
	want := "\x00" + strings.Join(argv, "\x00") + "\x00"
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains("\x00"+string(b), want) && !ProcessGone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// WhenRunning calls fn, in a goroutine, once a process with argv runs (or
// after 15 s).
func WhenRunning(fn func(), argv ...string) {
	go func() {
		deadline := time.Now().Add(15 * time.Second)
		for len(Procs(argv...)) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		fn()
	}()
}

// CLIPids lists the processes, this one excepted, whose command line
// contains each of argv and whose environment contains env.
func CLIPids(env string, argv ...string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		ok := true
		for _, a := range argv {
			if !strings.Contains(string(cmd), a) {
				ok = false
			}
		}
		envb, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if ok && strings.Contains(string(envb), env) {
			out = append(out, pid)
		}
	}
	return out
}

// KillWhenSleeping SIGKILLs the CLI of workspace ws (found by its
// argument cliArg and its HOME, the home beside ws) once the command
// `sleep arg` it started runs, waiting up to wait for it.
func KillWhenSleeping(ws, arg, cliArg string, wait time.Duration) {
	home := "HOME=" + filepath.Join(filepath.Dir(ws), "home")
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && len(Procs("sleep", arg)) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range CLIPids(home, cliArg) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// CheckSleepGone fails the test when `sleep arg` outlives the CLI that
// started it by a second, and kills it.
func CheckSleepGone(t testing.TB, arg string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for len(Procs("sleep", arg)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if p := Procs("sleep", arg); len(p) > 0 {
		for _, pid := range p {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the command outlived the killed CLI: %v", p)
	}
}

// CheckKeyKept fails the test where key is in kz's events (what the store
// keeps) or in a file under dir (the CLI's home and the workspace): the
// end of every "children never see credentials" test.
func CheckKeyKept(t testing.TB, key string, evs []engine.Event, dir string) {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key) {
		t.Error("kz's events (what the store keeps) hold the key")
	}
	if hits := FilesContaining(dir, key); len(hits) > 0 {
		t.Errorf("files of the CLI or the workspace hold the key: %q", hits)
	}
}

//go:build linux

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// withSandbox gives the fixture's session a sandbox of mechanism mech,
// skipping the test where the machine lacks it (failing under
// KZ_REQUIRE_SANDBOX). Its home is outside the /tmp bubblewrap replaces.
func (f *fixture) withSandbox(t *testing.T, mech sandbox.Kind, writable ...string) {
	t.Helper()
	st := sandbox.Probe()
	if mech == sandbox.KindBubblewrap && st.Kind != mech || mech == sandbox.KindLandlock && st.LandlockABI == 0 {
		if os.Getenv("KZ_REQUIRE_SANDBOX") != "" {
			t.Fatalf("KZ_REQUIRE_SANDBOX is set but %s is not usable: %s", mech, st.Reason)
		}
		t.Skipf("%s is not usable here: %s", mech, st.Reason)
	}
	home, err := os.MkdirTemp("/var/tmp", "kz-tools-test-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	sb, err := sandbox.New(sandbox.Policy{Workspace: f.ws.Dir(), Home: home, Mechanism: mech, Writable: writable})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	f.env.Sandbox = sb
}

// answerWith makes the fixture's gate allow every call with confinement c.
func (f *fixture) answerWith(c engine.Confinement) {
	f.perm.mu.Lock()
	defer f.perm.mu.Unlock()
	f.perm.answer = func(engine.PermissionRequest) engine.Answer {
		return engine.Answer{Decision: engine.DecisionAllow, Confinement: c}
	}
}

var (
	roConf  = engine.Confinement{Profile: engine.ProfileReadOnly}
	wsConf  = engine.Confinement{Profile: engine.ProfileWorkspaceWrite}
	netConf = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: true}
	gitConf = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Git: true}
)

// TestBashRunsUnderTheAnswersConfinement runs real commands through the
// executor with the confinement the gate's answer carries: a read-only
// answer (or one that says nothing) cannot write the workspace, a
// workspace-write answer can but not .git or the siblings of the
// workspace, and only an answer with network reaches a port on the host's
// loopback.
func TestBashRunsUnderTheAnswersConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withSandbox(t, sandbox.KindBubblewrap)
	f.write(t, ".git/config", "[core]\n")
	port := loopbackServer(t)
	net := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port)
	for _, c := range []struct {
		name      string
		conf      engine.Confinement
		writes    bool
		reachesNt bool
	}{
		{"read-only", roConf, false, false},
		{"nothing decided", engine.Confinement{}, false, false},
		{"workspace-write", wsConf, true, false},
		{"workspace-write with git", gitConf, true, false},
		{"workspace-write with network", netConf, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.answerWith(c.conf)
			_ = os.Remove(filepath.Join(f.ws.Dir(), "made.txt"))
			r := f.call(t, "bash", map[string]any{"command": "echo made > made.txt; echo pwned >> .git/config; echo pwned > ../outside/x; " + net + "; echo end"})
			if !strings.Contains(r.Output, "end") {
				t.Fatalf("the command did not run: %+v", r)
			}
			if got := exists(filepath.Join(f.ws.Dir(), "made.txt")); got != c.writes {
				t.Errorf("workspace write: %v, want %v\n%s", got, c.writes, r.Output)
			}
			if got := strings.Contains(r.Output, "hello"); got != c.reachesNt {
				t.Errorf("network: %v, want %v\n%s", got, c.reachesNt, r.Output)
			}
			b, _ := os.ReadFile(filepath.Join(f.ws.Dir(), ".git/config"))
			if strings.Contains(string(b), "pwned") {
				t.Errorf(".git/config written:\n%s", r.Output)
			}
			f.assertOutsideUntouched(t)
		})
	}
	reqs := f.perm.requests()
	if len(reqs) == 0 || !reqs[0].Sandboxed {
		t.Errorf("requests not marked sandboxed: %+v", reqs)
	}
}

// TestBashEditedInputTakesTheSecondAnswersConfinement: when the person
// edits a command, the confinement of the answer about the edited command
// is the one it runs under.
func TestBashEditedInputTakesTheSecondAnswersConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withSandbox(t, sandbox.KindBubblewrap)
	edited, _ := json.Marshal(map[string]any{"command": "echo edited > edited.txt; echo ran"})
	n := 0
	f.perm.answer = func(engine.PermissionRequest) engine.Answer {
		n++
		if n == 1 {
			return engine.Answer{Decision: engine.DecisionAllow, Confinement: wsConf, UpdatedInput: edited}
		}
		return engine.Answer{Decision: engine.DecisionAllow, Confinement: roConf}
	}
	r := f.call(t, "bash", map[string]any{"command": "echo original"})
	if !strings.Contains(r.Output, "ran") || exists(filepath.Join(f.ws.Dir(), "edited.txt")) {
		t.Errorf("the edited command did not run read-only: %+v", r)
	}
}

// TestBashSandboxFailureNotRun: when the sandbox cannot start a command
// (a writable directory vanished; the sandbox was closed), the command
// does not run and the result says why.
func TestBashSandboxFailureNotRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	extra := filepath.Join(f.base, "outside", "cache")
	if err := os.Mkdir(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	f.withSandbox(t, sandbox.KindBubblewrap, extra)
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	f.answerWith(wsConf)
	r := f.call(t, "bash", map[string]any{"command": "echo ran > ran.txt"})
	if !r.IsError || !strings.Contains(r.Output, "sandbox") || exists(filepath.Join(f.ws.Dir(), "ran.txt")) {
		t.Errorf("vanished writable dir: %+v", r)
	}
	_ = f.env.Sandbox.Close()
	r = f.call(t, "bash", map[string]any{"command": "echo ran > ran.txt"})
	if !r.IsError || !strings.Contains(r.Output, "not run") || exists(filepath.Join(f.ws.Dir(), "ran.txt")) {
		t.Errorf("closed sandbox: %+v", r)
	}
}

// TestBashSandboxedTreeEnds: an interrupted or finished sandboxed call
// leaves no process behind, a setsid child included.
func TestBashSandboxedTreeEnds(t *testing.T) {
	f := newFixture(t)
	f.withSandbox(t, sandbox.KindBubblewrap)
	f.answerWith(wsConf)
	token := fmt.Sprintf("5151.%d", os.Getpid()%1000)
	r := f.call(t, "bash", map[string]any{"command": "setsid sleep " + token + " & echo started"})
	if !strings.Contains(r.Output, "started") {
		t.Fatalf("%+v", r)
	}
	waitGone(t, token)
	token = fmt.Sprintf("5252.%d", os.Getpid()%1000)
	ctx, cancel := context.WithCancel(context.Background())
	in, _ := json.Marshal(map[string]any{"command": "setsid sleep " + token + " & sleep " + token + "; wait"})
	done := make(chan []ToolResult, 1)
	go func() {
		done <- f.ex.Execute(ctx, f.perm, f.rec, []ToolCall{{ID: "cancel-me", Name: "bash", Input: in}})
	}()
	for deadline := time.Now().Add(10 * time.Second); !processWith(token) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if res := <-done; !res[0].IsError || !strings.Contains(res[0].Output, "interrupted") {
		t.Errorf("%+v", res[0])
	}
	waitGone(t, token)
}

// TestBashUnderLandlock: where only Landlock exists, a read-only answer
// cannot write the workspace and a workspace-write one can, and neither
// can write outside it.
func TestBashUnderLandlock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withSandbox(t, sandbox.KindLandlock)
	for _, c := range []struct {
		conf   engine.Confinement
		writes bool
	}{{roConf, false}, {wsConf, true}} {
		f.answerWith(c.conf)
		_ = os.Remove(filepath.Join(f.ws.Dir(), "in.txt"))
		r := f.call(t, "bash", map[string]any{"command": "echo in > in.txt; echo out > ../outside/pwned; echo done"})
		if !strings.Contains(r.Output, "done") || exists(filepath.Join(f.ws.Dir(), "in.txt")) != c.writes {
			t.Errorf("%s: %+v", c.conf, r)
		}
		f.assertOutsideUntouched(t)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// processWith reports a process whose command line holds token.
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

// waitGone fails unless no process holding token is left within a few
// seconds (the kernel tears a PID namespace down right after its init).
func waitGone(t *testing.T, token string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); processWith(token) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if processWith(token) {
		t.Errorf("a process with %q outlived the call", token)
	}
}

// loopbackServer answers "hello" on a port of the host's loopback.
func loopbackServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port
}

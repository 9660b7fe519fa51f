package agentcli

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/tools/sandbox/sandboxtest"
)

// TestUnconfinedCommand: without a sandbox the CLI starts as before, in
// its own process group with exactly the environment it was given, and kz
// runtimes says it is unconfined.
func TestUnconfinedCommand(t *testing.T) {
	if NewConfiner(nil) != nil {
		t.Fatal("a nil sandbox gave a confiner")
	}
	cmd, err := Command(context.Background(), nil, []string{"/bin/sh", "-c", "echo $ONLY"}, t.TempDir(), []string{"ONLY=x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		t.Error("the CLI is not in its own process group")
	}
	out, err := cmd.Output()
	if err != nil || string(out) != "x\n" {
		t.Errorf("output %q, %v", out, err)
	}
	if Describe(nil) != Unconfined {
		t.Errorf("describe %q", Describe(nil))
	}
}

// TestConfinedCommand: under bubblewrap a CLI may write the workspace and
// its own home (created if missing), not the workspace's .git, and still
// reaches a listener on the host's loopback, where kz's credential proxy
// waits for it.
func TestConfinedCommand(t *testing.T) {
	sandboxtest.RequireBubblewrap(t)
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home", ".agent")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewConfiner(sandboxtest.New(t, ws))
	if c == nil || !c.Full() || !strings.Contains(c.Describe(), "bubblewrap") {
		t.Fatalf("confiner %v", c)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		if conn, err := ln.Accept(); err == nil {
			_, _ = conn.Write([]byte("proxy\n"))
			_ = conn.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	script := "echo a > ws.txt; echo b > " + home + "/state; touch .git/marker; { echo x > .git/config; } 2>/dev/null || echo config-refused; " +
		"touch .git/hooks/pre-commit 2>/dev/null || echo hook-refused; " +
		"exec 3<>/dev/tcp/127.0.0.1/" + port + " && head -n1 <&3"
	cmd, err := Command(context.Background(), c, []string{"/bin/bash", "-c", script}, ws, []string{"PATH=/usr/bin:/bin"}, []string{home})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got := out.String(); got != "config-refused\nhook-refused\nproxy\n" {
		t.Errorf("output %q", got)
	}
	for _, p := range []string{filepath.Join(ws, "ws.txt"), filepath.Join(home, "state")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was not written: %v", p, err)
		}
	}
	// git may write the repository (an allowed commit works), never its
	// config or hooks.
	if _, err := os.Stat(filepath.Join(ws, ".git", "marker")); err != nil {
		t.Errorf("the confined CLI could not write the repository: %v", err)
	}
	for _, p := range []string{"config", "hooks/pre-commit"} {
		if b, err := os.ReadFile(filepath.Join(ws, ".git", p)); err == nil && len(b) > 0 {
			t.Errorf("the confined CLI wrote .git/%s", p)
		}
	}
}

// TestConfinedTreeEndsWithTheCommand: a CLI under bubblewrap whose tool
// child left its process group (setsid, as Claude's Bash tool does) leaves
// nothing behind, whether the CLI exits by itself or is killed: the
// sandbox's PID namespace ends with the command. This is what lets
// Tree.Signal skip the scan of /proc for a confined CLI.
func TestConfinedTreeEndsWithTheCommand(t *testing.T) {
	ws := t.TempDir()
	c := NewConfiner(sandboxtest.New(t, ws))
	for _, killed := range []bool{false, true} {
		marker := proc.NewMarker("KZ_AGENTCLI_TEST")
		// The CLI starts a child in a session of its own, says so, and
		// exits when its stdin closes (or is killed first).
		script := "setsid sleep 61.8 </dev/null >/dev/null 2>&1 & echo started; read -r _"
		cmd, err := Command(context.Background(), c, []string{"/bin/bash", "-c", script}, ws, []string{"PATH=/usr/bin:/bin", marker}, nil)
		if err != nil {
			t.Fatal(err)
		}
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tree := Tree(c, cmd.Process.Pid, marker)
		if !tree.PIDNamespace {
			t.Fatal("a fully confined CLI's tree is not in its own PID namespace")
		}
		if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "started\n" {
			t.Fatalf("the CLI said %q", line)
		}
		sleeper := markedSleep(t, tree, "61.8")
		if pgid, _ := syscall.Getpgid(sleeper); pgid == tree.Pgid {
			t.Fatal("the child stayed in the group: the test proves nothing")
		}
		if killed {
			tree.Signal(syscall.SIGKILL)
		} else {
			_ = stdin.Close()
		}
		_ = cmd.Wait()
		deadline := time.Now().Add(3 * time.Second)
		for syscall.Kill(sleeper, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if syscall.Kill(sleeper, 0) == nil {
			_ = syscall.Kill(sleeper, syscall.SIGKILL)
			t.Errorf("killed %v: the child that left the group outlived the confined CLI", killed)
		}
	}
}

// markedSleep is the host pid of the marked `sleep arg` of tree, waited
// for up to 3 s.
func markedSleep(t *testing.T, tree proc.Tree, arg string) int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range tree.Marked() {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if string(b) == "sleep\x00"+arg+"\x00" {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the CLI's child never ran")
	return 0
}

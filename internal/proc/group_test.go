package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether pid no longer runs (a zombie runs nothing).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

// waitGone waits up to 3 s for pid to go and reports whether it did; a
// survivor is killed.
func waitGone(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !gone(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return false
	}
	return true
}

// startShell starts script with sh in its own group and returns the pid
// of the background child it prints on its first line.
func startShell(t *testing.T, ctx context.Context, script string, env ...string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	OwnGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var line []byte
	buf := make([]byte, 1)
	for {
		if _, err := out.Read(buf); err != nil || buf[0] == '\n' {
			break
		}
		line = append(line, buf[0])
	}
	child, err := strconv.Atoi(string(line))
	if err != nil {
		t.Fatalf("the shell printed %q", line)
	}
	return cmd, child
}

// The end of its context kills the command's whole group, not only the
// command.
func TestOwnGroupKillsTheGroupOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cmd, child := startShell(t, ctx, "sleep 61.1 & echo $!; wait")
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid || cmd.WaitDelay != 2*time.Second {
		t.Errorf("SysProcAttr %+v, WaitDelay %v", cmd.SysProcAttr, cmd.WaitDelay)
	}
	if pgid, err := syscall.Getpgid(child); err != nil || pgid != cmd.Process.Pid {
		t.Errorf("the child's group is %d (%v), want %d", pgid, err, cmd.Process.Pid)
	}
	cancel()
	_ = cmd.Wait()
	if !waitGone(t, child) {
		t.Error("the child outlived the cancelled command")
	}
}

// Stop asks first and forces only a child that does not go within grace.
func TestStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		forced       bool
	}{
		{"obeys SIGTERM", "sleep 61.2 & echo $!; wait", false},
		{"ignores SIGTERM", "trap '' TERM; sleep 61.3 & echo $!; while :; do wait; done", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd, child := startShell(t, context.Background(), tc.script)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			pgid := cmd.Process.Pid
			start := time.Now()
			forced := Stop(done, 300*time.Millisecond, func() { SignalGroup(pgid, syscall.SIGTERM) }, func() { SignalGroup(pgid, syscall.SIGKILL) })
			if forced != tc.forced {
				t.Errorf("forced %v after %v", forced, time.Since(start))
			}
			SignalGroup(pgid, syscall.SIGKILL)
			if !waitGone(t, child) {
				t.Error("the child survived")
			}
		})
	}
}

// A descendant that left the group is reached through the marker it
// inherited.
func TestTreeReachesMarkedDescendants(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	marker := NewMarker("KZ_PROC_TEST_RUN")
	if name, tok, ok := strings.Cut(marker, "="); !ok || name != "KZ_PROC_TEST_RUN" || len(tok) != 24 || marker == NewMarker("KZ_PROC_TEST_RUN") {
		t.Fatalf("marker %q", marker)
	}
	cmd, child := startShell(t, context.Background(), "setsid sleep 61.4 & echo $!; wait", marker)
	tree := Tree{Pgid: cmd.Process.Pid, Marker: marker}
	waitLeftGroup(t, child, tree.Pgid)
	if m := tree.Marked(); len(m) < 2 {
		t.Errorf("marked %v, want the shell and its child", m)
	}
	tree.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if !waitGone(t, child) {
		t.Error("the child that left the group survived")
	}
	if (Tree{Pgid: tree.Pgid}).Marked() != nil {
		t.Error("a tree without a marker found processes")
	}
}

// A SIGKILL to a tree in its own PID namespace goes to the group and the
// child's own children (the namespace's first process): the namespace's
// end kills the rest, so the scan of /proc is skipped. Here the tree is
// not really in a namespace of its own, which makes the skip visible: a
// grandchild that left the group survives the SIGKILL. Any other signal
// still reaches it through its marker.
func TestTreeInItsOwnPIDNamespaceKillsOnlyTheGroup(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	marker := NewMarker("KZ_PROC_TEST_NS")
	cmd, child := startShell(t, context.Background(), "sh -c 'setsid sleep 61.6 & echo $!; wait' & wait", marker)
	tree := Tree{Pgid: cmd.Process.Pid, Marker: marker, PIDNamespace: true}
	waitLeftGroup(t, child, tree.Pgid)
	tree.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if gone(child) {
		t.Fatal("the SIGKILL reached the child outside the group: the tree scanned /proc")
	}
	tree.Signal(syscall.SIGTERM)
	if !waitGone(t, child) {
		t.Error("a SIGTERM did not reach the marked child")
	}
}

// The child's own children are killed with a tree in its own PID
// namespace, even one that left the group: under bubblewrap that child is
// the namespace's first process, whose death ends the namespace, and
// bubblewrap's --die-with-parent is not relied on for it.
func TestTreeInItsOwnPIDNamespaceKillsTheChildsChildren(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	cmd, child := startShell(t, context.Background(), "setsid sleep 61.8 & echo $!; wait")
	tree := Tree{Pgid: cmd.Process.Pid, PIDNamespace: true}
	waitLeftGroup(t, child, tree.Pgid)
	tree.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if !waitGone(t, child) {
		t.Error("the child's child outside the group outlived the SIGKILL")
	}
}

// KillChildren kills the children of a process and nothing else: not the
// process, nor a grandchild.
func TestKillChildren(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	cmd, child := startShell(t, context.Background(), "setsid sleep 61.9 & echo $!; wait; sleep 61.9")
	waitLeftGroup(t, child, cmd.Process.Pid)
	KillChildren(cmd.Process.Pid)
	if !waitGone(t, child) {
		t.Error("the child outlived KillChildren")
	}
	// The shell saw its child end and went on: it was not killed.
	time.Sleep(50 * time.Millisecond)
	if gone(cmd.Process.Pid) {
		t.Error("KillChildren killed the parent")
	}
	SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	KillChildren(cmd.Process.Pid) // a reaped process: nothing to do, no panic
}

// waitLeftGroup waits up to 3 s for child to leave the group pgid (setsid
// runs in the child after the shell printed its pid); a child that stays
// makes the test prove nothing.
func waitLeftGroup(t *testing.T, child, pgid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if g, _ := syscall.Getpgid(child); g != pgid {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the child stayed in the group: the test proves nothing")
}

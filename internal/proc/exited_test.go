package proc

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Exited tells a running child from one that has ended but is not reaped
// yet, and from one already reaped, without reaping it itself: the Wait
// that owns the child still gets its status.
func TestExitedSeesAnUnreapedDeath(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if Exited(pid) {
		t.Fatal("a running child reported as ended")
	}
	killUnreaped(t, pid)
	// Asking twice must not have consumed the status.
	if !Exited(pid) {
		t.Fatal("the second ask lost the child's death")
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait after Exited: %v, want killed", err)
	}
	if !Exited(pid) {
		t.Error("a reaped child reported as running")
	}
	if !Exited(0) || !Exited(-1) {
		t.Error("an invalid pid reported as running")
	}
}

// killUnreaped kills the child pid and waits, up to 5 s, until Exited
// sees its death, without reaping it.
func killUnreaped(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !Exited(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped child still reported as running")
		}
		time.Sleep(time.Millisecond)
	}
}

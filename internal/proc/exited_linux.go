package proc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Exited reports whether the child pid of this process has ended, whether
// or not it has been reaped yet. A supervisor learns of a child's death
// only once its reader sees EOF and Wait returns, which can lag the death
// (a grandchild that holds the child's stdout keeps EOF away for as long
// as it lives); Exited asks the kernel instead. It never reaps: WNOWAIT
// leaves the child for the Wait that owns it, so it is safe to call while
// another goroutine waits. A pid that is no longer a child (already
// reaped) counts as ended.
func Exited(pid int) bool {
	if pid <= 0 {
		return true
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return errors.Is(err, unix.ECHILD)
	}
	// With WNOHANG and no state change, Linux reports si_signo 0; a
	// child that has exited reports SIGCHLD.
	return info.Signo == int32(unix.SIGCHLD)
}

//go:build !linux

package proc

// Exited reports whether the child pid has ended. Without waitid's
// WNOWAIT there is no way to ask without reaping, so elsewhere it only
// knows of an invalid pid; callers also watch the child's Wait.
func Exited(pid int) bool { return pid <= 0 }

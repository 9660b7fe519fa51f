//go:build !linux

package proc

// Ending reports whether pid runs no more code of its own. Without /proc
// only an invalid pid is known to; callers wait for the child's reaping.
func Ending(pid int) bool { return pid <= 0 }

// command cannot find the command's process without /proc.
func (t Tree) command() int { return 0 }

// ends is Ending's answer twice: without /proc no thread is seen asleep
// with SIGKILL pending.
func ends(pid int) (ending, doomed bool) {
	e := Ending(pid)
	return e, e
}

package proc

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"strconv"
	"syscall"
)

// procFS is where Ending reads the threads' state: /proc, or a copy a
// test makes of it.
var procFS = "/proc"

// pfExiting is the kernel's PF_EXITING task flag, set on a thread when it
// begins to exit (do_exit), before its memory is given back.
const pfExiting = 0x4

// Ending reports whether process pid runs no more code of its own: it is
// gone, or a zombie, or each of its threads has begun to exit (PF_EXITING
// in the flags of /proc/PID/task/TID/stat). All that is left of such a
// process is the kernel's work: giving back its memory, which for a CLI
// of some hundreds of megabytes (Claude Code, Codex) takes 10 to 25 ms on
// a 2-core machine, then closing its descriptors and letting its parent
// reap it. Killing it then loses nothing it would still have done.
//
// A process whose first thread has ended while others still run is not
// ending.
func Ending(pid int) bool {
	if pid <= 0 {
		return true
	}
	self := strconv.Itoa(pid)
	dir := procFS + "/" + self + "/task/"
	exiting, ok := threadExiting(dir + self + "/stat")
	if !ok {
		return true
	}
	if !exiting {
		return false
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
	}
	for _, task := range tasks {
		if task.Name() == self {
			continue
		}
		if exiting, ok := threadExiting(dir + task.Name() + "/stat"); ok && !exiting {
			return false
		}
	}
	return true
}

// threadExiting reads one thread's stat file: ok is false when the thread
// is gone, and exiting says it is a zombie or dead, or has begun to exit.
// A file that cannot be read for another reason, or not understood, says
// the thread runs: killing a CLI in the middle of its shutdown would lose
// what it was writing, waiting for it loses a few milliseconds.
func threadExiting(path string) (exiting, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ESRCH)
	}
	// f[0] is field 3 (the state), f[6] field 9 (the flags).
	f := statFields(b)
	if len(f) < 7 || len(f[0]) != 1 {
		return false, true
	}
	flags, err := strconv.ParseUint(string(f[6]), 10, 64)
	if err != nil {
		return false, true
	}
	return f[0][0] == 'Z' || f[0][0] == 'X' || flags&pfExiting != 0, true
}

// command finds the process of the tree's command itself: the child kz
// started, or, in a PID namespace of its own, the oldest child of the
// namespace's first process, which is the child's own child (bubblewrap
// runs the command as the second process of its namespace; a process
// reparented there later, orphaned by the command's children, started
// later). It returns 0 when /proc cannot tell.
func (t Tree) command() int {
	if !t.PIDNamespace {
		return t.Pgid
	}
	first := childrenOf(t.Pgid)
	if len(first) != 1 {
		return 0
	}
	cmd, oldest := 0, int64(math.MaxInt64)
	for _, c := range childrenOf(first[0]) {
		if s, err := Start(c); err == nil && (s < oldest || s == oldest && c < cmd) {
			cmd, oldest = c, s
		}
	}
	return cmd
}

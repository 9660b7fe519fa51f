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

// sigkillPending is SIGKILL's bit in the pending signals of a thread's
// stat file (field 31, the thread's own pending set). The kernel sets it
// on every thread of a process that is being killed or has called
// exit_group (zap_other_threads, complete_signal): such a thread never
// returns to its own code, since SIGKILL can be neither caught nor
// blocked.
const sigkillPending = 1 << 8

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
	ending, _ := ends(pid)
	return ending
}

// ends reads the state of pid's threads. ending is Ending's answer.
// doomed says more: each thread has begun to exit, or is asleep with
// SIGKILL pending, so it will wake only to exit. That is what a process
// looks like after its exit_group while one of its threads still waits
// in the kernel, typically for a disk write it began before (fsync, in
// an uninterruptible sleep that no signal cuts short). Codex's exit
// showed such a thread for 2 to 10 ms, all that time not Ending though
// nothing of the CLI could run again.
//
// A thread woken from a wait it cannot leave early (the lock of a pipe)
// still finishes the system call it was in, a write included, before it
// exits; such a wait lasts microseconds, while the disk's lasts
// milliseconds. Tree.Stop therefore takes doomed for ending only when
// two looks a poll apart both say so.
func ends(pid int) (ending, doomed bool) {
	if pid <= 0 {
		return true, true
	}
	self := strconv.Itoa(pid)
	dir := procFS + "/" + self + "/task/"
	first := threadEnd(dir + self + "/stat")
	switch first {
	case threadGone:
		return true, true
	case threadRuns:
		return false, false
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		gone := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
		return gone, gone
	}
	ending, doomed = first == threadExiting, true
	for _, task := range tasks {
		if task.Name() == self {
			continue
		}
		switch threadEnd(dir + task.Name() + "/stat") {
		case threadRuns:
			return false, false
		case threadDoomed:
			ending = false
		}
	}
	return ending, doomed
}

// threadState is what a thread's stat file says of its end.
type threadState string

const (
	// threadRuns: the thread runs, or its stat file could not be read
	// for a reason other than its being gone, or not understood. Killing
	// a CLI in the middle of its shutdown would lose what it was
	// writing; waiting for it loses a few milliseconds.
	threadRuns threadState = "runs"
	// threadGone: the thread no longer exists.
	threadGone threadState = "gone"
	// threadExiting: a zombie, dead, or flagged PF_EXITING.
	threadExiting threadState = "exiting"
	// threadDoomed: asleep (S or D) with SIGKILL pending.
	threadDoomed threadState = "doomed"
)

// threadEnd reads one thread's stat file.
func threadEnd(path string) threadState {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return threadGone
		}
		return threadRuns
	}
	// f[0] is field 3 (the state), f[6] field 9 (the flags), f[28]
	// field 31 (the pending signals).
	f := statFields(b)
	if len(f) < 7 || len(f[0]) != 1 {
		return threadRuns
	}
	flags, err := strconv.ParseUint(string(f[6]), 10, 64)
	if err != nil {
		return threadRuns
	}
	switch state := f[0][0]; {
	case state == 'Z' || state == 'X' || flags&pfExiting != 0:
		return threadExiting
	case (state == 'S' || state == 'D') && len(f) > 28:
		if pending, err := strconv.ParseUint(string(f[28]), 10, 64); err == nil && pending&sigkillPending != 0 {
			return threadDoomed
		}
	}
	return threadRuns
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

package proc

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// KillChildren sends SIGKILL to every child of the process pid, as
// /proc/PID/task/*/children lists them. Each is signalled through a
// pidfd, and only once its parent is seen to be pid still: a child that
// exited and was reaped may have left its number to another process. It
// does nothing where /proc cannot tell (a kernel without
// CONFIG_PROC_CHILDREN, pid gone).
//
// A sandbox in a PID namespace of its own (bubblewrap with --unshare-pid)
// has its namespace's first process as the direct child of the process
// kz started; killing it ends every process of the namespace.
func KillChildren(pid int) {
	for _, child := range childrenOf(pid) {
		killChild(pid, child)
	}
}

// childrenOf lists the children of pid's threads, as
// /proc/PID/task/*/children gives them: those it can read.
func childrenOf(pid int) []int {
	threads, err := threadDirs("/proc", pid)
	if err != nil {
		return nil
	}
	kids, _ := childrenOfThreads(threads)
	return kids
}

func killChild(parent, child int) {
	fd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		return
	}
	defer func() { _ = unix.Close(fd) }()
	// The pidfd holds the process it was opened on; its parent is read
	// after it, so a number taken by another process is never signalled.
	if parentOf(child) != parent {
		return
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// parentOf reads the parent's pid from /proc/PID/stat, or -1.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := statFields(b)
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return -1
	}
	return ppid
}

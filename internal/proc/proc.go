// Package proc is kz's one home for the processes it starts and records.
//
// Supervision (group.go): every child kz starts (a bash command, a
// verification command, an agent CLI) leads a process group of its own,
// is stopped politely and then by force after a grace period, and takes
// down with it whatever it started, including descendants that left its
// group, found by an inherited marker variable. Output (output.go): the
// bounded buffers a child's output is kept in, and Clip for one line of
// it. Ending (ending_linux.go, pipes.go): whether a child has begun to
// exit, before the kernel has given back its memory, and the pipes of
// its output, which kz can let go of then.
//
// Liveness (this file): whether a process that kz recorded still runs. A
// pid alone is not enough: after a process dies its pid can be reused,
// and kz run as pid 1 in a container has the same pid on every run. So kz
// records a process's start time with its pid and compares both.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// SelfStart is this process's start time in clock ticks since boot, or 0
// when /proc cannot tell.
var SelfStart = sync.OnceValue(func() int64 {
	t, err := Start(os.Getpid())
	if err != nil {
		return 0
	}
	return t
})

// Alive reports whether the process recorded as pid and start still runs:
// a process with that pid exists and, when start is known (not 0), it
// started then (the pid was not reused). This process counts as alive only
// when the start time matches too: what an earlier process with the same
// pid left behind is dead.
func Alive(pid int, start int64) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return start == 0 || SelfStart() == 0 || start == SelfStart()
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if start == 0 {
		return true
	}
	t, err := Start(pid)
	if err != nil {
		// /proc cannot tell (it hides other users' processes, say):
		// the pid alone decides, so what runs is never taken for dead.
		return true
	}
	return t == start
}

// Start reads the start time of pid (field 22 of /proc/<pid>/stat, clock
// ticks since boot).
func Start(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("process start: %w", err)
	}
	// Field 22 is f[19]: f[0] is field 3.
	f := statFields(b)
	if len(f) < 20 {
		return 0, fmt.Errorf("process start: malformed /proc/%d/stat", pid)
	}
	t, err := strconv.ParseInt(string(f[19]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("process start: %w", err)
	}
	return t, nil
}

// statFields splits the content of a /proc stat file after the command
// name: f[0] is field 3 (the state). The name (field 2) is in parentheses
// and may hold spaces and parentheses itself, so the fields start after
// the last ')'. A file without one gives none.
func statFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

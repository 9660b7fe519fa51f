package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// selfStart is this process's start time in clock ticks since boot, or 0
// when /proc cannot tell. It is recorded with the pid of every turn.
var selfStart = sync.OnceValue(func() int64 {
	t, err := processStart(os.Getpid())
	if err != nil {
		return 0
	}
	return t
})

// processAlive reports whether the kz process that owned a turn still runs:
// a process with that pid exists and, when the turn recorded a start time,
// started at that time (the pid was not reused). This process counts as
// alive only when the start time matches too, since a turn left by an
// earlier kz that had the same pid (pid 1 in a container, say) is dead.
func processAlive(pid int, start int64) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return start == 0 || selfStart() == 0 || start == selfStart()
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if start == 0 {
		return true
	}
	t, err := processStart(pid)
	if err != nil {
		// /proc cannot tell (it hides other users' processes, say):
		// the pid alone decides, so a running turn is never closed.
		return true
	}
	return t == start
}

// processStart reads the start time of pid (field 22 of /proc/<pid>/stat,
// clock ticks since boot).
func processStart(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("process start: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses itself; the fields after the last ')' are plain.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("process start: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("process start: short /proc/%d/stat", pid)
	}
	t, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("process start: %w", err)
	}
	return t, nil
}

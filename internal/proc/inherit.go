package proc

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInheritedOnExec marks every descriptor above standard error close
// on exec. kz's own descriptors already are (Go opens them so), but one
// its parent handed down without the flag (a shell's redirection, an
// editor's socket, a test harness's pipe) would otherwise pass on to
// every child kz starts, and through a per-command sandbox into the
// command: an open directory or socket there reaches past every mount
// the sandbox hides. Children that need a descriptor get it explicitly
// (exec.Cmd.ExtraFiles), which this does not touch. It is called once, at
// the start of kz, before any child is started.
func CloseInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Kernels before 5.11 lack CLOSE_RANGE_CLOEXEC: mark them one by one.
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w (and list them: %w)", err, rerr)
	}
	for _, e := range entries {
		fd, convErr := strconv.Atoi(e.Name())
		if convErr != nil || fd < 3 {
			continue
		}
		// The directory's own descriptor is gone by the time of this
		// call (EBADF), which is fine.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

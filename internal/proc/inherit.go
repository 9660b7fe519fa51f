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
	tried, err := closeRangeOnExec()
	if tried && err == nil {
		return nil
	}
	// Kernels before 5.11 lack CLOSE_RANGE_CLOEXEC, and other systems
	// close_range altogether: mark them one by one.
	return markEachOnExec(fdDir, err)
}

// markEachOnExec marks each descriptor above standard error that dir
// (the system's list of the process's open descriptors) names close on
// exec. why is the error that made the one-call way fail, for the message.
func markEachOnExec(dir string, why error) error {
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		if why != nil {
			return fmt.Errorf("mark inherited descriptors close-on-exec: %w (and list them: %w)", why, rerr)
		}
		return fmt.Errorf("mark inherited descriptors close-on-exec: list them: %w", rerr)
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

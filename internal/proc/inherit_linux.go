package proc

import "golang.org/x/sys/unix"

// fdDir lists the process's open descriptors.
const fdDir = "/proc/self/fd"

// closeRangeOnExec marks every descriptor above standard error close on
// exec in one call. A kernel before 5.11, which lacks
// CLOSE_RANGE_CLOEXEC, returns an error.
func closeRangeOnExec() (tried bool, err error) {
	return true, unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}

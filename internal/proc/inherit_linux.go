package proc

import "golang.org/x/sys/unix"

// fdDir lists the process's open descriptors.
const fdDir = "/proc/self/fd"

// errNoCloseRange is never returned on Linux: close_range exists there,
// and a kernel before 5.11 that lacks CLOSE_RANGE_CLOEXEC reports its own
// error, which markEachOnExec names if listing fdDir fails too.
var errNoCloseRange error

// closeRangeOnExec marks every descriptor above standard error close on
// exec in one call.
func closeRangeOnExec() error {
	return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}

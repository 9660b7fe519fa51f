package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// buffered is how many bytes the pipe f holds unread, or -1 when that
// cannot be told (FIONREAD, which x/sys/unix names TIOCINQ on Linux). The
// descriptor is reached through SyscallConn: Fd would make it blocking,
// and its deadlines void.
func buffered(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if err := rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); err != nil {
		return -1
	}
	return n
}

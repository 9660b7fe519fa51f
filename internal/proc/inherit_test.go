package proc

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInheritedOnExec: a descriptor opened without close-on-exec (as
// a parent process hands one down) has the flag afterwards, and standard
// input, output and error keep theirs as they were.
func TestCloseInheritedOnExec(t *testing.T) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	flags := func(fd int) int {
		f, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if flags(fd)&unix.FD_CLOEXEC != 0 {
		t.Fatal("the test's descriptor is close-on-exec already")
	}
	std := []int{flags(0), flags(1), flags(2)}
	if err := CloseInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	if flags(fd)&unix.FD_CLOEXEC == 0 {
		t.Error("an inherited descriptor stays open across exec")
	}
	for i, f := range std {
		if flags(i) != f {
			t.Errorf("descriptor %d changed its flags", i)
		}
	}
}

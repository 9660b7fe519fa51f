package proc

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInheritedOnExec: a descriptor opened without close-on-exec (as
// a parent process hands one down) has the flag afterwards, and standard
// input, output and error keep theirs as they were.
func TestCloseInheritedOnExec(t *testing.T) {
	testMarksOnExec(t, CloseInheritedOnExec)
}

// TestMarkEachOnExec runs the one-by-one way, the only one on systems
// without close_range (macOS, the BSDs), over this system's descriptor
// list; and a list that cannot be read is an error that says so.
func TestMarkEachOnExec(t *testing.T) {
	testMarksOnExec(t, func() error { return markEachOnExec(fdDir, nil) })
	err := markEachOnExec("/nonexistent-fd-dir", nil)
	if err == nil || !strings.Contains(err.Error(), "list them") {
		t.Fatalf("unreadable list: %v", err)
	}
}

func testMarksOnExec(t *testing.T, mark func() error) {
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
	if err := mark(); err != nil {
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

package proc

import (
	"os"
	"os/exec"
	"testing"
)

func TestProcessAliveComparesStartTime(t *testing.T) {
	self := SelfStart()
	if self <= 0 {
		t.Fatalf("selfStart = %d: /proc/self/stat was not read", self)
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	cs, err := Start(child.Process.Pid)
	if err != nil || cs < self {
		t.Fatalf("start of a child = %d, %v; want at or after ours (%d)", cs, err, self)
	}
	me, dead := os.Getpid(), deadPID(t)
	for _, c := range []struct {
		name  string
		pid   int
		start int64
		want  bool
	}{
		{"this process", me, self, true},
		{"this process, start unknown", me, 0, true},
		{"an earlier process with this pid", me, self - 1, false},
		{"a live process", child.Process.Pid, cs, true},
		{"a live process, start unknown", child.Process.Pid, 0, true},
		{"a reused pid", child.Process.Pid, cs - 1, false},
		{"an exited process", dead, 0, false},
		{"no pid", 0, 0, false},
	} {
		if got := Alive(c.pid, c.start); got != c.want {
			t.Errorf("%s: Alive(%d, %d) = %v, want %v", c.name, c.pid, c.start, got, c.want)
		}
	}
	if _, err := Start(dead); err == nil {
		t.Error("the start of an exited process was read")
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

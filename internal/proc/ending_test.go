//go:build linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Ending is true only when every thread of a process has begun to exit
// (or is a zombie, or gone), and doomed (ends) also when the threads that
// have not are asleep with SIGKILL pending, read from a process's stat
// files as the kernel writes them: a command name with spaces and
// parentheses, the state in field 3, the flags in field 9, the thread's
// pending signals in field 31, 52 fields in all.
func TestEndingReadsEveryThread(t *testing.T) {
	const pid = 4242
	const kill, term = 1 << 8, 1 << 14 // SIGKILL's and SIGTERM's bits
	stat := func(state string, flags, pending uint64) string {
		return fmt.Sprintf("%d (node (a) b) %s 1 4242 4242 0 -1 %d 123 0 0 0 5 6 0 0 20 0 11 0 9999 1000 200 "+
			"18446744073709551615 1 1 0 0 0 %d 0 4096 17920 0 0 0 17 1 0 0 0 0 0 1 1 1 1 1 1 1 0\n", pid, state, flags, pending)
	}
	const running, exiting = 0x400100, 0x400104
	for _, tc := range []struct {
		name          string
		threads       map[int]string // tid → stat; the first thread's tid is pid
		ending, doomd bool
	}{
		{"running", map[int]string{pid: stat("S", running, 0), 4243: stat("S", running, 0)}, false, false},
		{"every thread exiting", map[int]string{pid: stat("R", exiting, 0), 4243: stat("D", exiting, 0)}, true, true},
		{"the first thread exiting, another not yet", map[int]string{pid: stat("R", exiting, 0), 4243: stat("S", running, 0)}, false, false},
		{"another thread exiting, the first not yet", map[int]string{pid: stat("S", running, 0), 4243: stat("R", exiting, 0)}, false, false},
		{"a zombie first thread whose others run", map[int]string{pid: stat("Z", running, 0), 4243: stat("S", running, 0)}, false, false},
		{"a zombie", map[int]string{pid: stat("Z", running, 0)}, true, true},
		{"exiting, another thread already gone", map[int]string{pid: stat("R", exiting, 0), 4243: ""}, true, true},
		{"a stat that cannot be understood", map[int]string{pid: "4242 (x S 1 2\n"}, false, false},
		{"gone", map[int]string{}, true, true},
		// After exit_group: the first thread a zombie, another still
		// in a disk write, SIGKILL pending.
		{"a zombie first thread, another in the kernel with SIGKILL pending",
			map[int]string{pid: stat("Z", exiting, 0), 4243: stat("D", running, kill)}, false, true},
		{"asleep with SIGKILL pending among other signals",
			map[int]string{pid: stat("S", running, kill|term), 4243: stat("R", exiting, 0)}, false, true},
		{"every thread asleep with SIGKILL pending",
			map[int]string{pid: stat("D", running, kill), 4243: stat("S", running, kill)}, false, true},
		// Running, it is about to take the signal: the next look sees
		// it exiting.
		{"running with SIGKILL pending", map[int]string{pid: stat("Z", exiting, 0), 4243: stat("R", running, kill)}, false, false},
		{"asleep with another signal pending", map[int]string{pid: stat("Z", exiting, 0), 4243: stat("D", running, term)}, false, false},
		{"stopped with SIGKILL pending", map[int]string{pid: stat("Z", exiting, 0), 4243: stat("T", running, kill)}, false, false},
		{"one thread doomed, another running", map[int]string{pid: stat("D", running, kill), 4243: stat("S", running, 0)}, false, false},
		{"a stat cut short before its pending signals",
			map[int]string{pid: stat("Z", exiting, 0), 4243: "4243 (x) D 1 4242 4242 0 -1 4194304 1 2 3\n"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeThreads(t, pid, tc.threads)
			if got := Ending(pid); got != tc.ending {
				t.Errorf("Ending = %v, want %v", got, tc.ending)
			}
			if ending, doomed := ends(pid); ending != tc.ending || doomed != tc.doomd {
				t.Errorf("ends = %v, %v, want %v, %v", ending, doomed, tc.ending, tc.doomd)
			}
		})
	}
}

// Tree.Stop takes a doomed command for over only when two looks in a row
// find it so: a thread that looked asleep with SIGKILL pending may have
// been waiting microseconds for a pipe's lock, and finish its write.
func TestEndWatchWantsTwoDoomedLooks(t *testing.T) {
	const pid = 4242
	stat := func(state string, flags, pending uint64) string {
		return fmt.Sprintf("%d (codex) %s 1 4242 4242 0 -1 %d 1 0 0 0 5 6 0 0 20 0 11 0 9999 1000 200 "+
			"18446744073709551615 1 1 0 0 0 %d 0 0 0 0 0 0 17 1 0 0 0 0 0 1 1 1 1 1 1 1 0\n", pid, state, flags, pending)
	}
	running := map[int]string{pid: stat("S", 0x400000, 0), 4243: stat("S", 0x400040, 0)}
	doomed := map[int]string{pid: stat("Z", 0x408004, 0), 4243: stat("D", 0x400040, 1<<8)}
	exiting := map[int]string{pid: stat("Z", 0x408004, 0), 4243: stat("R", 0x40064c, 0)}
	for _, tc := range []struct {
		name  string
		looks []map[int]string
		want  []bool
	}{
		{"doomed twice", []map[int]string{running, doomed, doomed}, []bool{false, false, true}},
		{"doomed, then running, then doomed", []map[int]string{doomed, running, doomed, doomed}, []bool{false, false, false, true}},
		{"ending at once", []map[int]string{running, exiting}, []bool{false, true}},
		{"doomed, then ending", []map[int]string{doomed, exiting}, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w endWatch
			for i, look := range tc.looks {
				fakeThreads(t, pid, look)
				if got := w.over(pid); got != tc.want[i] {
					t.Fatalf("look %d: over = %v, want %v", i+1, got, tc.want[i])
				}
			}
		})
	}
}

// fakeThreads points procFS, for the test, at a copy of /proc in which
// process pid has the threads given (tid → the contents of its stat; ""
// lists a thread whose stat is gone).
func fakeThreads(t *testing.T, pid int, threads map[int]string) {
	t.Helper()
	root := t.TempDir()
	for tid, s := range threads {
		dir := filepath.Join(root, fmt.Sprint(pid), "task", fmt.Sprint(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if s == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := procFS
	procFS = root
	t.Cleanup(func() { procFS = old })
}

// On real processes: a running one is not ending; one that has exited is,
// before it is reaped and after.
func TestEndingOfRealProcesses(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if Ending(pid) {
		t.Fatal("a sleeping process is taken for ending")
	}
	if Ending(os.Getpid()) {
		t.Fatal("this very process is taken for ending")
	}
	killUnreaped(t, pid)
	if !Ending(pid) {
		t.Error("a zombie is not taken for ending")
	}
	_ = cmd.Wait()
	if !Ending(pid) || !Ending(0) {
		t.Error("a reaped process, or no process, is not taken for ending")
	}
}

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
// (or is a zombie, or gone), read from a process's stat files as the
// kernel writes them: a command name with spaces and parentheses, the
// state in field 3, the flags in field 9.
func TestEndingReadsEveryThread(t *testing.T) {
	const pid = 4242
	stat := func(state string, flags uint64) string {
		return fmt.Sprintf("%d (node (a) b) %s 1 4242 4242 0 -1 %d 123 0 0 0 5 6 0 0 20 0 11 0 9999 1000 200\n", pid, state, flags)
	}
	const running, exiting = 0x400100, 0x400104
	for _, tc := range []struct {
		name    string
		threads map[int]string // tid → stat; the first thread's tid is pid
		want    bool
	}{
		{"running", map[int]string{pid: stat("S", running), 4243: stat("S", running)}, false},
		{"every thread exiting", map[int]string{pid: stat("R", exiting), 4243: stat("D", exiting)}, true},
		{"the first thread exiting, another not yet", map[int]string{pid: stat("R", exiting), 4243: stat("S", running)}, false},
		{"another thread exiting, the first not yet", map[int]string{pid: stat("S", running), 4243: stat("R", exiting)}, false},
		{"a zombie first thread whose others run", map[int]string{pid: stat("Z", running), 4243: stat("S", running)}, false},
		{"a zombie", map[int]string{pid: stat("Z", running)}, true},
		{"exiting, another thread already gone", map[int]string{pid: stat("R", exiting), 4243: ""}, true},
		{"a stat that cannot be understood", map[int]string{pid: "4242 (x S 1 2\n"}, false},
		{"gone", map[int]string{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for tid, s := range tc.threads {
				dir := filepath.Join(root, fmt.Sprint(pid), "task", fmt.Sprint(tid))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if s == "" {
					continue // a thread listed, its stat gone
				}
				if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := procFS
			procFS = root
			defer func() { procFS = old }()
			if got := Ending(pid); got != tc.want {
				t.Errorf("Ending = %v, want %v", got, tc.want)
			}
		})
	}
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

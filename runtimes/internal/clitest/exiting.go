package clitest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/internal/proc"
)

// HeavyCLI is the command line (after "perl") of a fake agent CLI that
// holds half a gigabyte, as a real one holds some hundreds of megabytes,
// writes ReadyLine, and once its stdin closes does its shutdown's work (a
// file named flushed written in its directory, a last stdout line and the
// stderr line ByeLine) and exits at once, leaving the memory for the
// kernel to give back.
var HeavyCLI = []string{"-e", `use POSIX; $| = 1; my $held = "x" x (512 << 20);
print qq(` + ReadyLine + `\n);
while (<STDIN>) {}
open(my $f, ">", "flushed") or die; print $f "done"; close $f;
print qq({"jsonrpc":"2.0","method":"bye","type":"bye"}\n); print STDERR "` + ByeLine + `\n";
POSIX::_exit(0);`}

// ReadyLine is the line HeavyCLI writes once it holds its memory.
const ReadyLine = `{"jsonrpc":"2.0","method":"ready","type":"ready"}`

// ByeLine is the stderr line HeavyCLI writes last.
const ByeLine = "bye from the CLI"

// HeavyPID is the host pid of the HeavyCLI among a tree's marked
// processes.
func HeavyPID(t *testing.T, marked []int) int {
	t.Helper()
	for _, pid := range marked {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(b) == "perl\n" {
			return pid
		}
	}
	t.Fatalf("no CLI among the sandbox's processes %v", marked)
	return 0
}

// CheckStoppedBeforeReaped checks a HeavyCLI just stopped in its sandbox,
// in dir, with the stderr kz kept of it: the stop returned while its
// process still existed (bubblewrap reports the CLI's end only once it is
// reaped, which is after the kernel has taken back its memory), its
// shutdown's work was done and its last stderr line read, and nothing of
// the sandbox's processes (marked) runs on after it.
func CheckStoppedBeforeReaped(t *testing.T, cli int, dir, stderr string, marked []int) {
	t.Helper()
	if syscall.Kill(cli, 0) != nil {
		t.Error("the stop returned only once the CLI was reaped: it waited for the kernel to take back its memory")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "flushed")); err != nil || string(b) != "done" {
		t.Errorf("the CLI's shutdown was cut short: %q, %v", b, err)
	}
	if !strings.Contains(stderr, ByeLine) {
		t.Errorf("the CLI's last stderr line was lost: %q", stderr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range marked {
		for !proc.Ending(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d of the sandbox still runs after the stop", pid)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

package jsonrpc

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/sandbox/sandboxtest"
)

// fakeCLI holds half a gigabyte, as an agent CLI holds some hundreds of
// megabytes, says it is ready, and once its stdin closes does its
// shutdown's work (a file written, a line on stdout and one on stderr)
// and exits at once, leaving the memory for the kernel to give back.
const fakeCLI = `use POSIX; $| = 1; my $held = "x" x (512 << 20);
print qq({"jsonrpc":"2.0","method":"ready"}\n);
while (<STDIN>) {}
open(my $f, ">", "flushed") or die; print $f "done"; close $f;
print qq({"jsonrpc":"2.0","method":"bye"}\n); print STDERR "bye from the CLI\n";
POSIX::_exit(0);`

// Stopping a CLI in its own sandbox waits for its shutdown, not for the
// kernel to take back its memory: Stop returns while some process of the
// sandbox still exists, with the CLI's last file written and its last
// stderr line read, and nothing of the sandbox runs on after it.
func TestStopDoesNotWaitForTheKernel(t *testing.T) {
	defer goleak.VerifyNone(t)
	sandboxtest.RequireBubblewrap(t)
	ws := t.TempDir()
	sb, err := sandbox.New(sandbox.Policy{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	c, err := Start(agentcli.NewConfiner(sb), nil, "perl", []string{"-e", fakeCLI}, ws, []string{"PATH=/usr/bin:/bin"},
		"KZ_JSONRPC_TEST", nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-c.In:
		if m.Method != "ready" {
			t.Fatalf("the CLI said %+v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the CLI never said it was ready: %s", c.Stderr.String())
	}
	if !c.tree.PIDNamespace {
		t.Fatal("the CLI is not in a sandbox of its own: the test proves nothing")
	}
	sandboxed := c.tree.Marked()
	cli := 0
	for _, pid := range sandboxed {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(b) == "perl\n" {
			cli = pid
		}
	}
	if cli == 0 {
		t.Fatalf("no CLI among the sandbox's processes %v", sandboxed)
	}
	c.Stop(10 * time.Second)
	// Bubblewrap reports the CLI's end once the CLI is reaped, which is
	// after the kernel has taken back its memory: a CLI still there is a
	// Stop that did not wait for that.
	if syscall.Kill(cli, 0) != nil {
		t.Error("Stop returned only once the CLI was reaped: it waited for the kernel to take back its memory")
	}
	if b, err := os.ReadFile(filepath.Join(ws, "flushed")); err != nil || string(b) != "done" {
		t.Errorf("the CLI's shutdown was cut short: %q, %v", b, err)
	}
	if !strings.Contains(c.Stderr.String(), "bye from the CLI") {
		t.Errorf("the CLI's last stderr line was lost: %q", c.Stderr.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range sandboxed {
		for !proc.Ending(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d of the sandbox still runs after Stop", pid)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

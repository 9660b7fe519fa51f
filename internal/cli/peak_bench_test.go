package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Peak memory of a benchmarked kz is read from the kernel's high-water
// mark of kz's own address space (VmHWM in /proc/PID/status), never from
// the ru_maxrss that wait4 returns. Go starts children with vfork
// (CLONE_VM), and at exec Linux folds the high-water mark of the address
// space it leaves, the benchmark's own, into the child's ru_maxrss: a
// child smaller than the benchmark reports the benchmark's size
// (/bin/true came out at 50 MB). VmHWM belongs to the address space exec
// made, so it is kz's alone.

// peakAtExit runs the command made by mk to its end and returns the
// high-water mark of its resident memory in MB, read when the process
// exits: it is traced (ptrace) only to be stopped at its exit, before its
// memory is released. Its standard output and error are discarded; the
// run is not timed.
func peakAtExit(mk func() *exec.Cmd) (float64, error) {
	peak, _, err := traceToExit(mk)
	return peak, err
}

// traceToExit runs the command as peakAtExit says and returns its peak
// and its rusage.
func traceToExit(mk func() *exec.Cmd) (float64, *syscall.Rusage, error) {
	// A tracee is bound to the thread that traces it: every ptrace and
	// wait4 below must come from this thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := mk()
	cmd.Stdout, cmd.Stderr = nil, nil
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	pid := cmd.Process.Pid
	defer func() { _ = cmd.Process.Release() }()
	var ws syscall.WaitStatus
	// The child stops with SIGTRAP once exec has loaded kz.
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return 0, nil, fmt.Errorf("wait for exec: %w", err)
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
		_ = cmd.Process.Kill()
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		return 0, nil, fmt.Errorf("trace exit: %w", err)
	}
	sig := 0
	for {
		if err := syscall.PtraceCont(pid, sig); err != nil {
			_ = cmd.Process.Kill()
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
			return 0, nil, fmt.Errorf("continue: %w", err)
		}
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			_ = cmd.Process.Kill()
			return 0, nil, fmt.Errorf("wait: %w", err)
		}
		switch {
		case ws.Exited(), ws.Signaled():
			return 0, nil, errors.New("the process ended without stopping at its exit")
		case ws.Stopped() && ws.StopSignal() == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			// Stopped inside exit, its address space still whole.
			peak, err := highWater(pid)
			_ = syscall.PtraceCont(pid, 0)
			var ru syscall.Rusage
			_, _ = syscall.Wait4(pid, &ws, 0, &ru)
			if err == nil && (!ws.Exited() || ws.ExitStatus() != 0) {
				err = fmt.Errorf("the process ended %v", ws)
			}
			return peak, &ru, err
		case ws.Stopped():
			// A signal for the child: hand it on.
			sig = int(ws.StopSignal())
			if ws.StopSignal() == syscall.SIGTRAP {
				sig = 0
			}
		}
	}
}

// highWater reads the high-water mark of a live process's resident
// memory (VmHWM), in MB.
func highWater(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read kz's status: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("no VmHWM in kz's status")
}

// evictFromPageCache drops a file's pages from the page cache (after
// writing back any that are dirty), so that the next runs read it the way
// a binary is read after a reboot or an install: through readahead. How
// many of a binary's pages a process maps, and so its file-backed
// resident memory, depends on how the page cache holds the file: just
// after the linker wrote kz, the cache holds it in large folios and a
// `kz version` maps 40 MB of it; read back from disk, 23 MB. The memory
// benchmarks evict the binary once before their runs so that their
// figures do not depend on when it was built.
func evictFromPageCache(b *testing.B, path string) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		b.Fatalf("write back %s: %v", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatalf("evict %s from the page cache: %v", path, err)
	}
}

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// The process benchmarks time the real kz binary, built as `make build`
// builds it (or KZ_BIN), from exec to the moment a person has the result:
// the exit of `kz version` and of the scripted hello `kz -p`, and for the
// TUI the first frame on a pseudo-terminal. They report the median in
// ms (the figures of issues 2 and 8) next to ns/op, the mean. /bin/true,
// timed the same way, shows what starting any process costs here.
//
// The first frame is read from a pty the benchmark owns, not polled from
// tmux: polling spawns a tmux client in a loop, which on two cores takes a
// core from kz and inflates the figure it measures.

func BenchmarkProcessTrue(b *testing.B) {
	timeProcess(b, func() *exec.Cmd { return exec.Command("/bin/true") })
}

func BenchmarkProcessVersion(b *testing.B) {
	bin := releaseBinary(b)
	timeProcess(b, func() *exec.Cmd { return exec.Command(bin, "version") })
}

func BenchmarkProcessHello(b *testing.B) {
	bin := releaseBinary(b)
	env := benchEnv(b)
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "scripts", "hello.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	timeProcess(b, func() *exec.Cmd {
		cmd := exec.Command(bin, "-p", "hi", "--runtime", "scripted", "--script", script)
		cmd.Env = env
		return cmd
	})
}

// BenchmarkProcessFirstFrame is `kz --demo`, the figure of issue 8, with
// its sessions in the benchmark's data dir: without --data-dir the demo
// keeps them in its scratch folder and migrates a new database at every
// start, which BenchmarkProcessFirstFrameDemoScratch measures.
func BenchmarkProcessFirstFrame(b *testing.B) {
	benchFirstFrame(b, "--demo", "--data-dir", filepath.Join(b.TempDir(), "data"))
}

// BenchmarkProcessFirstFrameDemoScratch is plain `kz --demo`.
func BenchmarkProcessFirstFrameDemoScratch(b *testing.B) { benchFirstFrame(b, "--demo") }

// BenchmarkProcessFirstFrameNoConfig is plain `kz` in an empty folder
// with no configuration and no runtime: every preset runtime is built
// (none is started), none is usable, and the first frame is the setup
// screen.
func BenchmarkProcessFirstFrameNoConfig(b *testing.B) { benchFirstFrame(b) }

func benchFirstFrame(b *testing.B, args ...string) {
	bin := releaseBinary(b)
	evictFromPageCache(b, bin)
	env := benchEnv(b)
	dir := b.TempDir()
	// One untimed start creates and migrates the store, as a person's
	// first run does once.
	if _, err := firstFrame(bin, dir, env, args...); err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	for b.Loop() {
		d, err := firstFrame(bin, dir, env, args...)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, d)
	}
	reportMedian(b, times)
}

// firstFrame starts kz with args in dir on a 120×40 pty and returns the
// time until the input prompt, or the setup screen kz opens when no
// runtime is usable, is on the screen. kz is then killed.
func firstFrame(bin, dir string, env []string, args ...string) (time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = ptmx.Close()
	}()
	seen := make(chan time.Duration, 1)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if s := ansi.Strip(out.String()); strings.Contains(s, "Ask kz") || strings.Contains(s, "Set up kz") {
				seen <- time.Since(start)
				// Keep draining so kz never blocks on a full pty.
				_, _ = io.Copy(io.Discard, ptmx)
				return
			}
			if err != nil {
				close(seen)
				return
			}
		}
	}()
	select {
	case d, ok := <-seen:
		if !ok {
			return 0, errors.New("kz exited before its first frame")
		}
		return d, nil
	case <-time.After(10 * time.Second):
		return 0, errors.New("no first frame within 10 s")
	}
}

// timeProcess runs the command made by mk once untimed, then b.N times,
// each time to its exit, and reports the median; then as many times
// again, untimed, each stopped at its exit to read its peak resident
// memory (peakAtExit), whose median is median-peak-rss-MB. The binary is
// evicted from the page cache first (evictFromPageCache), so every run
// finds it as a binary read from disk is held: on this kernel a binary
// the linker has just written is held in large folios, which makes its
// starts faster (fewer page faults) and maps more of it, so without the
// eviction both figures would depend on when kz was last built.
func timeProcess(b *testing.B, mk func() *exec.Cmd) {
	evictFromPageCache(b, mk().Path)
	if out, err := mk().CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	var times []time.Duration
	for b.Loop() {
		cmd := mk()
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	reportMedian(b, times)
	var rss []float64
	for range times {
		peak, err := peakAtExit(mk)
		if err != nil {
			b.Fatalf("peak memory: %v", err)
		}
		rss = append(rss, peak)
	}
	slices.Sort(rss)
	b.ReportMetric(rss[len(rss)/2], "median-peak-rss-MB")
}

// BenchmarkProcessIdleRSS is the resident memory of the TUI at rest: kz
// --demo (its sessions in the benchmark's data dir) on a 120×40 pty, read
// from /proc/PID/smaps_rollup one second after its first frame. Reported:
// the medians of the resident set (median-rss-MB, target of issue 21:
// ≤ 35), of its anonymous part (median-anon-MB: heap, stacks, runtime)
// and of its file-backed part (median-file-MB: the binary's pages the
// kernel mapped in, which depend on how the page cache holds it; the
// binary is evicted from it before the first run, see
// evictFromPageCache).
func BenchmarkProcessIdleRSS(b *testing.B) {
	bin := releaseBinary(b)
	evictFromPageCache(b, bin)
	env := benchEnv(b)
	dir := b.TempDir()
	args := []string{"--demo", "--data-dir", filepath.Join(dir, "data")}
	var rss, anon, file []float64
	for b.Loop() {
		m, err := idleRSS(bin, dir, env, args...)
		if err != nil {
			b.Fatal(err)
		}
		rss, anon, file = append(rss, m.rss), append(anon, m.anon), append(file, m.file)
	}
	for name, v := range map[string][]float64{"median-rss-MB": rss, "median-anon-MB": anon, "median-file-MB": file} {
		slices.Sort(v)
		b.ReportMetric(v[len(v)/2], name)
	}
}

// idleRSS starts kz on a pty, waits for its first frame and one second
// more, and returns its resident memory. kz is then killed.
func idleRSS(bin, dir string, env []string, args ...string) (residentMem, error) {
	pid, stop, err := startIdle(bin, dir, env, args...)
	if err != nil {
		return residentMem{}, err
	}
	defer stop()
	return readResident(pid)
}

// startIdle starts kz on a 120×40 pty and returns once its first frame
// has been shown and one second more has passed, with kz's pid and the
// function that kills it.
func startIdle(bin, dir string, env []string, args ...string) (int, func(), error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		return 0, nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = ptmx.Close()
	}
	seen := make(chan struct{})
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if strings.Contains(ansi.Strip(out.String()), "Ask kz") {
				close(seen)
				_, _ = io.Copy(io.Discard, ptmx)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		stop()
		return 0, nil, errors.New("no first frame within 10 s")
	}
	time.Sleep(time.Second)
	return cmd.Process.Pid, stop, nil
}

// residentMem is a process's resident memory in MB: all of it, the
// anonymous part (heap, stacks, the runtime's own) and the rest, pages
// of files (the binary above all) and shared memory.
type residentMem struct{ rss, anon, file float64 }

// readResident reads a live process's resident memory from
// /proc/PID/smaps_rollup, which sums its mappings in one read.
func readResident(pid int) (residentMem, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return residentMem{}, fmt.Errorf("read kz's memory map: %w", err)
	}
	var m residentMem
	var seen int
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		var dst *float64
		switch f[0] {
		case "Rss:":
			dst = &m.rss
		case "Anonymous:":
			dst = &m.anon
		default:
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return residentMem{}, fmt.Errorf("smaps_rollup %q: %w", line, err)
		}
		*dst = kb / 1024
		seen++
	}
	if seen != 2 {
		return residentMem{}, fmt.Errorf("no Rss and Anonymous in kz's smaps_rollup:\n%s", data)
	}
	m.file = m.rss - m.anon
	return m, nil
}

func reportMedian(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	if len(times) > 0 {
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
		b.ReportMetric(float64(times[0].Microseconds())/1000, "min-ms")
	}
}

// releaseBinary is KZ_BIN, or kz built with the release flags of `make
// build` into a temporary directory.
func releaseBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("KZ_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "kz")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "github.com/kaizen-code/kz")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build kz: %v\n%s", err, out)
	}
	return bin
}

// benchEnv is the environment of a benchmarked kz: its own data and
// config directories, a plain xterm and no tmux, so that nothing outside
// kz is asked about the terminal.
func benchEnv(b *testing.B) []string {
	dir := b.TempDir()
	env := []string{"TERM=xterm-256color", "XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "HOME=" + dir,
		// kz is killed after its first frame, so the demo's scratch
		// folders are left behind: they go where the benchmark cleans up.
		"TMPDIR=" + dir}
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "LANG", "LC_ALL", "GOGC", "GOMEMLIMIT", "GODEBUG":
			env = append(env, kv)
		}
	}
	return env
}

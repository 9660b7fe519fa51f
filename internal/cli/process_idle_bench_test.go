package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkProcessIdleWakeups is what the TUI costs while nobody uses it:
// kz --demo on a 120×40 pty, one second after its first frame, watched for
// idleWindow. Reported, as medians over the runs: wakeups-per-s, the
// context switches of all of kz's threads (voluntary and not, from
// /proc/PID/task/*/status) per second, each one a thread that slept and
// was woken or was put off the processor; and cpu-ms-per-s, the CPU time
// of all its threads (utime + stime from /proc/PID/stat) per second. Both
// include the Go runtime's own background work (its monitor thread, the
// collector) as well as kz's and Bubble Tea's.
func BenchmarkProcessIdleWakeups(b *testing.B) {
	bin := releaseBinary(b)
	env := benchEnv(b)
	dir := b.TempDir()
	args := []string{"--demo", "--data-dir", filepath.Join(dir, "data")}
	var wakeups, cpu []float64
	for b.Loop() {
		pid, stop, err := startIdle(bin, dir, env, args...)
		if err != nil {
			b.Fatal(err)
		}
		s0, c0, err := idleCounters(pid)
		if err != nil {
			stop()
			b.Fatal(err)
		}
		t0 := time.Now()
		time.Sleep(idleWindow)
		s1, c1, err := idleCounters(pid)
		took := time.Since(t0).Seconds()
		stop()
		if err != nil {
			b.Fatal(err)
		}
		wakeups = append(wakeups, float64(s1-s0)/took)
		cpu = append(cpu, (c1-c0)*1000/took)
	}
	slices.Sort(wakeups)
	slices.Sort(cpu)
	b.ReportMetric(wakeups[len(wakeups)/2], "wakeups-per-s")
	b.ReportMetric(cpu[len(cpu)/2], "cpu-ms-per-s")
}

// idleWindow is how long BenchmarkProcessIdleWakeups watches an idle kz.
const idleWindow = 3 * time.Second

// idleCounters reads a live process's context switches and its CPU time
// in seconds, each summed over its threads (status and schedstat of each
// task; schedstat's first field is the nanoseconds the thread ran).
func idleCounters(pid int) (switches int64, cpuSeconds float64, err error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, 0, err
	}
	var ran int64
	for _, task := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, task.Name())
		status, err := os.ReadFile(dir + "status")
		if err != nil {
			continue // the thread ended in between
		}
		sched, err := os.ReadFile(dir + "schedstat")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			name, value, ok := strings.Cut(line, ":")
			if ok && (name == "voluntary_ctxt_switches" || name == "nonvoluntary_ctxt_switches") {
				n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
				if err != nil {
					return 0, 0, fmt.Errorf("task %s %s: %w", task.Name(), name, err)
				}
				switches += n
			}
		}
		fields := strings.Fields(string(sched))
		if len(fields) == 0 {
			return 0, 0, fmt.Errorf("task %s: empty schedstat", task.Name())
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("task %s schedstat: %w", task.Name(), err)
		}
		ran += ns
	}
	return switches, float64(ran) / 1e9, nil
}

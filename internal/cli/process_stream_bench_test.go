package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"github.com/kaizen-code/kz/internal/trickle"
)

// The streaming and long-session benchmarks run the release binary in
// its TUI on a 200×50 pseudo-terminal the benchmark owns, so they pay
// what a person's terminal costs kz: Bubble Tea's frame diffing and the
// writes to the terminal, the store, the engine. Every figure comes from
// the kz process itself, not from the benchmark: CPU seconds are the user
// and system time of the child's rusage once it has exited, and peak
// memory is the high-water mark of its resident set (VmHWM), read just
// before it is asked to quit (peak_bench_test.go says why not ru_maxrss).
// The binary is evicted from the page cache before the first run
// (evictFromPageCache).
//
// BenchmarkProcessStream types a prompt into `kz --runtime scripted`
// whose script streams a 200 KB markdown answer with code, lists, tables
// and quotes as 20,000 text deltas 1 ms apart, then the final message;
// "final" is the same answer delivered as one final message, no deltas.
// A second prompt, queued at once, is answered by a short marker; kz is
// asked to quit (ctrl+d) once the marker is on the screen and the terminal has been quiet for streamQuiet; the quit key is
// handled after every event before it, so the CPU figure includes the
// final render. "headless" is the same stream through `kz -p` (no TUI:
// the scripted runtime's pacing and reading of its script, the engine,
// the store and the deltas written to stdout), what streaming costs kz
// before anything is drawn.
//
// Three more runs say what part of the stream's cost is kz's. "burst" is
// the stream's 20,000 deltas sent back to back, with no wait between
// them: what kz's handling of the deltas costs when nothing paces them.
// "pace" is the TUI waiting as the stream does, 20,000 times a
// millisecond, sending no delta, then drawing the same final message: the
// waits and the frames of a turn that shows only its spinner. "wake" is
// not kz: a one-line Perl loop that sleeps in select(2) for as long as the
// stream lasts, as often as kz's runtimes read a dense stream, and does
// nothing else (internal/trickle: a trickle.Window apart for the first
// trickle.Settle, a trickle.Hold apart after, each time taking all that
// arrived; the scripted runtime plays its lines the same way). It is the
// CPU this machine's kernel charges any process that reads the stream as
// kz does for its wake-ups alone (a C loop of nanosleep(2) costs as
// little here; a Go program's sleeps cost more, its scheduler's threads
// waking too).
//
// All six alternate run by run, so load on the machine falls on all
// alike. Metrics: cpu-s (median), cpu-min-s, maxrss-MB (median),
// maxrss-max-MB and csw (the median of the process's voluntary context
// switches, its threads' wake-ups) of each; ratio = median stream CPU /
// median final CPU, headless-ratio, burst-ratio and pace-ratio the same
// for those runs; unpaced-ratio = (stream - pace + final) / final, the
// ratio without the waits; floor-ratio = (wake + final) / final, the
// least ratio a stream read as kz reads it can have on this machine.
// With KZ_BASE_BIN, another build's runs alternate with these, and its
// metrics have the prefix "base-".
//
// BenchmarkProcessPageUp is in process_pageup_bench_test.go.

const (
	streamBytes  = 200 << 10
	streamDeltas = 20000
	// streamDelayMS is the time between two deltas of the stream.
	streamDelayMS = 1
	streamQuiet   = 600 * time.Millisecond
	// streamMarker is the answer of a second prompt queued behind the
	// streamed one: seeing it on the screen, styled, means the first
	// answer has ended and been drawn (kz renders messages in the
	// background one at a time, the earlier first).
	streamMarker = "ZQXJ-**done**-mark"
	// styledMarker is how glamour draws the marker, which its plain-text
	// stand-in (shown while the message renders in the background) never
	// shows: the end is only seen once the styled render is on screen.
	styledMarker = "done-mark"
)

func BenchmarkProcessStream(b *testing.B) {
	bin := releaseBinary(b)
	evictFromPageCache(b, bin)
	env := benchEnv(b)
	dir := b.TempDir()
	src := benchMarkdown(streamBytes)
	scripts := map[string]string{
		"stream": writeScript(b, dir, "stream.jsonl", src, streamDeltas, streamDelayMS, false),
		"final":  writeScript(b, dir, "final.jsonl", src, 0, 0, false),
		"burst":  writeScript(b, dir, "burst.jsonl", src, streamDeltas, 0, false),
		"pace":   writeScript(b, dir, "pace.jsonl", src, streamDeltas, streamDelayMS, true),
	}
	order := []string{"final", "stream", "headless", "burst", "pace", "wake"}
	perl, err := exec.LookPath("perl")
	if err != nil {
		// perl-base is in every Debian; elsewhere the floor is left out.
		b.Logf("no perl, no wake figure: %v", err)
		order = order[:len(order)-1]
	}
	// How kz's reader of the stream sleeps: a Window at a time for the
	// first Settle, a Hold at a time for the rest.
	lasts := time.Duration(streamDeltas*streamDelayMS) * time.Millisecond
	sleeps := fmt.Sprintf("select(undef, undef, undef, %g) for 1..%d; select(undef, undef, undef, %g) for 1..%d",
		trickle.Window.Seconds(), int(trickle.Settle/trickle.Window), trickle.Hold.Seconds(), int((lasts-trickle.Settle)/trickle.Hold))
	// With KZ_BASE_BIN naming another build, every kz run is made with
	// it too, right after the same run of this one, and reported with
	// the prefix "base-": a before and after that the machine's drift
	// (a fifth over an hour here) falls on alike.
	builds := benchBuilds(bin)
	for _, build := range builds[1:] {
		evictFromPageCache(b, build.bin)
	}
	ws := benchWorkspace(b, dir)
	runs := map[string][]usage{}
	for b.Loop() {
		for _, name := range order {
			for _, build := range builds {
				if name == "wake" && build.prefix != "" {
					continue
				}
				// Each build keeps its own store: an older one may not
				// open what a newer one migrated.
				data := filepath.Join(dir, "data-"+build.prefix+name)
				u, err := streamRun(name, build.bin, data, ws, env, scripts, sleeps, perl)
				if err != nil {
					b.Fatalf("%s%s: %v", build.prefix, name, err)
				}
				runs[build.prefix+name] = append(runs[build.prefix+name], u)
			}
		}
	}
	med := map[string]float64{}
	for name, s := range runs {
		med[name] = reportUsage(b, name, s)
	}
	for _, build := range builds {
		p := build.prefix
		b.ReportMetric(med[p+"stream"]/med[p+"final"], p+"ratio")
		b.ReportMetric(med[p+"headless"]/med[p+"final"], p+"headless-ratio")
		b.ReportMetric(med[p+"burst"]/med[p+"final"], p+"burst-ratio")
		b.ReportMetric(med[p+"pace"]/med[p+"final"], p+"pace-ratio")
		b.ReportMetric((med[p+"stream"]-med[p+"pace"]+med[p+"final"])/med[p+"final"], p+"unpaced-ratio")
	}
	if _, ok := med["wake"]; ok {
		b.ReportMetric((med["wake"]+med["final"])/med["final"], "floor-ratio")
	}
}

// kzBuild is a build a benchmark runs, and the prefix of its metrics:
// none for KZ_BIN's, "base-" for KZ_BASE_BIN's.
type kzBuild struct{ prefix, bin string }

// benchBuilds is bin, then the build KZ_BASE_BIN names, if any.
func benchBuilds(bin string) []kzBuild {
	builds := []kzBuild{{"", bin}}
	if base := os.Getenv("KZ_BASE_BIN"); base != "" {
		builds = append(builds, kzBuild{"base-", base})
	}
	return builds
}

// usage is what one run cost the process: CPU seconds (user and system),
// peak resident memory, and voluntary context switches (its wake-ups,
// all threads).
type usage struct {
	cpu, rssMB float64
	switches   int64
}

// benchWorkspace makes an empty folder in dir for kz to run in, as a
// person's project. The benchmark's scripts and every build's data
// directory stay beside it, outside: what kz scans and checkpoints of its
// workspace at each turn's start and end is then the same for every run
// and build, not the stores and scripts of the runs before.
func benchWorkspace(tb testing.TB, dir string) string {
	tb.Helper()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		tb.Fatal(err)
	}
	return ws
}

// streamRun makes one run of BenchmarkProcessStream's name with bin and
// its data directory data, in the workspace dir.
func streamRun(name, bin, data, dir string, env []string, scripts map[string]string, sleeps, perl string) (usage, error) {
	switch name {
	case "wake":
		return traced(func() *exec.Cmd { return exec.Command(perl, "-e", sleeps) })
	case "headless":
		return traced(func() *exec.Cmd {
			cmd := exec.Command(bin, "-p", "go", "--runtime", "scripted", "--script", scripts["stream"], "--data-dir", data)
			cmd.Dir, cmd.Env = dir, env
			return cmd
		})
	}
	return streamOnce(bin, dir, env, "--runtime", "scripted", "--script", scripts[name], "--data-dir", data)
}

// traced runs a command to its exit as traceToExit does and returns its
// usage.
func traced(mk func() *exec.Cmd) (usage, error) {
	peak, ru, err := traceToExit(mk)
	if err != nil {
		return usage{}, err
	}
	return usage{cpu: rusageCPU(ru), rssMB: peak, switches: ru.Nvcsw}, nil
}

func rusageCPU(ru *syscall.Rusage) float64 {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// reportUsage reports the runs of name (cpu-s and csw are medians) and
// returns the median CPU.
func reportUsage(b *testing.B, name string, s []usage) float64 {
	cpus := make([]float64, len(s))
	rsss := make([]float64, len(s))
	csws := make([]float64, len(s))
	for i, x := range s {
		cpus[i], rsss[i], csws[i] = x.cpu, x.rssMB, float64(x.switches)
	}
	slices.Sort(cpus)
	slices.Sort(rsss)
	slices.Sort(csws)
	b.ReportMetric(cpus[len(cpus)/2], name+"-cpu-s")
	b.ReportMetric(cpus[0], name+"-cpu-min-s")
	b.ReportMetric(rsss[len(rsss)/2], name+"-maxrss-MB")
	b.ReportMetric(rsss[len(rsss)-1], name+"-maxrss-max-MB")
	b.ReportMetric(csws[len(csws)/2], name+"-csw")
	return cpus[len(cpus)/2]
}

// streamOnce runs one kz TUI, sends one prompt, waits for the answer to
// be drawn and settle, quits, and returns kz's usage.
func streamOnce(bin, dir string, env []string, args ...string) (usage, error) {
	s, err := startPTY(bin, dir, env, styledMarker, args...)
	if err != nil {
		return usage{}, err
	}
	defer s.kill()
	if err := s.waitFor("Ask kz", 20*time.Second); err != nil {
		return usage{}, err
	}
	// The second prompt waits in kz's queue until the first turn has
	// ended; its answer, the marker, comes on a fresh line, drawn whole.
	if err := s.write("go\r"); err != nil {
		return usage{}, err
	}
	if err := s.write("done\r"); err != nil {
		return usage{}, err
	}
	if err := s.waitMarker(3 * time.Minute); err != nil {
		return usage{}, err
	}
	s.settle(streamQuiet, time.Minute)
	return s.quit()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ptySession is kz on a pty with a goroutine draining its output, noting
// when output last came and whether the marker has been drawn.
type ptySession struct {
	cmd  *exec.Cmd
	ptmx *os.File
	kick chan struct{}
	done chan struct{}

	mu     sync.Mutex
	last   time.Time // when output last arrived
	window string    // the tail of the output, escape sequences stripped
	marked bool
}

func startPTY(bin, dir string, env []string, marker string, args ...string) (*ptySession, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		return nil, fmt.Errorf("start kz: %w", err)
	}
	s := &ptySession{cmd: cmd, ptmx: ptmx, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go s.read(marker)
	return s, nil
}

// read drains the pty. The marker is looked for in a sliding window of
// the stripped output, so a long stream costs the benchmark linear work.
func (s *ptySession) read(marker string) {
	defer close(s.done)
	buf := make([]byte, 64<<10)
	var raw []byte
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			raw = append(raw, buf[:n]...)
			if len(raw) > 16<<10 {
				raw = raw[len(raw)-16<<10:]
			}
			text := ansi.Strip(string(raw))
			s.mu.Lock()
			s.last = time.Now()
			s.window = text
			s.marked = s.marked || (marker != "" && strings.Contains(text, marker))
			s.mu.Unlock()
			select {
			case s.kick <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *ptySession) write(keys string) error {
	if _, err := s.ptmx.Write([]byte(keys)); err != nil {
		return fmt.Errorf("write to kz: %w", err)
	}
	return nil
}

// waitFor waits until text is in the recent output.
func (s *ptySession) waitFor(text string, limit time.Duration) error {
	return s.wait(limit, func() bool { return strings.Contains(s.window, text) }, text)
}

func (s *ptySession) waitMarker(limit time.Duration) error {
	return s.wait(limit, func() bool { return s.marked }, "the end of the answer")
}

func (s *ptySession) wait(limit time.Duration, ok func() bool, what string) error {
	deadline := time.After(limit)
	for {
		s.mu.Lock()
		good := ok()
		s.mu.Unlock()
		if good {
			return nil
		}
		select {
		case <-s.kick:
		case <-s.done:
			return fmt.Errorf("kz exited before showing %s", what)
		case <-deadline:
			s.mu.Lock()
			tail := s.window[max(len(s.window)-600, 0):]
			s.mu.Unlock()
			return fmt.Errorf("%s not shown within %s; the screen's last output:\n%s", what, limit, tail)
		}
	}
}

// settle waits until no output has come for quiet.
func (s *ptySession) settle(quiet, limit time.Duration) {
	s.settleAfter(time.Now(), quiet, limit)
}

// settleAfter waits for the output burst after t0 to end (quiet with no
// output) and returns the arrival of its first and its last read. With no
// output at all, both are t0.
func (s *ptySession) settleAfter(t0 time.Time, quiet, limit time.Duration) (first, last time.Time) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.kick:
			s.mu.Lock()
			if first.IsZero() && s.last.After(t0) {
				first = s.last
			}
			s.mu.Unlock()
		case <-s.done:
			return first, last
		case <-time.After(quiet):
			s.mu.Lock()
			l := s.last
			s.mu.Unlock()
			if l.Before(t0) {
				return t0, t0
			}
			if time.Since(l) >= quiet {
				if first.IsZero() {
					first = l
				}
				return first, l
			}
		}
	}
	return first, last
}

// quit presses ctrl+d until kz exits and returns its usage: CPU seconds
// and context switches from its rusage, and its peak resident memory in
// MB, read just before the first ctrl+d (VmHWM: peak_bench_test.go says
// why not ru_maxrss).
func (s *ptySession) quit() (usage, error) {
	rssMB, err := highWater(s.cmd.Process.Pid)
	if err != nil {
		return usage{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	for range 10 {
		if err := s.write("\x04"); err != nil {
			break
		}
		select {
		case err := <-exited:
			if err != nil {
				return usage{}, fmt.Errorf("kz: %w", err)
			}
			ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				return usage{}, errors.New("no rusage for kz")
			}
			return usage{cpu: rusageCPU(ru), rssMB: rssMB, switches: ru.Nvcsw}, nil
		case <-time.After(2 * time.Second):
		}
	}
	return usage{}, errors.New("kz did not quit on ctrl+d")
}

func (s *ptySession) kill() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
	}
	_ = s.ptmx.Close()
	<-s.done
}

// writeScript writes a scripted-runtime script that streams src in n
// deltas delayMS apart (none: only the final message) and ends with the
// final message; a second turn answers with streamMarker alone. With pace
// the script waits as the stream would, delayMS n times, but sends no
// delta.
func writeScript(tb testing.TB, dir, name, src string, n, delayMS int, pace bool) string {
	tb.Helper()
	var lines []any
	line := func(v any) { lines = append(lines, v) }
	// No header: the runtime declares every capability, which kz's
	// default mode needs.
	line(map[string]any{"type": "session_started"})
	line(map[string]any{"cycle": true})
	if n > 0 {
		size := max(len(src)/n, 1)
		for i := 0; i < len(src); i += size {
			if pace {
				line(map[string]any{"sleep_ms": delayMS})
				continue
			}
			line(map[string]any{"type": "text_delta", "text": src[i:min(i+size, len(src))], "delay_ms": delayMS})
		}
	}
	line(map[string]any{"type": "assistant_message", "text": src})
	line(map[string]any{"type": "usage_updated", "usage": map[string]int{"input_tokens": 1000, "output_tokens": 50000}})
	line(map[string]any{"end_turn": true})
	line(map[string]any{"type": "assistant_message", "text": streamMarker})
	return writeJSONLines(tb, filepath.Join(dir, name), lines)
}

// writeJSONLines writes each of lines as a line of JSON to path, a
// scripted-runtime script, and returns path.
func writeJSONLines(tb testing.TB, path string, lines []any) string {
	tb.Helper()
	var b strings.Builder
	for _, v := range lines {
		data, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// benchMarkdown makes about size bytes of the markdown an assistant
// writes: headings, paragraphs with inline code and emphasis, lists,
// fenced Go code, tables and block quotes.
func benchMarkdown(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Step %d: reading the handler\n\n", i)
		fmt.Fprintf(&b, "The handler in `server/handler%d.go` parses the request, checks the **session** and writes the *reply*. "+
			"It keeps the connection open while the client streams, and closes it when the context ends.\n\n", i)
		b.WriteString("- it validates the input\n- it calls the store\n  - and retries once on a busy database\n- it writes the answer\n\n")
		fmt.Fprintf(&b, "```go\nfunc handle%d(ctx context.Context, r *Request) (*Reply, error) {\n\tif err := r.Validate(); err != nil {\n\t\treturn nil, fmt.Errorf(\"validate: %%w\", err)\n\t}\n\treturn store.Save(ctx, r)\n}\n```\n\n", i)
		if i%3 == 0 {
			b.WriteString("| field | type | meaning |\n|---|---|---|\n| id | string | the request id |\n| body | []byte | what was sent |\n\n")
		}
		if i%4 == 1 {
			b.WriteString("> Note: the retry is safe because the write is idempotent.\n> > A nested remark about the lock.\n\n")
		}
	}
	return b.String()
}

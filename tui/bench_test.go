package tui

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
	"golang.org/x/sys/unix"
)

// streamDeltas splits src into n deltas of about equal size.
func streamDeltas(src string, n int) []string {
	size := max(len(src)/n, 1)
	out := make([]string, 0, n+1)
	for i := 0; i < len(src); i += size {
		out = append(out, src[i:min(i+size, len(src))])
	}
	return out
}

// BenchmarkStreamMarkdown streams a 200 KB markdown answer as 20,000
// deltas into the root model at 200×60, calling View after every delta as
// the Bubble Tea loop does, and compares the total time with rendering the
// final document once. The clock advances by `gap` per delta: 1ms is a
// stream far faster than any model (10 KB/s); 16ms makes every delta a new
// frame, the worst case for the tail re-render.
//
// Metrics: ratio = CPU time of the stream / CPU time of one render of the
// final document (the target is at most 3; CPU time, not wall time, so
// that other processes on the machine do not skew it); p99-frame-ms = 99th
// percentile of Update+View in wall time; p99-frame-cpu-ms = the same in
// CPU time of the UI goroutine's thread, which machine load cannot
// inflate (on an idle machine the two agree).
func BenchmarkStreamMarkdown(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	src := benchMarkdown(200 << 10)
	deltas := streamDeltas(src, 20000)
	for _, gap := range []time.Duration{time.Millisecond, frameInterval} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			var ratio, p99, p99CPU float64
			for b.Loop() {
				// Baseline: the final document rendered once at the same width.
				r := newMDRenderer(themeForBench().Markdown)
				runtime.GC()
				c0 := cpuTime()
				r.render(src, 200)
				once := cpuTime() - c0

				m := newModel(b.Context(), newFake(), nil, themeForBench(), "")
				m.quiet = true
				clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				m.now = func() time.Time { return clock }
				m.update(teaSize(200, 60))
				m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "write a long answer"})
				var fc frameClock
				runtime.GC()
				start := cpuTime()
				for _, d := range deltas {
					clock = clock.Add(gap)
					fc.start()
					m.Update(eventsMsg{events: []engine.Event{{Type: engine.EventTextDelta, TurnID: 1, Text: d}}})
					_ = m.View()
					fc.stop()
				}
				fc.start()
				m.Update(eventsMsg{events: []engine.Event{{Type: engine.EventAssistantMessage, TurnID: 1, Text: src}}})
				_ = m.View()
				fc.stop()
				total := cpuTime() - start
				ratio = float64(total) / float64(once)
				p99, p99CPU = fc.p99()
				frames := fc.wall
				b.ReportMetric(float64(once)/float64(time.Millisecond), "render-once-cpu-ms")
				b.ReportMetric(float64(total)/float64(time.Millisecond), "stream-cpu-ms")
				b.ReportMetric(float64(frames[len(frames)-1])/float64(time.Millisecond), "max-frame-ms")
			}
			b.ReportMetric(ratio, "ratio")
			b.ReportMetric(p99, "p99-frame-ms")
			b.ReportMetric(p99CPU, "p99-frame-cpu-ms")
		})
	}
}

// frameClock records the wall time and the CPU time of the calling
// thread for each frame. The benchmark locks its goroutine to its thread,
// so the CPU time is the UI work (and the garbage collection it assists
// with) without the time spent waiting for a core other processes hold.
type frameClock struct {
	wall, cpu []time.Duration
	c0        time.Duration
	t0        time.Time
}

func (f *frameClock) start() { f.t0, f.c0 = time.Now(), threadCPU() }

func (f *frameClock) stop() {
	f.wall = append(f.wall, time.Since(f.t0))
	f.cpu = append(f.cpu, threadCPU()-f.c0)
}

// p99 returns the 99th percentiles in milliseconds; it sorts the samples.
func (f *frameClock) p99() (wall, cpu float64) {
	pct := func(d []time.Duration) float64 {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return float64(d[len(d)*99/100]) / float64(time.Millisecond)
	}
	return pct(f.wall), pct(f.cpu)
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// build1000Turns makes a model holding a 1,000-turn session: each turn a
// prompt, a tool call with output and a markdown answer.
func build1000Turns(tb testing.TB) *Model {
	m := newModel(tb.Context(), newFake(), nil, themeForBench(), "")
	m.quiet = true
	m.update(teaSize(200, 60))
	answer := benchMarkdown(1500)
	for i := 1; i <= 1000; i++ {
		id := "t" + strconv.Itoa(i)
		m.Update(eventsMsg{events: []engine.Event{
			{Type: engine.EventUserMessage, TurnID: int64(i), Text: fmt.Sprintf("question number %d: what does this do?", i)},
			{Type: engine.EventToolCallStarted, TurnID: int64(i), ToolCallID: id, Tool: "read_file", Input: []byte(`{"path":"main.go"}`)},
			{Type: engine.EventToolCallFinished, TurnID: int64(i), ToolCallID: id, Tool: "read_file", Output: strings.Repeat("line of output\n", 20)},
			{Type: engine.EventAssistantMessage, TurnID: int64(i), Text: answer},
			{Type: engine.EventFinalResult, TurnID: int64(i), Status: "complete", Usage: &engine.Usage{InputTokens: 1000, OutputTokens: 200}},
		}})
	}
	return m
}

// Benchmark1000Turns measures a 1,000-turn session at 200×60: View while
// following the bottom; scrolling back one page per frame through the
// whole session the first time and again with the render caches warm; and
// the heap and RSS once every item has been rendered. The first pass runs
// quiet, rendering each message with glamour in the frame it comes into
// view: it measures that cost, which the program keeps out of frames with
// plain stand-ins and background renders (see BenchmarkColdScroll60fps
// and BenchmarkColdPageUp60fps for the program's frame times).
func Benchmark1000Turns(b *testing.B) {
	m := build1000Turns(b)
	heap, rss := memNow()
	p99 := func(frames []time.Duration) float64 {
		slices.Sort(frames)
		return float64(frames[len(frames)*99/100]) / float64(time.Millisecond)
	}
	// The cold pass happens once, outside the sub-benchmarks, which the
	// testing package runs more than once.
	var cold []time.Duration
	for !m.tr.atTop() {
		t0 := time.Now()
		m.press("pgup")
		_ = m.View()
		cold = append(cold, time.Since(t0))
	}
	full, fullRSS := memNow()
	m.tr.toBottom()
	b.Run("view-bottom", func(b *testing.B) {
		for b.Loop() {
			_ = m.View()
		}
	})
	b.Run("scroll-page-warm", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var fc frameClock
		for b.Loop() {
			if m.tr.atTop() {
				m.tr.toBottom()
			}
			fc.start()
			m.press("pgup")
			_ = m.View()
			fc.stop()
		}
		wall, cpu := fc.p99()
		b.ReportMetric(wall, "p99-frame-ms")
		b.ReportMetric(cpu, "p99-frame-cpu-ms")
	})
	b.Run("scroll-whole-session-cold", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(float64(len(cold)), "frames")
		b.ReportMetric(p99(append([]time.Duration(nil), cold...)), "p99-frame-ms")
		b.ReportMetric(heap, "heap-built-MB")
		b.ReportMetric(rss, "rss-built-MB")
		b.ReportMetric(full, "heap-all-rendered-MB")
		b.ReportMetric(fullRSS, "rss-all-rendered-MB")
	})
	runtime.KeepAlive(m)
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func memNow() (heapMB, rssMB float64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapMB = float64(ms.HeapAlloc) / (1 << 20)
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				rssMB = kb / 1024
			}
		}
	}
	return heapMB, rssMB
}

// BenchmarkFirstFrame measures building the root model and its first View
// at 120×40, the work between Run and the first frame (target: 50 ms).
func BenchmarkFirstFrame(b *testing.B) {
	for b.Loop() {
		m := newModel(b.Context(), newFake(), nil, themeForBench(), DemoWelcome)
		m.quiet = true
		m.Update(teaSize(120, 40))
		_ = m.View()
	}
}

// BenchmarkColdScroll60fps scrolls a freshly built 1,000-turn session back
// with the mouse wheel (3 lines per event, one event per frame at 60
// frames a second, 300 frames), with messages above the view rendered
// ahead on another goroutine (as the program runs) and, for comparison,
// without (every message rendered when it comes into view). Metrics: p99 of
// Update+View per frame in wall time and in the UI thread's CPU time.
func BenchmarkColdScroll60fps(b *testing.B) { coldScroll(b, mouseWheel(true), 300) }

// BenchmarkColdPageUp60fps holds pgup through the same never-rendered
// session: every page brings new messages into view.
func BenchmarkColdPageUp60fps(b *testing.B) { coldScroll(b, tea.KeyPressMsg{Code: tea.KeyPgUp}, 120) }

func coldScroll(b *testing.B, scroll tea.Msg, frames int) {
	for _, ahead := range []bool{false, true} {
		name := "render-on-demand"
		if ahead {
			name = "render-ahead"
		}
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var p99, p99CPU float64
			for b.Loop() {
				m := build1000Turns(b)
				m.quiet = !ahead
				msgs := make(chan tea.Msg, 64)
				var wg sync.WaitGroup
				async := func(cmd tea.Cmd) {
					if cmd == nil {
						return
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for _, msg := range runCmd(cmd) {
							msgs <- msg
						}
					}()
				}
				_ = m.View()
				var fc frameClock
				for range frames {
					t0 := time.Now()
					fc.start()
					for drained := false; !drained; {
						select {
						case msg := <-msgs:
							_, cmd := m.Update(msg)
							async(cmd)
						default:
							drained = true
						}
					}
					_, cmd := m.Update(scroll)
					async(cmd)
					_ = m.View()
					fc.stop()
					time.Sleep(time.Until(t0.Add(frameInterval)))
				}
				wg.Wait()
				p99, p99CPU = fc.p99()
			}
			b.ReportMetric(p99, "p99-frame-ms")
			b.ReportMetric(p99CPU, "p99-frame-cpu-ms")
		})
	}
}

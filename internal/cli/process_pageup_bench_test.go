package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// BenchmarkProcessPageUp resumes a stored 1,000-turn session (written
// through the store as kz writes one) in the release binary on a 200×50
// pty and presses PgUp pageUps times. A key's latency runs from the write
// of its escape sequence to the pty until the screen settles: the last
// byte of the output burst that follows, a burst ending when the pty has
// been silent for pageQuiet. So a message first shown as a plain stand-in
// and then redrawn styled counts until the styled redraw.
// first-p50/p90/p99-ms are the same up to the first byte of the repaint.
// A latency thus includes the pty, kz's input handling, Update and View,
// any background render it waits for, Bubble Tea's diffing and the
// terminal write, and the benchmark's own read of the output; the quiet
// time that ends a burst is not counted. The keys are pressed one after
// the other as soon as the screen is quiet, as a person holding PgUp
// would at about seven keys a second.
//
// Memory: maxrss-MB (named as before) is the peak resident memory of the
// whole kz process over its life, its VmHWM read before it quits:
// start-up, opening the store and replaying the 1,000 turns, the first
// frame and all the paging. It
// counts the binary's own pages the kernel mapped in, whose number
// depends on the page cache more than on kz. So the benchmark also reads
// /proc/PID/smaps_rollup once the first frame has settled and after
// every pageSample keys, and reports the largest anonymous part
// (anon-MB: the Go heap, stacks and runtime, what kz allocates) and the
// largest file-backed part (file-MB: mostly the binary's text and data)
// it saw; maxrss-MB is close to their sum at its peak. GOGC and
// GOMEMLIMIT are passed through to kz, to compare collector settings.
func BenchmarkProcessPageUp(b *testing.B) {
	bin := releaseBinary(b)
	evictFromPageCache(b, bin)
	env := benchEnv(b)
	dir := b.TempDir()
	data := filepath.Join(dir, "data")
	id := writeLongSession(b, data, dir, 1000)
	hello, err := filepath.Abs(filepath.Join("..", "..", "testdata", "scripts", "hello.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var settled, first, rss, anon, file []float64
	for b.Loop() {
		s, err := startPTY(bin, dir, env, "", "--resume", id, "--runtime", "scripted", "--script", hello, "--data-dir", data)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.waitFor("Ask kz", 30*time.Second); err != nil {
			s.kill()
			b.Fatal(err)
		}
		s.settle(time.Second, 30*time.Second)
		var peak residentMem
		sample := func() {
			m, err := readResident(s.cmd.Process.Pid)
			if err != nil {
				s.kill()
				b.Fatal(err)
			}
			peak.anon, peak.file = max(peak.anon, m.anon), max(peak.file, m.file)
		}
		sample()
		for k := range pageUps {
			t0 := time.Now()
			if err := s.write("\x1b[5~"); err != nil {
				s.kill()
				b.Fatal(err)
			}
			f, last := s.settleAfter(t0, pageQuiet, 30*time.Second)
			first = append(first, ms(f.Sub(t0)))
			settled = append(settled, ms(last.Sub(t0)))
			if os.Getenv("KZ_BENCH_LOG") != "" {
				fmt.Fprintf(os.Stderr, "pgup %d: first %.1f ms, settled %.1f ms\n", k+1, ms(f.Sub(t0)), ms(last.Sub(t0)))
			}
			// Read between keys, once the screen is quiet: the read takes
			// the kernel's lock on kz's memory map, which must not fall
			// into a key's latency.
			if (k+1)%pageSample == 0 {
				sample()
			}
		}
		u, err := s.quit()
		s.kill()
		if err != nil {
			b.Fatal(err)
		}
		rss, anon, file = append(rss, u.rssMB), append(anon, peak.anon), append(file, peak.file)
	}
	b.ReportMetric(pct(settled, 50), "settle-p50-ms")
	b.ReportMetric(pct(settled, 90), "settle-p90-ms")
	b.ReportMetric(pct(settled, 99), "settle-p99-ms")
	b.ReportMetric(pct(settled, 100), "settle-max-ms")
	b.ReportMetric(pct(first, 50), "first-p50-ms")
	b.ReportMetric(pct(first, 90), "first-p90-ms")
	b.ReportMetric(pct(first, 99), "first-p99-ms")
	b.ReportMetric(pct(rss, 50), "maxrss-MB")
	b.ReportMetric(pct(rss, 100), "maxrss-max-MB")
	b.ReportMetric(pct(anon, 50), "anon-MB")
	b.ReportMetric(pct(file, 50), "file-MB")
}

const (
	pageQuiet = 120 * time.Millisecond
	pageUps   = 100
	// pageSample is how many keys apart kz's memory is read.
	pageSample = 10
)

// writeLongSession stores a session of n turns in the database under
// data, each a prompt, a tool call with 20 lines of output and a 1.5 KB
// markdown answer, and returns its id.
func writeLongSession(tb testing.TB, data, workspace string, n int) string {
	tb.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(data, 0o700); err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(data, "kz.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	const id = "bench-long-session"
	w := st.NewWriter()
	w.CreateLazily(engine.SessionInfo{ID: id, Workspace: workspace, Runtime: "scripted", Model: "scripted-1", Mode: engine.ModeFullAutonomous})
	answer := benchMarkdown(1500)
	seq := int64(0)
	at := time.Now().Add(-time.Hour)
	add := func(ev engine.Event) {
		seq++
		at = at.Add(time.Millisecond)
		ev.SessionID, ev.Seq, ev.Time, ev.Runtime, ev.Model = id, seq, at, "scripted", "scripted-1"
		if err := w.Append(ev); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 1; i <= n; i++ {
		turn, call := int64(i), fmt.Sprintf("t%d", i)
		add(engine.Event{Type: engine.EventUserMessage, TurnID: turn, Text: fmt.Sprintf("question number %d: what does this do?", i)})
		add(engine.Event{Type: engine.EventToolCallStarted, TurnID: turn, ToolCallID: call, Tool: "read_file", Input: []byte(`{"path":"main.go"}`)})
		add(engine.Event{Type: engine.EventToolCallFinished, TurnID: turn, ToolCallID: call, Tool: "read_file", Output: strings.Repeat("line of output\n", 20)})
		add(engine.Event{Type: engine.EventAssistantMessage, TurnID: turn, Text: answer})
		add(engine.Event{Type: engine.EventFinalResult, TurnID: turn, Status: string(engine.StatusComplete), Usage: &engine.Usage{InputTokens: 1000, OutputTokens: 200}})
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return id
}

// pct is the p-th percentile of v (p 100: the largest), by rank.
func pct(v []float64, p int) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[min(len(v)*p/100, len(v)-1)]
}

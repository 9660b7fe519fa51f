package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// BenchmarkReopenSession100k reopens a database holding one session of
// 100,000 events (1,000 turns with streamed text, tool calls and usage) and
// rebuilds what a runtime joining it needs: counters, native ids and the
// whole transcript.
func BenchmarkReopenSession100k(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "kz.db")
	st, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.CreateSession(ctx, "big", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		b.Fatal(err)
	}
	seq := int64(0)
	now := time.Now()
	mk := func(turn int64, typ engine.EventType) engine.Event {
		seq++
		return engine.Event{Type: typ, SessionID: "big", Seq: seq, TurnID: turn, Runtime: "r", Model: "m", Time: now}
	}
	for turn := int64(1); turn <= 1000; turn++ {
		var batch []engine.Event
		u := mk(turn, engine.EventUserMessage)
		u.Text = fmt.Sprintf("please do step %d of the refactor", turn)
		batch = append(batch, u)
		for i := range 20 {
			d := mk(turn, engine.EventTextDelta)
			d.Text = "some streamed words "
			batch = append(batch, d)
			s := mk(turn, engine.EventToolCallStarted)
			s.ToolCallID, s.Tool, s.Input = fmt.Sprintf("t%d-%d", turn, i), "read_file", json.RawMessage(`{"path":"pkg/file.go"}`)
			f := mk(turn, engine.EventToolCallFinished)
			f.ToolCallID, f.Tool, f.Output = s.ToolCallID, "read_file", "package pkg\n\nfunc F() {}\n"
			us := mk(turn, engine.EventUsageUpdated)
			us.Usage, us.CostUSD = &engine.Usage{InputTokens: 1000, OutputTokens: 50}, 0.001
			batch = append(batch, s, f, us)
		}
		for range 17 {
			d := mk(turn, engine.EventTextDelta)
			d.Text = "more words "
			batch = append(batch, d)
		}
		a := mk(turn, engine.EventAssistantMessage)
		a.Text = "Done with this step."
		fin := mk(turn, engine.EventFinalResult)
		fin.Status, fin.Usage = "complete", &engine.Usage{InputTokens: 20000, OutputTokens: 1000}
		batch = append(batch, a, fin)
		if err := st.writeBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	if seq != 100000 {
		b.Fatalf("%d events", seq)
	}
	_ = st.Close()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	defer func() {
		// On a machine shared with other work, wall time grows with the
		// load; the CPU the reopen burns does not.
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}()
	for range b.N {
		st, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		p, err := st.Prior(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		if p.LastSeq != 100000 || len(p.Transcript) != 1000*(3+20) {
			b.Fatalf("prior: seq %d, %d entries", p.LastSeq, len(p.Transcript))
		}
		_ = st.Close()
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

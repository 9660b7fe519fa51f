package codex

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// BenchmarkLineToSubscriber measures the latency from a line written on the
// fake CLI's stdout to the matching text_delta at a session subscriber.
// Each line carries its send time; lines are paced 100 µs apart like a fast
// token stream. Reported: p50 and p99 in microseconds (target: p99 ≤ 1000).
//
//	go test -run '^$' -bench LineToSubscriber -benchtime=2000x ./runtimes/codex/
func BenchmarkLineToSubscriber(b *testing.B) {
	f := newFake(b, append(handshake("go"), scriptLine{Dir: "fake", Op: "stream", Count: b.N, Every: 100}, cli(turnDone)))
	benchLatency(b, f.ws, []engine.RuntimeEntry{{Runtime: f.rt}})
}

// benchLatency runs one turn and reports the delta latencies.
func benchLatency(b *testing.B, ws string, rts []engine.RuntimeEntry) {
	var mu sync.Mutex
	var lat []time.Duration
	s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: &memJournal{}, Runtimes: rts, Interactive: true})
	if err != nil {
		b.Fatal(err)
	}
	sub := s.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			now := time.Now()
			if ev.Type != engine.EventTextDelta {
				continue
			}
			// A merged delta holds several stamps; the first is the
			// oldest, so its latency is the batch's worst.
			first, _, _ := strings.Cut(ev.Text, ";")
			ns, err := strconv.ParseInt(first, 10, 64)
			if err != nil {
				continue
			}
			mu.Lock()
			lat = append(lat, now.Sub(time.Unix(0, ns)))
			mu.Unlock()
		}
	}()
	b.ResetTimer()
	final, err := s.RunTurn(context.Background(), "go")
	b.StopTimer()
	cancel()
	sub.Close()
	<-done
	_ = s.Close(context.Background())
	if err != nil || final.Status != string(engine.StatusComplete) {
		b.Fatalf("turn: %v %+v", err, final)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("no deltas measured")
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50_us")
	b.ReportMetric(q(0.99), "p99_us")
	b.ReportMetric(float64(len(lat)), "events")
}

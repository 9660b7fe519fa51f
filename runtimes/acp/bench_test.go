package acp

import (
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// BenchmarkLineToSubscriber measures the latency from a line written on the
// fake CLI's stdout to the matching text_delta at a session subscriber.
// Each line carries its send time; lines are paced 100 µs apart like a fast
// token stream. Reported: p50 and p99 in microseconds (target: p99 ≤ 1000).
//
//	go test -run '^$' -bench LineToSubscriber -benchtime=2000x ./runtimes/acp/
func BenchmarkLineToSubscriber(b *testing.B) {
	f := newFake(b, append(handshake("go"), clitest.Line{Dir: "fake", Op: "stream", Count: b.N, Every: 100}, clitest.CLI(promptDone)))
	clitest.BenchLatency(b, f.WS, []engine.RuntimeEntry{{Runtime: f.rt}})
}

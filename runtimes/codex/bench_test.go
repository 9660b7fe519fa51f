package codex

import (
	"context"

	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// BenchmarkLineToSubscriber measures the latency from a line written on the
// fake CLI's stdout to the matching text_delta at a session subscriber.
// Each line carries its send time; lines are paced 100 µs apart like a fast
// token stream. Reported: p50 and p99 in microseconds (target: p99 ≤ 1000).
//
//	go test -run '^$' -bench LineToSubscriber -benchtime=2000x ./runtimes/codex/
func BenchmarkLineToSubscriber(b *testing.B) {
	f := newFake(b, append(handshake("go"), clitest.Line{Dir: "fake", Op: "stream", Count: b.N, Every: 100}, clitest.CLI(turnDone)))
	clitest.BenchLatency(b, f.WS, []engine.RuntimeEntry{{Runtime: f.rt}})
}

// BenchmarkRealTurn measures the wall time of one text turn of the real
// Codex CLI against the fake Responses API, from the prompt to the
// final_result at the session: the CLI's start, handshake, one model
// request and, before kz stopped waiting for it, the CLI's shutdown. Each
// turn starts a new thread in a new session, so that no turn waits for
// the stop of the one before it (a resumed thread does).
//
//	KZ_CODEX_BIN=$(sh runtimes/codex/install-cli.sh $HOME/.cache/kz/codex) \
//	  go test -run '^$' -bench RealTurn -benchtime=10x ./runtimes/codex/
func BenchmarkRealTurn(b *testing.B) {
	api := newRespAPI(b, func(int, map[string]any) step { return step{Text: "ok"} })
	rt, ws := realSetup(b, api)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		h := clitest.NewHarness(b, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
		b.StartTimer()
		if final := h.Run(b, ctx, "Say ok"); final.Status != string(engine.StatusComplete) {
			b.Fatalf("final %+v", final)
		}
	}
}

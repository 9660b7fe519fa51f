package scripted

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// BenchmarkLoadStream loads the script of a long stream, 20,000 text
// deltas and the final message (the shape of the TUI's streaming
// benchmark), and reports what one Load allocates (B/op) and what the
// loaded runtime keeps alive (retained-B): the script is checked, not
// held, so the second stays a few hundred bytes whatever the length.
func BenchmarkLoadStream(b *testing.B) {
	path := streamScript(b, 1)
	b.ReportAllocs()
	for b.Loop() {
		rt, err := Load("s", path)
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(rt)
	}
	b.StopTimer()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept, err := Load("s", path)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "retained-B")
	runtime.KeepAlive(kept)
}

// BenchmarkPlayStream plays the same script's first turn, without its
// delays, through a real session whose journal keeps nothing: what
// replaying 20,000 deltas costs the runtime and the engine, allocations
// included (B/op), before any subscriber sees them.
func BenchmarkPlayStream(b *testing.B) {
	rt, err := Load("s", streamScript(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	s, err := engine.NewSession(engine.Config{Journal: discard{}, Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	b.ReportAllocs()
	for b.Loop() {
		// The script's two turns alternate: the stream, then "done".
		for range 2 {
			if _, err := s.RunTurn(context.Background(), "go"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// streamScript writes the script of a long stream, 20,000 text deltas
// delay ms apart and the final message, then a second turn.
func streamScript(b *testing.B, delay int) string {
	var sb strings.Builder
	sb.WriteString(`{"type":"session_started"}` + "\n" + `{"cycle":true}` + "\n")
	for i := range 20000 {
		fmt.Fprintf(&sb, `{"type":"text_delta","text":"chunk %05d of the answer.","delay_ms":%d}`+"\n", i, delay)
	}
	fmt.Fprintf(&sb, `{"type":"assistant_message","text":%q}`+"\n", strings.Repeat("x", 200<<10))
	sb.WriteString(`{"end_turn":true}` + "\n" + `{"type":"assistant_message","text":"done"}` + "\n")
	path := filepath.Join(b.TempDir(), "stream.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// discard is a journal that keeps nothing.
type discard struct{}

func (discard) Append(engine.Event) error   { return nil }
func (discard) Flush(context.Context) error { return nil }

package scripted

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkLoadStream loads the script of a long stream, 20,000 text
// deltas and the final message (the shape of the TUI's streaming
// benchmark), and reports what one Load allocates (B/op) and what the
// loaded runtime keeps alive (retained-B): the script is checked, not
// held, so the second stays a few hundred bytes whatever the length.
func BenchmarkLoadStream(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"type":"session_started"}` + "\n" + `{"cycle":true}` + "\n")
	for i := range 20000 {
		fmt.Fprintf(&sb, `{"type":"text_delta","text":"chunk %05d of the answer.","delay_ms":1}`+"\n", i)
	}
	fmt.Fprintf(&sb, `{"type":"assistant_message","text":%q}`+"\n", strings.Repeat("x", 200<<10))
	sb.WriteString(`{"end_turn":true}` + "\n" + `{"type":"assistant_message","text":"done"}` + "\n")
	path := filepath.Join(b.TempDir(), "stream.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
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

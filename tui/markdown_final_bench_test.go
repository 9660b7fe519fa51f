package tui

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/glamour/v2"
)

// BenchmarkFinalRender renders, in process, the 200 KB answer that
// internal/cli's BenchmarkProcessStream delivers as one final message, the
// way kz renders a complete message: split into stable chunks by mdDoc and
// each chunk rendered by glamour at the pty's width (200 columns) in the
// dark theme. It is the final-render half of that whole-program benchmark
// without the process, the pty and the terminal diffing, so a profile of
// it (-cpuprofile, -memprofile) shows the cost of glamour, chroma and
// kz's own set-up alone. Besides ns/op it reports cpu-ms/op, the
// process's user and system CPU time per render (the garbage collector's
// work on other threads included), which is what the whole-program
// benchmark measures and which a loaded machine distorts far less than
// wall time. The "whole" case renders the same document in one
// glamour call, which separates the cost of chunking from the cost of
// rendering.
func BenchmarkFinalRender(b *testing.B) {
	src := processBenchMarkdown(200 << 10)
	style := themeForBench().Markdown
	b.Run("chunked", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		var lines int
		c0 := cpuTime()
		for b.Loop() {
			var d mdDoc
			d.Append(src)
			d.Finish()
			lines = len(d.Lines(newMDRenderer(style), 200, goldenT0, true, false))
		}
		reportCPU(b, c0)
		b.ReportMetric(float64(lines), "lines")
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		c0 := cpuTime()
		for b.Loop() {
			tr, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(200))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tr.Render(src); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, c0)
	})
}

// processBenchMarkdown is internal/cli's benchMarkdown (the answer of
// BenchmarkProcessStream), kept the same byte for byte so that the
// in-process and the whole-program figures measure one document.
func processBenchMarkdown(size int) string {
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

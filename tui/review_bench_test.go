package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// reviewBenchEvents is a 5,000-line change across 50 files (100 changed
// lines each, in hunks of ten) as a proposal and its permission request.
func reviewBenchEvents() (engine.Event, engine.Event) {
	files := bigChange(50, 125) // 12 hunks × 8 changed lines + 2 context ≈ 120 diff lines a file: 6,000 lines in all
	var diff strings.Builder
	paths := make([]string, len(files))
	for i, f := range files {
		diff.WriteString(f.Diff)
		paths[i] = f.Path
	}
	return engine.Event{Type: engine.EventPatchProposed, TurnID: 1, PatchID: "p1", Files: files, Text: "big"},
		engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r1", ToolCallID: "p1", Tool: engine.ToolApplyPatch, Paths: paths, Diff: diff.String()}
}

// BenchmarkReviewFirstFrame measures from the permission request arriving
// to the first frame of its review at 200×60: parsing the whole change,
// building the rows and rendering one screen. Target: 30 ms.
func BenchmarkReviewFirstFrame(b *testing.B) {
	prop, req := reviewBenchEvents()
	if n := strings.Count(req.Diff, "\n"); n < 5000 {
		b.Fatalf("the change has %d lines, want at least 5,000", n)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		m := testModel(b, newFake(), 200, 60)
		m.update(eventsMsg{events: []engine.Event{prop, req}})
		if v := m.View().Content; !strings.Contains(v, "pkg/file0.go") {
			b.Fatal("no review on screen")
		}
	}
	reportCPU(b, cpu0)
}

// reportCPU adds the process's CPU time per operation: on a machine shared
// with other work, wall time (ns/op) also counts the time spent waiting
// for a core.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkReviewHunkNav measures one hunk jump and its frame. Target:
// well under 16 ms (full frame rate).
func BenchmarkReviewHunkNav(b *testing.B) {
	prop, req := reviewBenchEvents()
	m := testModel(b, newFake(), 200, 60)
	m.update(eventsMsg{events: []engine.Event{prop, req}})
	m.View()
	next := keyMsg("]")
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		if i%500 == 499 {
			m.review.dv.top = 0 // back to the start: 600 hunks in all
		}
		m.update(next)
		m.View()
	}
	reportCPU(b, cpu0)
}

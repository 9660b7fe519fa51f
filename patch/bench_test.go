package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ms/op metric next to ns/op. On a machine shared
// with other work, wall time per op grows with the load while the CPU the
// operation itself burns does not; both are reported so a figure can be
// judged against its target honestly.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// benchFiles makes n Go-like files of 200 lines, each with 10 distinct
// edit sites, and the search/replace proposal that edits all of them.
func benchFiles(n int) (map[string][]byte, string) {
	files := map[string][]byte{}
	var prop strings.Builder
	prop.WriteString("SUMMARY: bulk rename\n\n")
	for f := 0; f < n; f++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\n", f)
		for fn := 0; fn < 20; fn++ {
			fmt.Fprintf(&b, "func f%d_%d(x int) int {\n\ty := x * %d\n\tif y > %d {\n\t\treturn y - %d\n\t}\n\treturn y + %d\n}\n\n", f, fn, fn, fn, f, fn)
			if fn%2 == 0 {
				fmt.Fprintf(&prop, "pkg/p%d/f.go\n<<<<<<< SEARCH\nfunc f%d_%d(x int) int {\n\ty := x * %d\n=======\nfunc f%d_%d(x int) int {\n\ty := x * %d * 2\n>>>>>>> REPLACE\n\n", f, f, fn, fn, f, fn, fn)
			}
		}
		files[fmt.Sprintf("pkg/p%d/f.go", f)] = []byte(b.String())
	}
	return files, prop.String()
}

// BenchmarkApply1000EditsIn100Files: parse + validate + apply of a
// 1,000-edit proposal across 100 files, in memory (the applier's own work).
func BenchmarkApply1000EditsIn100Files(b *testing.B) {
	files, text := benchFiles(100)
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime(b)
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		a := &Applier{FS: newMemFS(files), Snapshots: &MemorySnapshots{}, JournalDir: b.TempDir()}
		p, err := Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		if n := countEdits(p); n != 1000 {
			b.Fatalf("%d edits", n)
		}
		plan, err := a.Validate(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Apply(ctx, plan); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply1000EditsIn100FilesDisk is the same on a real directory,
// with every file written by temp + fsync + rename.
func BenchmarkApply1000EditsIn100FilesDisk(b *testing.B) {
	files, text := benchFiles(100)
	ctx := context.Background()
	p, err := Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	// The CPU figure includes the untimed setup writes; wall time here is
	// mostly the fsync of every file and of the journal.
	start := cpuTime(b)
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		for rel, c := range files {
			_ = os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, rel), c, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		a := &Applier{FS: openWorkspace(b, dir), Snapshots: &MemorySnapshots{}, JournalDir: b.TempDir()}
		b.StartTimer()
		plan, err := a.Validate(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Apply(ctx, plan); err != nil {
			b.Fatal(err)
		}
	}
}

func countEdits(p *Proposal) int {
	n := 0
	for _, f := range p.Files {
		n += len(f.Edits)
	}
	return n
}

// BenchmarkPreview10kLines100Hunks: unified diff of a 10,000-line file with
// 100 changed hunks.
func BenchmarkPreview10kLines100Hunks(b *testing.B) {
	var oldB, newB strings.Builder
	for i := 0; i < 10000; i++ {
		line := fmt.Sprintf("line %d: some typical source text with tokens %d\n", i, i*7)
		oldB.WriteString(line)
		if i%100 == 50 {
			fmt.Fprintf(&newB, "line %d: CHANGED text %d\n", i, i)
			continue
		}
		newB.WriteString(line)
	}
	oldC, newC := []byte(oldB.String()), []byte(newB.String())
	b.ReportAllocs()
	start := cpuTime(b)
	defer func() { reportCPU(b, start) }()
	plan := &Plan{Files: []PlannedFile{{Path: "f", Operation: OpModify, Existed: true, OldContent: oldC, NewContent: newC}}}
	for b.Loop() {
		d := Preview(plan)[0]
		if d.Added != 100 || d.Removed != 100 || strings.Count(d.Diff, "@@ -") != 100 {
			b.Fatalf("added %d removed %d hunks %d", d.Added, d.Removed, strings.Count(d.Diff, "@@ -"))
		}
	}
}

package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// twoHunkFile has two regions far enough apart to be two hunks, CRLF line
// endings and no newline at the end.
func twoHunkFile() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\r\n")
	}
	return b.String() + "last"
}

// keepHunks selects the hunks keep of the file path, and the other files
// of the proposal whole.
func keepHunks(p *prepared, path string, keep ...int) engine.PatchSelection {
	var sel engine.PatchSelection
	for _, f := range p.Files() {
		fs := engine.FileSelection{Path: f.Path}
		if f.Path == path {
			fs.Hunks = keep
		}
		sel.Files = append(sel.Files, fs)
	}
	return sel
}

func TestSelectHunksAppliesOnlyTheKeptOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		keep []int
		want func(old string) string
	}{
		{"first only", []int{0}, func(old string) string { return strings.Replace(old, "line 3\r\n", "line C\r\n", 1) }},
		{"second only", []int{1}, func(old string) string { return strings.Replace(old, "last", "LAST\r\nmore", 1) }},
		{"both", []int{0, 1}, func(old string) string {
			return strings.Replace(strings.Replace(old, "line 3\r\n", "line C\r\n", 1), "last", "LAST\r\nmore", 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			old := twoHunkFile()
			writeFiles(t, work, map[string]string{"f.txt": old})
			a, snaps := newTestApplier(t, work)
			r := &Reviewer{Applier: a}
			p, err := r.Prepare(ctx, SR3("f.txt", "line 3\r", "line C\r")+SR3("f.txt", "last", "LAST\r\nmore"))
			if err != nil {
				t.Fatal(err)
			}
			if d := p.Files()[0].Diff; strings.Count(d, "@@ -") != 2 {
				t.Fatalf("want a two-hunk diff:\n%s", d)
			}
			pp := p.(*prepared)
			if got := diff.FileHunks(pp.Files()[0].Diff); len(got) != 2 {
				t.Fatalf("the diff text reads as %d hunks: %+v", len(got), got)
			}
			applied, err := pp.Apply(ctx, keepHunks(pp, "f.txt", tc.keep...))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(work, "f.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want(old) {
				t.Fatalf("file = %q\nwant   %q", got, tc.want(old))
			}
			if n := strings.Count(applied[0].Diff, "@@ -"); n != len(tc.keep) {
				t.Errorf("the applied diff has %d hunks, want %d:\n%s", n, len(tc.keep), applied[0].Diff)
			}
			if snaps.Last() == "" {
				t.Error("no snapshot: the partial change could not be undone")
			}
		})
	}
}

func TestSelectHunksRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"f.txt": twoHunkFile()})
	a, _ := newTestApplier(t, work)
	r := &Reviewer{Applier: a}
	p, err := r.Prepare(ctx, SR3("f.txt", "line 3\r", "line C\r")+SR3("f.txt", "last", "LAST")+SR3("n.txt", "", "new"))
	if err != nil {
		t.Fatal(err)
	}
	pp := p.(*prepared)
	for name, sel := range map[string]engine.PatchSelection{
		"hunk out of range": keepHunks(pp, "f.txt", 2),
		"unknown file":      {Files: []engine.FileSelection{{Path: "g.txt", Hunks: []int{0}}}},
		"no hunk kept":      keepHunks(pp, "f.txt", []int{}...),
		"partial add":       {Files: []engine.FileSelection{{Path: "n.txt", Hunks: []int{}}, {Path: "f.txt", Hunks: []int{7}}}},
	} {
		if _, err := pp.Apply(ctx, sel); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
	// The file changed after validation: the selection is refused as stale,
	// like any apply.
	if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = pp.Apply(ctx, keepHunks(pp, "f.txt", 0))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Kind != RefusedStale {
		t.Fatalf("stale file: %v", err)
	}
}

func TestApplyContentsWritesTheEditedContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"f.txt": twoHunkFile()})
	a, _ := newTestApplier(t, work)
	r := &Reviewer{Applier: a}
	p, err := r.Prepare(ctx, SR3("f.txt", "line 3\r", "line C\r"))
	if err != nil {
		t.Fatal(err)
	}
	pp := p.(*prepared)
	edited := func(path, content string) engine.PatchSelection {
		return engine.PatchSelection{Files: []engine.FileSelection{{Path: path, Content: []byte(content)}}}
	}
	if _, err := pp.Apply(ctx, edited("g.txt", "x")); err == nil {
		t.Fatal("content for a file outside the proposal was written")
	}
	applied, err := pp.Apply(ctx, edited("f.txt", "by hand\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(work, "f.txt"))
	if string(got) != "by hand\n" || !strings.Contains(applied[0].Diff, "+by hand") {
		t.Fatalf("file %q, diff %s", got, applied[0].Diff)
	}
}

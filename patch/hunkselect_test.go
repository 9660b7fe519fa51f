package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

func TestSelectHunksAppliesOnlyTheKeptOnes(t *testing.T) {
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
			applied, err := p.(*prepared).ApplyHunks(ctx, nil, map[string][]int{"f.txt": tc.keep})
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
	for name, keep := range map[string]map[string][]int{
		"hunk out of range": {"f.txt": {2}},
		"unknown file":      {"g.txt": {0}},
		"partial add":       {"n.txt": {}, "f.txt": {7}},
	} {
		if _, err := pp.ApplyHunks(ctx, nil, keep); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
	if _, err := pp.ApplyHunks(ctx, []string{"n.txt"}, map[string][]int{"f.txt": {0}}); err == nil {
		t.Error("a hunk selection of a rejected file was applied")
	}
	// The file changed after validation: the selection is refused as stale,
	// like any apply.
	if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = pp.ApplyHunks(ctx, nil, map[string][]int{"f.txt": {0}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Kind != RefusedStale {
		t.Fatalf("stale file: %v", err)
	}
}

func TestApplyContentsWritesTheEditedContent(t *testing.T) {
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
	if _, err := pp.ApplyContents(ctx, nil, nil, map[string]string{"g.txt": "x"}); err == nil {
		t.Fatal("content for a file outside the proposal was written")
	}
	applied, err := pp.ApplyContents(ctx, nil, nil, map[string]string{"f.txt": "by hand\n"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(work, "f.txt"))
	if string(got) != "by hand\n" || !strings.Contains(applied[0].Diff, "+by hand") {
		t.Fatalf("file %q, diff %s", got, applied[0].Diff)
	}
}

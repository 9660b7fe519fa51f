package tui

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/tools/workspace"
)

// threeEditProposal is a SEARCH/REPLACE proposal of three edits of app.txt
// (crlfSource) far enough apart to be three hunks.
func threeEditProposal() string {
	var b strings.Builder
	b.WriteString("SUMMARY: three edits\n\n")
	for _, e := range [][2]string{{"line 3", "line three"}, {"line 15", "line fifteen"}, {"line 28", "line twenty-eight"}} {
		b.WriteString("app.txt\n<<<<<<< SEARCH\n" + e[0] + "\r\n=======\n" + e[1] + "\r\n>>>>>>> REPLACE\n")
	}
	return b.String()
}

// TestReviewHunksAreTheAppliersHunks prepares a real three-hunk proposal
// with kz's patch reviewer, reviews it with keys (the middle hunk
// rejected) and applies the answer's selection with the prepared patch.
// The review's hunks are diff.FileHunks of the file's diff, the very list
// the applier indexes, so the numbers agree by construction; the file on
// disk then holds exactly the first and the third edit, which is also
// what diff.Apply makes of the review's own hunks with the same choice.
func TestReviewHunksAreTheAppliersHunks(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	file := filepath.Join(work, "app.txt")
	orig := crlfSource()
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	a := &patch.Applier{FS: ws, Snapshots: &patch.MemorySnapshots{}, JournalDir: filepath.Join(t.TempDir(), "journal")}
	p, err := (&patch.Reviewer{Applier: a}).Prepare(ctx, threeEditProposal())
	if err != nil {
		t.Fatal(err)
	}
	files := p.Files()
	var all strings.Builder
	for _, f := range files {
		all.WriteString(f.Diff)
	}
	prop := engine.Event{Type: engine.EventPatchProposed, TurnID: 1, PatchID: p.ID(), Files: files, Text: p.Summary()}
	req := engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r1", ToolCallID: p.ID(),
		Tool: engine.ToolApplyPatch, Paths: p.Paths(), Diff: all.String()}

	f := newFake()
	m := testModel(t, f, 120, 40)
	m.hunkSelect = true
	m.feed(prop, req)
	if m.review == nil || len(m.review.files) != 1 {
		t.Fatal("no review of one file")
	}
	shown := m.review.files[0].hunks
	if len(shown) != 3 || !reflect.DeepEqual(shown, diff.FileHunks(files[0].Diff)) {
		t.Fatalf("the review's hunks are not the applier's: %+v", shown)
	}
	m.press("]")
	if s := m.screen(); !strings.Contains(s, "hunk 2/3") {
		t.Fatalf("not on hunk 2:\n%s", s)
	}
	m.press("x", "y")
	_, ans := lastAnswer(t, f)
	if ans.Decision != engine.DecisionAllow || ans.Patch == nil || len(ans.UpdatedInput) != 0 {
		t.Fatalf("answer %+v", ans)
	}
	if got := describeSelection(ans.Patch); got != "app.txt[0 2]" {
		t.Fatalf("selection %s", got)
	}
	applied, err := p.Apply(ctx, *ans.Patch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("line 3\r\n", "line three\r\n", "line 28\r\n", "line twenty-eight\r\n").Replace(orig)
	if string(got) != want {
		t.Fatalf("file after the partial apply:\n%q\nwant\n%q", got, want)
	}
	byReview, err := diff.Apply([]byte(orig), shown, func(i int) bool { return i != 1 })
	if err != nil || string(byReview) != want {
		t.Fatalf("the review's hunks with the same choice give %q (%v)", byReview, err)
	}
	if n := len(diff.FileHunks(applied[0].Diff)); n != 2 {
		t.Errorf("the applied diff has %d hunks, want 2:\n%s", n, applied[0].Diff)
	}
}

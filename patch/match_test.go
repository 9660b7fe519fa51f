package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lines(s string) []string { return parseDoc([]byte(s)).lines }

func TestLadderStepsAndRefusals(t *testing.T) {
	file := lines("func a() {\n\tx := 1\n\treturn x\n}\n\nfunc b() {\n\tx := 1\n\treturn x\n}\n")
	cases := []struct {
		name     string
		edit     Edit
		hint     int
		wantStep Step
		wantKind RefusalKind
	}{
		{"exact unique", Edit{Search: "func b() {\n", Replace: "func c() {\n"}, -1, StepExact, ""},
		{"two places, no hint", Edit{Search: "\tx := 1\n", Replace: "\tx := 2\n"}, -1, "", RefusedAmbiguous},
		{"two places, hint on the second", Edit{Search: "\tx := 1\n", Replace: "\tx := 2\n"}, 6, StepExact, ""},
		{"two places, hint too far to trust", Edit{Search: "\tx := 1\n", Replace: "\tx := 2\n"}, 40, "", RefusedAmbiguous},
		{"hint halfway between", Edit{Search: "\tx := 1\n", Replace: "\tx := 2\n"}, 3, "", RefusedAmbiguous},
		{"anchor picks", Edit{Search: "\tx := 1\n", Replace: "\tx := 2\n", Anchor: "func b() {"}, -1, StepExact, ""},
		{"indentation with an un-dedentable replacement", Edit{Search: "\t\tx := 1\n\t\treturn x\n", Replace: "x := 2\n"}, -1, "", RefusedNoMatch},
		{"placeholder in replacement", Edit{Search: "func a() {\n", Replace: "func a() {\n// ... rest of the function\n"}, -1, "", RefusedPlaceholder},
		{"no context", Edit{Search: "", Replace: "x\n"}, -1, "", RefusedNoMatch},
		{"append at EOF", Edit{Search: "", Replace: "// end\n", AtEOF: true}, -1, StepAppend, ""},
		{"absent", Edit{Search: "func z() {\n", Replace: "func y() {\n"}, -1, "", RefusedNoMatch},
	}
	for _, c := range cases {
		loc, prob := locateEdit(file, c.edit, c.hint)
		switch {
		case c.wantKind != "":
			if prob == nil || prob.Kind != c.wantKind {
				t.Errorf("%s: got %+v %+v, want refusal %s", c.name, loc, prob, c.wantKind)
			}
		case prob != nil:
			t.Errorf("%s: refused: %+v", c.name, prob)
		case loc.step != c.wantStep:
			t.Errorf("%s: step %s, want %s", c.name, loc.step, c.wantStep)
		}
	}
	// The chosen place must be the one the hint points at.
	loc, _ := locateEdit(file, Edit{Search: "\tx := 1\n", Replace: "\tx := 2\n"}, 6)
	if loc.start != 6 {
		t.Errorf("hint picked line %d, want 7", loc.start+1)
	}
}

func TestElisionNeedsOneChain(t *testing.T) {
	file := lines("start\na\nb\nend\nstart\nc\nend\n")
	// "start … end" completes from both starts: ambiguous.
	if _, p := locateEdit(file, Edit{Search: "start\n...\nend\n", Replace: "START\n...\nend\n"}, -1); p == nil || p.Kind != RefusedAmbiguous {
		t.Fatalf("want ambiguous, got %+v", p)
	}
	loc, p := locateEdit(file, Edit{Search: "start\na\n...\nend\n", Replace: "START\na\n...\nEND\n"}, -1)
	if p != nil || loc.step != StepElision {
		t.Fatalf("%+v %+v", loc, p)
	}
	d := parseDoc([]byte("start\na\nb\nend\nstart\nc\nend\n"))
	d.splice(loc.start, loc.n, loc.repl, loc.from)
	if got := string(d.bytes()); got != "START\na\nb\nEND\nstart\nc\nend\n" {
		t.Fatalf("got %q", got)
	}
	// Markers that do not pair up are placeholders, never guesses.
	if _, p := locateEdit(file, Edit{Search: "start\n...\nend\n", Replace: "START\nend\n"}, -1); p == nil || p.Kind != RefusedPlaceholder {
		t.Fatalf("want placeholder refusal, got %+v", p)
	}
}

func TestFeedbackShowsNearestLines(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.go": "package a\n\nfunc Sum(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n"})
	a, _ := newTestApplier(t, work)
	p, _ := Parse(SR3("a.go", "\ttotal := 0\n\tfor i := range xs {\n\t\ttotal += x", "\ttotal := 1"))
	_, err := a.Validate(context.Background(), p)
	fb := FormatFeedback(err)
	for _, want := range []string{"a.go, edit 1", "not found", "4 | \ttotal := 0", "6 | \t\ttotal += x", "NOT applied"} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
}

// TestFeedbackNearestLinesWithoutSharedLines: when no line of the search
// text is in the file (the model misremembered every line), the nearest
// lines are the window sharing the most words. It is only shown.
func TestFeedbackNearestLinesWithoutSharedLines(t *testing.T) {
	file := lines("package a\n\n// Greeting says hello.\nfunc Greeting() string {\n\treturn \"hello moon\"\n}\n\nfunc Other() {}\n")
	_, prob := locateEdit(file, Edit{Search: "func Greeting() string {\n\treturn \"hello mars\"\n}\n", Replace: "x\n"}, -1)
	if prob == nil || prob.Kind != RefusedNoMatch {
		t.Fatalf("want no_match, got %+v", prob)
	}
	var shown []string
	for _, n := range prob.Nearest {
		shown = append(shown, fmt.Sprintf("%d|%s", n.Line, n.Text))
	}
	if got := strings.Join(shown, "\n"); !strings.Contains(got, "4|func Greeting() string {") || !strings.Contains(got, "5|\treturn \"hello moon\"") {
		t.Fatalf("nearest = %+v", prob.Nearest)
	}
	_, prob = locateEdit(file, Edit{Search: "zzz qqq\n", Replace: "x\n"}, -1)
	if prob == nil || len(prob.Nearest) != 0 {
		t.Fatalf("unrelated search got nearest lines %+v", prob)
	}
}

func TestRetryPolicy(t *testing.T) {
	var def RetryPolicy
	if !def.Allow(1) || !def.Allow(2) || def.Allow(3) {
		t.Error("default policy should allow exactly 2 retries")
	}
	if (RetryPolicy{MaxRetries: -1}).Allow(1) {
		t.Error("negative disables retries")
	}
}

func TestPlanSelect(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	a, _ := newTestApplier(t, work)
	p, _ := Parse(SR3("a.txt", "a", "A") + SR3("b.txt", "b", "B"))
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := plan.Select("b.txt")
	if err != nil || len(sub.Files) != 1 {
		t.Fatal(sub, err)
	}
	if _, err := a.Apply(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	got := readTree(t, work)
	if string(got["a.txt"].content) != "a\n" || string(got["b.txt"].content) != "B\n" {
		t.Fatalf("%v", got)
	}
	if _, err := plan.Select("nope.txt"); err == nil {
		t.Fatal("selecting an unknown file succeeded")
	}
}

func TestRecoverSkipsOtherWorkspacesAndBadJournals(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "new\n"})
	a, _ := newTestApplier(t, work)
	other := &journal{Version: 1, ChangeID: "chg_other", Root: "/somewhere/else", Entries: []journalEntry{{Old: fileState{Path: "a.txt", Exists: true, Content: []byte("old\n"), Mode: 0o644}, NewExists: true, NewSHA256: SHA256Hex([]byte("new\n"))}}}
	if _, err := writeJournal(a.JournalDir, other); err != nil {
		t.Fatal(err)
	}
	evil := &journal{Version: 1, ChangeID: "chg_evil", Root: work, Entries: []journalEntry{{Old: fileState{Path: "../outside.txt", Exists: true, Content: []byte("x")}}}}
	root, _ := a.root()
	evil.Root = root
	if _, err := writeJournal(a.JournalDir, evil); err != nil {
		t.Fatal(err)
	}
	ids, err := a.Recover(context.Background())
	if len(ids) != 0 || err == nil {
		t.Fatalf("recover: %v %v (want the bad journal reported, nothing recovered)", ids, err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "new\n" {
		t.Fatalf("another workspace's journal was applied: %q", b)
	}
}

func TestRollbackLeavesForeignEditsAlone(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "someone else's edit\n"})
	a, _ := newTestApplier(t, work)
	root, _ := a.root()
	j := &journal{Version: 1, ChangeID: "chg_x", Root: root, Entries: []journalEntry{{Old: fileState{Path: "a.txt", Exists: true, Content: []byte("old\n"), Mode: 0o644}, NewExists: true, NewSHA256: SHA256Hex([]byte("new\n"))}}}
	if _, err := writeJournal(a.JournalDir, j); err != nil {
		t.Fatal(err)
	}
	_, err := a.Recover(context.Background())
	if err == nil || !strings.Contains(err.Error(), "changed by something else") {
		t.Fatalf("recover: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "someone else's edit\n" {
		t.Fatalf("foreign edit overwritten: %q", b)
	}
}

// TestPreviewDiff: Preview renders each planned file as a unified diff
// with its stats; a file with nothing to show renders as "", a mode change
// as its two mode lines.
func TestPreviewDiff(t *testing.T) {
	t.Parallel()
	plan := &Plan{Files: []PlannedFile{
		{Path: "f", Operation: OpModify, Existed: true, OldContent: []byte("a\nb\nc\n"), NewContent: []byte("a\nB\nc\nd")},
		{Path: "same", Operation: OpModify, Existed: true, OldContent: []byte("same\n"), NewContent: []byte("same\n")},
		{Path: "n", Operation: OpAdd, NewContent: []byte("x\n")},
		{Path: "run.sh", Operation: OpModify, Existed: true, OldContent: []byte("x\n"), NewContent: []byte("x\n"), OldMode: 0o644, NewMode: 0o755},
	}}
	ds := Preview(plan)
	want := "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n\\ No newline at end of file\n"
	if ds[0].Diff != want || ds[0].Added != 2 || ds[0].Removed != 1 {
		t.Fatalf("got %q (+%d -%d)", ds[0].Diff, ds[0].Added, ds[0].Removed)
	}
	if ds[1].Diff != "" {
		t.Fatalf("identical contents gave %q", ds[1].Diff)
	}
	if ds[2].Diff != "--- /dev/null\n+++ b/n\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Fatalf("new file: %q", ds[2].Diff)
	}
	if ds[3].Diff != "old mode 100644\nnew mode 100755\n" {
		t.Fatalf("mode change: %q", ds[3].Diff)
	}
}

func TestValidateRefusesTooManyFiles(t *testing.T) {
	a, _ := newTestApplier(t, t.TempDir())
	p := &Proposal{}
	for i := 0; i <= MaxFiles; i++ {
		p.Files = append(p.Files, FileChange{Path: "f", Operation: OpDelete})
	}
	if _, err := a.Validate(context.Background(), p); !errors.Is(err, ErrRefused) {
		t.Fatal(err)
	}
}

// TestUnicodeStepNormalisesInTheFilesDirection: new lines are normalised
// to ASCII only when the matched file lines are ASCII (the model's
// typographic marks were the corruption); a file that uses typographic
// marks itself receives the new lines exactly as the model wrote them.
func TestUnicodeStepNormalisesInTheFilesDirection(t *testing.T) {
	ascii := lines("msg := \"it's\"\nother()\n")
	loc, p := locateEdit(ascii, Edit{Search: "msg := \u201cit\u2019s\u201d\n", Replace: "msg := \u201cit\u2019s fine\u201d\n"}, -1)
	if p != nil || loc.step != StepUnicode || loc.repl[0] != "msg := \"it's fine\"" {
		t.Fatalf("ascii file: %+v %+v", loc, p)
	}
	fancy := lines("The \u201cquick\u201d fox\nend\n")
	loc, p = locateEdit(fancy, Edit{Search: "The \"quick\" fox\n", Replace: "The \u201cquick\u201d brown fox\n"}, -1)
	if p != nil || loc.step != StepUnicode || loc.repl[0] != "The \u201cquick\u201d brown fox" {
		t.Fatalf("typographic file: %+v %+v", loc, p)
	}
}

package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// reviewProposal is a patch proposal with everything a review must
// survive: CRLF lines, two hunks with an intra-line change, a very long
// line, a binary file and a rename.
func reviewProposal() (engine.Event, engine.Event) {
	files := []engine.FileChange{
		{Path: "main.go", Operation: "modify", Added: 3, Removed: 2, Diff: "--- a/main.go\n+++ b/main.go\n" +
			"@@ -1,4 +1,4 @@\r\n package main\r\n \r\n-var greeting = \"hello\"\r\n+var greeting = \"hello, world\"\r\n func main() {}\r\n" +
			"@@ -20,3 +20,4 @@ func helper() {\n \tx := 1\n-\treturn x\n+\ty := 2\n+\treturn x + y\n }\n\\ No newline at end of file\n"},
		{Path: "notes.txt", Operation: "modify", Added: 1, Removed: 1, Diff: "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-short\n+" +
			strings.Repeat("a very long line ", 20) + "END\n"},
		{Path: "logo.png", Operation: "modify", Diff: "diff --git a/logo.png b/logo.png\nindex 1234567..89abcde 100644\nBinary files a/logo.png and b/logo.png differ\n"},
		{Path: "new/name.go", Operation: "rename", Added: 1, Removed: 1, Diff: "diff --git a/old/name.go b/new/name.go\nsimilarity index 90%\nrename from old/name.go\nrename to new/name.go\n" +
			"--- a/old/name.go\n+++ b/new/name.go\n@@ -1,2 +1,2 @@\n-package old\n+package name\n // Name names.\n"},
	}
	var diff strings.Builder
	paths := make([]string, 0, len(files))
	for _, f := range files {
		diff.WriteString(f.Diff)
		paths = append(paths, f.Path)
	}
	prop := engine.Event{Type: engine.EventPatchProposed, TurnID: 1, PatchID: "p1", Files: files, Text: "Greet the world", Command: "go test ./..."}
	req := engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r1", ToolCallID: "p1", Tool: engine.ToolApplyPatch,
		Paths: paths, Diff: diff.String()}
	return prop, req
}

// TestGoldenReview renders the review of reviewProposal (CRLF, a very
// long line, a binary file, a rename) unified and split at two widths
// each, in the dark and the light theme: the text goldens are shared by
// both themes (colour stripped), the styled goldens keep every escape
// sequence per theme, so a change of colour or emphasis shows too.
func TestGoldenReview(t *testing.T) {
	prop, req := reviewProposal()
	for _, name := range []string{"dark", "light"} {
		th := themes.MustResolve(name, false)
		for _, w := range []int{80, 140} {
			r := newReview(req, &prop, &th, false)
			v := r.view(&th, w, 60, 0)
			golden(t, "review_unified", w, v)
			goldenStyled(t, "review_unified_"+name, w, v)
		}
		for _, w := range []int{110, 160} {
			r := newReview(req, &prop, &th, false)
			r.dv.layout = layoutSplit
			v := r.view(&th, w, 60, 0)
			golden(t, "review_split", w, v)
			goldenStyled(t, "review_split_"+name, w, v)
		}
	}
}

// goldenStyled compares a view with its escape sequences (ESC shown as ␛)
// with testdata/tui/golden/<name>_<width>.styled.golden.
func goldenStyled(t *testing.T, name string, width int, view string) {
	t.Helper()
	got := strings.ReplaceAll(view, "\x1b", "␛") + "\n"
	path := filepath.Join("..", "testdata", "tui", "golden", fmt.Sprintf("%s_%d.styled.golden", name, width))
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -run Golden -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s at width %d differs from %s at line %d:\n got %q\nwant %q", name, width, path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s at width %d differs from %s in length", name, width, path)
	}
}

// TestReviewThemesColourDiffers checks that dark and light really render
// different colours (the goldens strip them).
func TestReviewThemesColourDiffers(t *testing.T) {
	prop, req := reviewProposal()
	dark, light := themes.MustResolve("dark", false), themes.MustResolve("light", false)
	a := newReview(req, &prop, &dark, false).view(&dark, 100, 44, 0)
	b := newReview(req, &prop, &light, false).view(&light, 100, 44, 0)
	if a == b {
		t.Fatal("dark and light reviews render the same bytes")
	}
	if ansi.Strip(a) != ansi.Strip(b) {
		t.Fatal("dark and light reviews differ in text, not only colour")
	}
	if !strings.Contains(a, bgHex("#73282d")) {
		t.Error("dark review has no intra-line emphasis of the removed text")
	}
	nc := themes.MustResolve("dark", true)
	plain := newReview(req, &prop, &nc, false).view(&nc, 100, 40, 0)
	if strings.Contains(plain, "38;2;") || strings.Contains(plain, "48;2;") {
		t.Error("NO_COLOR review still has colours")
	}
}

func TestParseUnified(t *testing.T) {
	prop, req := reviewProposal()
	fs := filesFromChanges(prop.Files)
	if len(fs) != 4 {
		t.Fatalf("got %d files", len(fs))
	}
	if len(fs[0].hunks) != 2 || fs[0].hunks[0].Lines[0].EOL() != "\r\n" || fs[0].hunks[1].Lines[0].EOL() != "\n" {
		t.Errorf("main.go: hunks %d, CRLF not recorded per line: %+v", len(fs[0].hunks), fs[0].hunks)
	}
	l := fs[0].hunks[1].Lines
	if n := numberLines(fs[0].hunks[1]); l[len(l)-1].EOL() != "" || n[1].old != 21 || n[2].new != 21 {
		t.Errorf("main.go second hunk numbers or no-EOL wrong: %+v", l)
	}
	if !fs[2].binary || len(fs[2].hunks) != 0 {
		t.Errorf("logo.png not binary: %+v", fs[2])
	}
	if fs[3].oldPath != "old/name.go" || fs[3].op != "rename" {
		t.Errorf("rename lost: %+v", fs[3])
	}
	// The request's concatenated diff parses into the same files.
	fromReq := filesFromDiff(req.Diff, req.Paths)
	if len(fromReq) != 4 || fromReq[3].path != "new/name.go" || fromReq[1].added != 1 {
		t.Errorf("request diff: %+v", fromReq)
	}
	// A headerless diff is one file named by the request.
	bare := filesFromDiff("-x\n+y\n", []string{"a.go"})
	if len(bare) != 1 || bare[0].path != "a.go" || bare[0].added != 1 || bare[0].removed != 1 {
		t.Errorf("headerless diff: %+v", bare)
	}
}

// describeSelection lists a selection's files, each with its kept hunks
// when it has a list, and "(edited)" when it carries content; "whole"
// for no selection.
func describeSelection(sel *engine.PatchSelection) string {
	if sel == nil {
		return "whole"
	}
	var out []string
	for _, f := range sel.Files {
		s := f.Path
		if f.Hunks != nil {
			s += fmt.Sprint(f.Hunks)
		}
		if f.Content != nil {
			s += "(edited)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func lastAnswer(t *testing.T, f *fakeSession) (string, engine.Answer) {
	t.Helper()
	for _, c := range f.Calls() {
		if c.method == "Answer" {
			return c.args[0].(string), c.args[1].(engine.Answer)
		}
	}
	t.Fatal("no answer sent")
	return "", engine.Answer{}
}

func TestReviewAcceptSomeFiles(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 120, 40)
	prop, req := reviewProposal()
	m.feed(prop, req)
	if s := m.screen(); !strings.Contains(s, "Permission needed: apply_patch") || !strings.Contains(s, "Greet the world") {
		t.Fatalf("no review on screen:\n%s", s)
	}
	// Reject the second file: tab moves to it, space toggles.
	m.press("tab", "space", "y")
	id, a := lastAnswer(t, f)
	if id != "r1" || a.Decision != engine.DecisionAllow {
		t.Fatalf("answer %s %+v", id, a)
	}
	if got := describeSelection(a.Patch); got != "main.go,logo.png,new/name.go" {
		t.Errorf("selection %+v", a.Patch)
	}
	if m.review != nil || m.dialog.active() {
		t.Error("review still open after the answer")
	}
}

func TestReviewAllAcceptedSendsNoSelection(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 120, 40)
	prop, req := reviewProposal()
	m.feed(prop, req)
	m.press("y")
	_, a := lastAnswer(t, f)
	if a.Decision != engine.DecisionAllow || a.Patch != nil {
		t.Errorf("answer %+v", a)
	}
}

func TestReviewRejectEveryFileDenies(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 120, 40)
	prop, req := reviewProposal()
	m.feed(prop, req)
	for range 4 {
		m.press("space", "tab")
	}
	m.press("y")
	_, a := lastAnswer(t, f)
	if a.Decision != engine.DecisionDeny {
		t.Errorf("answer %+v", a)
	}
}

func TestReviewDenyWithMessage(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 120, 40)
	prop, req := reviewProposal()
	m.feed(prop, req)
	m.press("m")
	m.typeText("keep hello")
	m.press("enter")
	_, a := lastAnswer(t, f)
	if a.Decision != engine.DecisionDeny || a.Feedback != "keep hello" {
		t.Errorf("answer %+v", a)
	}
}

func TestReviewHunks(t *testing.T) {
	prop, req := reviewProposal()
	t.Run("refused without engine support", func(t *testing.T) {
		f := newFake()
		m := testModel(t, f, 120, 40)
		m.feed(prop, req)
		m.press("]", "x")
		if s := m.screen(); !strings.Contains(s, "per-hunk accept is not supported") {
			t.Fatalf("no refusal:\n%s", s)
		}
		m.press("y")
		_, a := lastAnswer(t, f)
		if a.Patch != nil {
			t.Errorf("a hunk selection was sent: %+v", a.Patch)
		}
	})
	t.Run("selected with engine support", func(t *testing.T) {
		f := newFake()
		m := testModel(t, f, 120, 40)
		m.hunkSelect = true
		m.feed(prop, req)
		// The review opens on the first hunk: ] goes to the second;
		// reject it.
		m.press("]")
		if s := m.screen(); !strings.Contains(s, "file 1/4 · hunk 2/2") {
			t.Fatalf("not on hunk 2:\n%s", s)
		}
		m.press("x")
		if s := m.screen(); !strings.Contains(s, "✗ hunk rejected @@ -20,3") || !strings.Contains(s, "◐ M main.go") {
			t.Fatalf("hunk not marked:\n%s", s)
		}
		// The only hunk of notes.txt rejected: nothing of the file is
		// applied, and the list says so.
		m.press("]", "x")
		if s := m.screen(); !strings.Contains(s, "✗ M notes.txt") {
			t.Fatalf("a file with every hunk rejected is not marked ✗:\n%s", s)
		}
		m.press("y")
		_, a := lastAnswer(t, f)
		if got := describeSelection(a.Patch); got != "main.go[0],logo.png,new/name.go" {
			t.Errorf("selection %+v", a.Patch)
		}
	})
}

func TestReviewLayoutToggle(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 150, 40)
	prop, req := reviewProposal()
	m.feed(prop, req)
	m.press("v")
	if s := m.screen(); !strings.Contains(s, "· split") || !strings.Contains(s, "│") {
		t.Fatalf("not split:\n%s", s)
	}
	m.update(teaSize(80, 40))
	if s := m.screen(); !strings.Contains(s, "unified (too narrow for split)") {
		t.Fatalf("no fallback at 80 columns:\n%s", s)
	}
	m.press("v")
	if s := m.screen(); !strings.Contains(s, "· unified") || strings.Contains(s, "too narrow") {
		t.Fatalf("not back to unified:\n%s", s)
	}
}

func TestReviewEditApproval(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 30)
	m.feed(engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r9", Tool: "edit_file", Paths: []string{"main.go"},
		Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-var x = 1\n+var x = 2\n"})
	s := m.screen()
	if !strings.Contains(s, "Permission needed: edit_file") || !strings.Contains(s, "+var x = 2") || strings.Contains(s, "accept/reject file") {
		t.Fatalf("edit review:\n%s", s)
	}
	m.press("s")
	id, a := lastAnswer(t, f)
	if id != "r9" || a.Decision != engine.DecisionAllow || a.Scope != engine.ScopeSession {
		t.Errorf("answer %s %+v", id, a)
	}
}

// TestReviewOfASmallEditFitsAndSaysWhy: the review of a one-hunk edit
// says which stage asked and why (like the plain dialog), names the file
// once, and is only as tall as its diff, so the transcript above stays
// on screen.
func TestReviewOfASmallEditFitsAndSaysWhy(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 40)
	m.feed(engine.Event{Type: engine.EventTextDelta, TurnID: 1, Text: "Fixing the typo in main.go now."})
	m.feed(engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r1", Tool: "edit_file", Paths: []string{"main.go"},
		Stage: "allow", Reason: "edit_file main.go is not allowed by any rule",
		Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-var x = 1\n+var x = 2\n"})
	s := m.screen()
	if !strings.Contains(s, "Asked by the allow rules: edit_file main.go is not allowed by any rule") {
		t.Errorf("the review does not say why it asks:\n%s", s)
	}
	if n := strings.Count(s, "main.go +1 −1") + strings.Count(s, "main.go  +1 −1"); n != 1 {
		t.Errorf("the file is named %d times, want once:\n%s", n, s)
	}
	if strings.Contains(s, "next file") || strings.Contains(s, "next/prev hunk") {
		t.Errorf("one file with one hunk offers keys to move between files or hunks:\n%s", s)
	}
	if !strings.Contains(s, "Fixing the typo") {
		t.Errorf("the transcript is hidden behind a short diff:\n%s", s)
	}
	// Only the border, title, why, file header, rule, hunk header, the
	// two changed lines, position and keys: no padding.
	box := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "│") {
			box++
		}
	}
	if box > 12 {
		t.Errorf("the review of a two-line diff is %d lines tall:\n%s", box, s)
	}
}

// TestReviewScrollReachesEverything pages through a long wrapped line in a
// short view: every part of it must appear on some screen.
func TestReviewScrollReachesEverything(t *testing.T) {
	th := themes.MustResolve("dark", false)
	long := strings.Repeat("x", 2000) + "TAIL"
	v := newDiffView(filesFromDiff("@@ -1 +1 @@\n-a\n+"+long+"\n", []string{"a.txt"}), &th)
	seen := false
	for range 200 {
		if strings.Contains(ansi.Strip(strings.Join(v.view(60, 5), "")), "TAIL") {
			seen = true
			break
		}
		v.scroll(1, 5)
	}
	if !seen {
		t.Fatal("the tail of a long line is never shown")
	}
}

func TestReviewRendersLazily(t *testing.T) {
	th := themes.MustResolve("dark", false)
	v := newDiffView(filesFromChanges(bigChange(50, 100)), &th)
	v.view(120, 40)
	if n := len(v.rendered); n > 45 {
		t.Errorf("rendered %d rows for a 40-line screen", n)
	}
	v.jumpHunk(1)
	v.jumpHunk(1)
	v.view(120, 40)
	if n := len(v.rendered); n > 90 {
		t.Errorf("rendered %d rows after two screens", n)
	}
}

// bigChange is files files of lines changed lines each, in hunks of 10.
func bigChange(files, lines int) []engine.FileChange {
	out := make([]engine.FileChange, files)
	for f := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "--- a/pkg/file%d.go\n+++ b/pkg/file%d.go\n", f, f)
		for h := 0; h < lines/10; h++ {
			fmt.Fprintf(&b, "@@ -%d,7 +%d,7 @@ func f%d() {\n", h*20+1, h*20+1, h)
			b.WriteString("\tctx := context.Background()\n")
			for i := range 4 {
				fmt.Fprintf(&b, "-\tvalue%d := compute(ctx, %d, \"old\")\n", i, i)
			}
			for i := range 4 {
				fmt.Fprintf(&b, "+\tvalue%d := compute(ctx, %d, \"new\")\n", i, i*2)
			}
			b.WriteString("\treturn nil\n")
		}
		out[f] = engine.FileChange{Path: fmt.Sprintf("pkg/file%d.go", f), Operation: "modify", Diff: b.String(), Added: lines / 10 * 4, Removed: lines / 10 * 4}
	}
	return out
}

// TestReviewNeutralisesHostileText checks that escape sequences, bidi
// overrides and zero-width characters in a diff, its paths and its hunk
// headers reach the screen as visible marks, never as terminal codes.
func TestReviewNeutralisesHostileText(t *testing.T) {
	th := themes.MustResolve("dark", false)
	diff := "--- a/x\x1b[2J.go\n+++ b/x\x1b[2J.go\n@@ -1 +1 @@ \x1b]0;pwned\x07\n-ok\n+ok\x1b[2K\r\u202e; rm -rf ~\u200b\n"
	r := newReview(engine.Event{RequestID: "r", Tool: "edit_file", Diff: diff, Paths: []string{"x.go"}}, nil, &th, false)
	v := r.view(&th, 100, 30, 0)
	for _, bad := range []string{"\x1b[2J", "\x1b[2K", "\x1b]0;", "\x07", "\u202e", "\u200b", "\r"} {
		if strings.Contains(v, bad) {
			t.Errorf("the view holds %q", bad)
		}
	}
	plain := ansi.Strip(v)
	for _, want := range []string{"x␛[2J.go", "ok␛[2K␍", "; rm -rf ~"} {
		if !strings.Contains(plain, want) {
			t.Errorf("missing %q in\n%s", want, plain)
		}
	}
}

func TestReviewMouseWheelScrollsTheDiff(t *testing.T) {
	m := testModel(t, newFake(), 100, 24)
	prop, req := reviewProposal()
	m.feed(prop, req)
	m.View()
	before := m.review.dv.top
	m.update(mouseWheel(false))
	m.update(mouseWheel(false))
	if m.review.dv.top == before && m.review.dv.sub == 0 {
		t.Fatal("the wheel did not scroll the diff")
	}
	m.update(mouseWheel(true))
	m.update(mouseWheel(true))
	if m.review.dv.top != before || m.review.dv.sub != 0 {
		t.Fatalf("wheel up did not come back: top %d sub %d", m.review.dv.top, m.review.dv.sub)
	}
}

// TestDialogBoxMatchesLipgloss checks the fast dialog box against
// lipgloss for every theme, with and without colour.
func TestDialogBoxMatchesLipgloss(t *testing.T) {
	prop, req := reviewProposal()
	for _, name := range []string{"dark", "light", "high-contrast"} {
		for _, nc := range []bool{false, true} {
			th := themes.MustResolve(name, nc)
			for _, w := range []int{60, 100, 160} {
				r := newReview(req, &prop, &th, true)
				lines := r.lines(&th, w, 40, 1)
				want := th.Dialog.Width(w).Render(strings.Join(lines, "\n"))
				// Byte for byte, except that a style spanning two lines
				// (the wrapped key line) is closed and not reopened:
				// the same text in the same cells.
				got := dialogBox(&th, w, lines)
				if ansi.Strip(got) != ansi.Strip(want) {
					t.Fatalf("%s (no colour %v) at %d:\n%q\nwant\n%q", name, nc, w, got, want)
				}
				g, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
				for i := range len(wl) - 4 { // all but the key lines and the bottom border
					if g[i] != wl[i] {
						t.Fatalf("%s (no colour %v) at %d, line %d:\n%q\nwant\n%q", name, nc, w, i, g[i], wl[i])
					}
				}
			}
		}
	}
}

// TestReviewFirstBracketGoesToHunkTwo: a fresh review shows the first hunk
// (the status line says hunk 1), so the first ] goes to the second, in one
// file and across files; [ from there goes back to the first.
func TestReviewFirstBracketGoesToHunkTwo(t *testing.T) {
	for _, layout := range []int{120, 150} {
		t.Run(fmt.Sprint(layout), func(t *testing.T) {
			m := testModel(t, newFake(), layout, 40)
			prop, req := reviewProposal()
			m.feed(prop, req)
			if s := m.screen(); !strings.Contains(s, "file 1/4 · hunk 1/2") {
				t.Fatalf("a fresh review is not on hunk 1:\n%s", s)
			}
			m.press("]")
			if s := m.screen(); !strings.Contains(s, "file 1/4 · hunk 2/2") {
				t.Fatalf("the first ] did not go to hunk 2:\n%s", s)
			}
			m.press("[")
			if s := m.screen(); !strings.Contains(s, "file 1/4 · hunk 1/2") {
				t.Fatalf("[ did not go back to hunk 1:\n%s", s)
			}
		})
	}
	// One hunk per file: the first ] goes to the next file's hunk.
	th := themes.MustResolve("dark", false)
	v := newDiffView(filesFromChanges(bigChange(3, 10)), &th)
	v.view(120, 40)
	if f, h := v.hunkAt(); f != 0 || h != 0 {
		t.Fatalf("opens on file %d hunk %d", f, h)
	}
	if idx := v.jumpHunk(1); idx != 1 {
		t.Errorf("the first ] went to hunk index %d, want 1", idx)
	}
}

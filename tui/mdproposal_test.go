package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// proposalAnswer is a patch-proposal answer in each form a model writes
// one: the envelope, a unified diff with a blank context line and a list
// after it, a search/replace block, and metadata lines one under another.
const proposalAnswer = "SUMMARY: greet the world\n" +
	"The greeting was too short.\n\n" +
	"*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\tfmt.Println(\"hi\")\n+\tfmt.Println(\"hello, world\")\n\n*** End Patch\n\n" +
	"--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n # Notes\n\n-- old item\n+- new item\n\n" +
	"- a list item after the diff\n- another\n\n" +
	"util.go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 2\n>>>>>>> REPLACE\n\n" +
	"VERIFY: go test ./...\nVERIFY: go vet ./...\nRISK: the greeting is user-visible\nRISK: none else\n"

// renderAnswer renders an answer streamed in deltas of step bytes.
func renderAnswer(src string, step, width int) (*mdDoc, []string) {
	r := newMDRenderer(themes.MustResolve("dark", true).Markdown)
	d := &mdDoc{}
	for i := 0; i < len(src); i += step {
		d.Append(src[i:min(i+step, len(src))])
	}
	d.Finish()
	var lines []string
	for _, l := range d.Lines(r, width, time.Now(), true, false) {
		lines = append(lines, strings.TrimSpace(ansi.Strip(l)))
	}
	return d, lines
}

// A proposal's edit blocks are shown as code, line for line, however the
// answer was streamed, and its VERIFY and RISK lines stay one per line.
func TestProposalTextRendersAsCode(t *testing.T) {
	for _, step := range []int{len(proposalAnswer), 1, 7} {
		d, lines := renderAnswer(proposalAnswer, step, 80)
		out := strings.Join(lines, "\n")
		for _, want := range []string{"*** Begin Patch", "*** Update File: main.go", "-    fmt.Println(\"hi\")", "*** End Patch",
			"--- a/notes.md", "+++ b/notes.md", "@@ -1,3 +1,3 @@", "-- old item", "+- new item", "<<<<<<< SEARCH", ">>>>>>> REPLACE",
			"VERIFY: go test ./...", "VERIFY: go vet ./...", "RISK: the greeting is user-visible", "RISK: none else",
			"SUMMARY: greet the world", "The greeting was too short."} {
			if !containsLine(lines, want) {
				t.Errorf("step %d: no line %q in\n%s", step, want, out)
			}
		}
		// The list after the diff is markdown again, not removed lines.
		if !containsLine(lines, "• a list item after the diff") {
			t.Errorf("step %d: the list after the diff is not a list:\n%s", step, out)
		}
		// No chunk cut splits the envelope or the diff's hunk.
		for i, c := range d.cuts {
			chunk := proposalAnswer[prevCut(d.cuts, i):c]
			if strings.Count(chunk, "*** Begin Patch") != strings.Count(chunk, "*** End Patch") ||
				(strings.Contains(chunk, "@@ -1,3") && !strings.Contains(chunk, "+- new item")) {
				t.Errorf("step %d: chunk %q splits an edit block", step, chunk)
			}
		}
	}
}

func TestFenceProposalBlocks(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"envelope", "text\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nafter\n",
			"text\n```\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n```\nafter\n"},
		{"envelope cut short", "*** Begin Patch\n*** Add File: a\n+x", "```\n*** Begin Patch\n*** Add File: a\n+x\n```\n"},
		{"git diff", "diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\nDone.\n",
			"```\ndiff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n```\nDone.\n"},
		{"two files", "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-p\n+q\n",
			"```\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-p\n+q\n```\n"},
		{"hunk without counts", "@@ -1 +1 @@ f\n-x\n+y\n\n- item\n", "```\n@@ -1 +1 @@ f\n-x\n+y\n```\n\n- item\n"},
		{"already fenced diff", "```diff\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n```\n", "```diff\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n```\n"},
		{"a rule, not a diff", "---\ntext\n", "---\ntext\n"},
	} {
		if got := fenceEditBlocks(c.in); got != c.want {
			t.Errorf("%s: fenceEditBlocks(%q)\n got %q\nwant %q", c.name, c.in, got, c.want)
		}
	}
}

// Metadata lines are cut out of the markdown around them, one part each,
// outside code blocks only; a part says whether a blank line came first.
func TestSplitMetadata(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"none", "one\ntwo\n", `"one\ntwo\n"`},
		{"after text", "Plan:\nVERIFY: make test\n**Risk:** low\n\nend\n", `"Plan:\n" "VERIFY: make test\n" "**Risk:** low\n" +"\nend\n"`},
		{"after a gap", "text\n\nRISK: x\n", `"text\n\n" +"RISK: x\n"`},
		{"in a fence", "```\nVERIFY: no\n```\nVERIFY: yes\n", "\"```\\nVERIFY: no\\n```\\n\" \"VERIFY: yes\\n\""},
	} {
		var got []string
		for _, p := range splitMetadata(c.in) {
			s := fmt.Sprintf("%q", p.text)
			if p.gap {
				s = "+" + s
			}
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: splitMetadata(%q)\n got %s\nwant %s", c.name, c.in, g, c.want)
		}
	}
}

// TestGoldenProposal renders an answer that proposes a patch: its edit
// blocks as code, its VERIFY and RISK lines one per line.
func TestGoldenProposal(t *testing.T) {
	for _, w := range goldenWidths {
		tr := newTranscript()
		tr.apply(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "Make the greeting friendlier."})
		for i := 0; i < len(proposalAnswer); i += 40 {
			tr.apply(engine.Event{Type: engine.EventTextDelta, TurnID: 1, Text: proposalAnswer[i:min(i+40, len(proposalAnswer))]})
		}
		tr.apply(engine.Event{Type: engine.EventAssistantMessage, TurnID: 1, Text: proposalAnswer})
		golden(t, "proposal", w, strings.Join(tr.view(goldenCtx(w), 200), "\n"))
	}
}

// A proposal's verification command is asked as what it is, not as the
// model's own shell call.
func TestVerificationAskedAsSuch(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 30)
	m.feed(engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r5", ToolCallID: "p1/verify/1", PatchID: "p1",
		Tool: "bash", Command: "go test ./...", Stage: "permission_mode", Reason: "ask before bash"})
	s := m.screen()
	if !strings.Contains(s, "Permission needed: verification of the proposal: go test ./...") {
		t.Fatalf("verification not named:\n%s", s)
	}
	if m.review != nil {
		t.Fatal("a verification command opened the diff review")
	}
	m.press("y")
	if id, a := lastAnswer(t, f); id != "r5" || a.Decision != engine.DecisionAllow {
		t.Errorf("answer %s %+v", id, a)
	}
}

// BenchmarkRenderProposal renders a complete proposal answer (envelope,
// diff, search/replace block, metadata lines) at one width: the cost of
// showing one patch-proposal turn.
func BenchmarkRenderProposal(b *testing.B) {
	r := newMDRenderer(themes.MustResolve("dark", true).Markdown)
	b.ReportAllocs()
	for b.Loop() {
		d := &mdDoc{}
		d.Append(proposalAnswer)
		d.Finish()
		d.Lines(r, 100, time.Now(), true, false)
	}
}

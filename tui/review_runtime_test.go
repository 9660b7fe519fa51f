package tui

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/eventlog"
)

// recordedWrite is the first write request of a recorded session
// (testdata/events, made by each runtime's tests from its real protocol).
func recordedWrite(t *testing.T, name string) engine.Event {
	t.Helper()
	evs, err := eventlog.Load(eventlog.Path("..", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventPermissionRequested && ev.Diff != "" {
			return ev
		}
	}
	t.Fatalf("%s has no write request", name)
	return engine.Event{}
}

// toHunk moves the review to hunk n (1-based) of its first file with ].
func toHunk(t *testing.T, m *Model, n, of int) {
	t.Helper()
	want := "hunk " + itoa(n) + "/" + itoa(of)
	for range n + 1 {
		if strings.Contains(m.screen(), want) {
			return
		}
		m.press("]")
	}
	t.Fatalf("not on %s:\n%s", want, m.screen())
}

func itoa(n int) string { return string(rune('0' + n)) }

// Every runtime's write opens the same interactive review, never the
// plain dialog: Claude Code's Edit, Codex's file change and Gemini's
// write, as their runtimes really send them.
func TestEveryRuntimesWriteOpensTheReview(t *testing.T) {
	for _, tc := range []struct {
		recording, tool, file string
		hunks                 int
	}{
		{"claude-code.edit-review", "Edit", "a.txt", 2},
		{"codex.approval-allow", "apply_patch", "added_by_patch.txt", 1},
		{"gemini.approval-allow", "write_file", "written_by_fake.txt", 1},
	} {
		t.Run(tc.recording, func(t *testing.T) {
			f := newFake()
			m := testModel(t, f, 100, 40)
			m.feed(recordedWrite(t, tc.recording))
			if m.review == nil {
				t.Fatalf("no review:\n%s", m.screen())
			}
			toHunk(t, m, 1, tc.hunks)
			s := m.screen()
			for _, want := range []string{"Permission needed: " + tc.tool, "file 1/1 · hunk 1/" + itoa(tc.hunks) + " · unified", tc.file} {
				if !strings.Contains(s, want) {
					t.Errorf("no %q in the review:\n%s", want, s)
				}
			}
			m.press("v")
			if s := m.screen(); !strings.Contains(s, "split") {
				t.Errorf("no split layout:\n%s", s)
			}
		})
	}
}

// Claude Code takes part of an edit: rejecting its first hunk answers
// with the second kept, named as the runtime names the file. (The
// runtime's real-CLI test lands exactly that answer on disk.)
func TestClaudeEditReviewRejectsOneHunk(t *testing.T) {
	for _, tc := range []struct {
		reject int
		want   string
	}{{1, "a.txt[1]"}, {2, "a.txt[0]"}} {
		f := newFake()
		m := testModel(t, f, 100, 40)
		m.feed(recordedWrite(t, "claude-code.edit-review"))
		toHunk(t, m, tc.reject, 2)
		m.press("x")
		if s := m.screen(); !strings.Contains(s, "✗ hunk rejected") || !strings.Contains(s, "◐ M a.txt") {
			t.Fatalf("hunk %d not marked:\n%s", tc.reject, s)
		}
		m.press("y")
		id, a := lastAnswer(t, f)
		if id != "r1" || a.Decision != engine.DecisionAllow || describeSelection(a.Patch) != tc.want {
			t.Errorf("reject hunk %d: answer %s %+v, selection %s", tc.reject, id, a, describeSelection(a.Patch))
		}
	}
}

// A write whose every hunk is rejected is denied, not allowed empty; a
// write taken whole carries no selection and keeps its scope.
func TestWriteReviewWholeAndNothing(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 40)
	m.feed(recordedWrite(t, "gemini.approval-allow"))
	toHunk(t, m, 1, 1)
	m.press("x", "y")
	if _, a := lastAnswer(t, f); a.Decision != engine.DecisionDeny {
		t.Errorf("every hunk rejected: %+v", a)
	}
	f = newFake()
	m = testModel(t, f, 100, 40)
	m.feed(recordedWrite(t, "claude-code.edit-review"))
	m.press("s")
	if _, a := lastAnswer(t, f); a.Decision != engine.DecisionAllow || a.Scope != engine.ScopeSession || a.Patch != nil {
		t.Errorf("whole write for the session: %+v", a)
	}
}

// Codex answers an approval with accept or decline only: the review
// opens, a hunk or file mark is refused with the reason, and accepting
// takes the whole file.
func TestCodexReviewRefusesMarks(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 40)
	m.feed(recordedWrite(t, "codex.approval-allow"))
	toHunk(t, m, 1, 1)
	for _, k := range []string{"x", "space"} {
		m.press(k)
		s := m.screen()
		if !strings.Contains(s, "codex applies the whole file: accept or reject it whole") || strings.Contains(s, "hunk rejected") {
			t.Fatalf("%s: no refusal:\n%s", k, s)
		}
	}
	m.press("y")
	id, a := lastAnswer(t, f)
	if id != "r2" || a.Decision != engine.DecisionAllow || a.Patch != nil {
		t.Errorf("answer %s %+v", id, a)
	}
}

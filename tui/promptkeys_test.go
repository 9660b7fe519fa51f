package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// manualClock makes the model's clock stand still; the test moves it.
func manualClock(m *Model) *time.Time {
	c := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return c }
	return &c
}

// typeAt types s one key every gap, as a person does.
func typeAt(m *Model, clock *time.Time, gap time.Duration, s string) {
	for _, r := range s {
		*clock = clock.Add(gap)
		k := tea.KeyPressMsg{Code: r, Text: string(r)}
		if r == ' ' {
			k = keyMsg("space")
		}
		m.update(k)
	}
}

// pressQuits sends one key and reports whether the model asked to quit;
// the other messages its Cmds give are fed back as usual.
func pressQuits(m *Model, k string) bool {
	_, cmd := m.Update(keyMsg(k))
	quit := false
	var walk func(tea.Cmd)
	walk = func(c tea.Cmd) {
		if c == nil {
			return
		}
		switch msg := c().(type) {
		case nil:
		case tea.QuitMsg:
			quit = true
		case tea.BatchMsg:
			for _, c := range msg {
				walk(c)
			}
		default:
			m.update(msg)
		}
	}
	walk(cmd)
	return quit
}

func answers(f *fakeSession) []call {
	var out []call
	for _, c := range f.Calls() {
		if c.method == "Answer" {
			out = append(out, c)
		}
	}
	return out
}

// The tester's report: "two" enter, then "please keep" typed at 120 ms a
// key while the permission prompt for rm -rf build appears. No key may
// answer it, and every key must reach the input.
func TestTypingAheadNeverAnswersAPrompt(t *testing.T) {
	prop, patchReq := reviewProposal()
	for name, prompt := range map[string][]engine.Event{
		"dialog": {permReq("r1", 1, "rm -rf build")},
		"review": {prop, patchReq},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			m := testModel(t, f, 80, 24)
			clock := manualClock(m)
			typeAt(m, clock, 120*time.Millisecond, "two")
			m.press("enter")
			m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "two"})
			typeAt(m, clock, 120*time.Millisecond, "ple")
			*clock = clock.Add(60 * time.Millisecond)
			m.feed(prompt...)
			typeAt(m, clock, 120*time.Millisecond, "ase keep")
			// A second prompt arriving mid-word is protected the same way.
			if len(answers(f)) != 0 {
				t.Fatalf("typed keys answered the prompt: %+v", answers(f))
			}
			if got := m.input.Value(); got != "please keep" {
				t.Fatalf("input = %q, want every typed key kept", got)
			}
			if !strings.Contains(m.screen(), "kept in your input: please keep") {
				t.Fatalf("the kept draft is not shown under the prompt:\n%s", m.screen())
			}
			// Enter and esc while typing are not answers either.
			*clock = clock.Add(100 * time.Millisecond)
			m.press("esc")
			*clock = clock.Add(100 * time.Millisecond)
			m.press("enter")
			if len(answers(f)) != 0 || !m.dialog.active() {
				t.Fatalf("esc or enter while typing answered: %+v", answers(f))
			}
			// The person stops, reads, and answers: at once.
			*clock = clock.Add(time.Second)
			m.press("n")
			a := answers(f)
			if len(a) != 1 || a[0].args[1].(engine.Answer).Decision != engine.DecisionDeny {
				t.Fatalf("answers = %+v, want one deny", a)
			}
			if got := m.input.Value(); got != "please keep" {
				t.Fatalf("input after the answer = %q", got)
			}
		})
	}
}

// The tester's second report: "note about stuff" gave "always allow" to
// one prompt and "session" to the next, and kept only "ntuff".
func TestTypingAheadAcrossTwoPrompts(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 80, 24)
	clock := manualClock(m)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "go"})
	typeAt(m, clock, 110*time.Millisecond, "no")
	m.feed(permReq("r1", 1, "make"), permReq("r2", 1, "make install"))
	typeAt(m, clock, 110*time.Millisecond, "te about stuff")
	if len(answers(f)) != 0 || m.input.Value() != "note about stuff" {
		t.Fatalf("answers %+v, input %q", answers(f), m.input.Value())
	}
}

func TestReadingThenAnsweringIsImmediate(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 80, 20)
	clock := manualClock(m)
	m.typeText("ls")
	m.press("enter")
	m.feed(permReq("r1", 1, strings.Repeat("echo long\n", 40)+"rm -rf build"))
	*clock = clock.Add(2 * time.Second)
	// Scrolling to read does not count as typing: y right after it
	// answers.
	m.press("pgdown")
	*clock = clock.Add(50 * time.Millisecond)
	m.press("down")
	*clock = clock.Add(50 * time.Millisecond)
	m.press("y")
	a := answers(f)
	if len(a) != 1 || a[0].args[1].(engine.Answer).Decision != engine.DecisionAllow {
		t.Fatalf("answers = %+v, want allow once", a)
	}
	if m.input.Value() != "" {
		t.Fatalf("input = %q", m.input.Value())
	}
}

// Once the person uses a prompt, its keys go to it at any pace: ] ] in
// quick succession moves two hunks, and puts nothing in the input. Tab
// does not engage the prompt, since it can come from typing.
func TestAnEngagedPromptTakesQuickKeys(t *testing.T) {
	prop, req := reviewProposal()
	where := func(gap time.Duration) (*Model, [2]int) {
		m := testModel(t, newFake(), 120, 50)
		clock := manualClock(m)
		m.feed(prop, req)
		*clock = clock.Add(2 * time.Second)
		for range 2 {
			m.press("]")
			*clock = clock.Add(gap)
		}
		f, h := m.review.dv.hunkAt()
		return m, [2]int{f, h}
	}
	m, quick := where(80 * time.Millisecond)
	_, slow := where(time.Second)
	if m.input.Value() != "" {
		t.Fatalf("keys for the review went to the input: %q", m.input.Value())
	}
	if quick != slow || slow == [2]int{0, 0} {
		t.Fatalf("] ] quickly reached file/hunk %v, slowly %v", quick, slow)
	}

	// "/mo", tab, "del" typed as the prompt appears: tab goes to the
	// prompt but does not engage it, so "del" still counts as typing.
	f2 := newFake()
	m2 := testModel(t, f2, 120, 50)
	clock2 := manualClock(m2)
	typeAt(m2, clock2, 80*time.Millisecond, "/mo")
	m2.feed(permReq("r1", 1, "rm -rf build"))
	*clock2 = clock2.Add(80 * time.Millisecond)
	m2.press("tab")
	typeAt(m2, clock2, 80*time.Millisecond, "del")
	if a := answers(f2); len(a) != 0 {
		t.Fatalf("typing around a tab answered the prompt: %+v", a)
	}
}

func TestCtrlCInDenyMessageClearsThenBacksOut(t *testing.T) {
	prop, patchReq := reviewProposal()
	for name, prompt := range map[string][]engine.Event{
		"dialog": {permReq("r1", 1, "rm -rf build")},
		"review": {prop, patchReq},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			m := testModel(t, f, 100, 30)
			m.feed(prompt...)
			m.press("m")
			m.typeText("use make clean")
			if pressQuits(m, "ctrl+c") {
				t.Fatal("ctrl+c in the message editor quit kz")
			}
			if !m.promptDenying() || strings.Contains(m.screen(), "use make clean") {
				t.Fatalf("ctrl+c did not clear the message:\n%s", m.screen())
			}
			if pressQuits(m, "ctrl+c") {
				t.Fatal("second ctrl+c in an empty message editor quit kz")
			}
			if m.promptDenying() || !m.dialog.active() || len(answers(f)) != 0 {
				t.Fatalf("second ctrl+c did not back out of the editor (denying %v, answers %+v)", m.promptDenying(), answers(f))
			}
			m.press("y")
			if a := answers(f); len(a) != 1 || a[0].args[1].(engine.Answer).Decision != engine.DecisionAllow {
				t.Fatalf("answers = %+v", a)
			}
		})
	}
}

func TestCtrlCInAPromptQuitsOnlyTwice(t *testing.T) {
	prop, patchReq := reviewProposal()
	for name, prompt := range map[string][]engine.Event{
		"dialog": {permReq("r1", 1, "rm -rf build")},
		"review": {prop, patchReq},
	} {
		t.Run(name, func(t *testing.T) {
			m := testModel(t, newFake(), 100, 30)
			clock := manualClock(m)
			m.feed(prompt...)
			if pressQuits(m, "ctrl+c") {
				t.Fatal("one ctrl+c in a prompt quit kz")
			}
			if !strings.Contains(m.screen(), "press ctrl+c again to quit") {
				t.Fatalf("no notice:\n%s", m.screen())
			}
			*clock = clock.Add(500 * time.Millisecond)
			if !pressQuits(m, "ctrl+c") {
				t.Fatal("second ctrl+c did not quit")
			}
		})
	}
}

func TestCtrlCWhileATurnRuns(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 80, 24)
	clock := manualClock(m)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "go"})
	if pressQuits(m, "ctrl+c") {
		t.Fatal("one ctrl+c on an empty input quit while a turn runs")
	}
	if !strings.Contains(m.screen(), "press ctrl+c again to quit") {
		t.Fatalf("no notice:\n%s", m.screen())
	}
	// Too late: the window passed, so this press asks again.
	*clock = clock.Add(quitWindow + time.Second)
	m.update(quitExpiredMsg{at: clock.Add(-quitWindow - time.Second)})
	if strings.Contains(m.screen(), "again to quit") {
		t.Fatalf("notice stays after the window:\n%s", m.screen())
	}
	if pressQuits(m, "ctrl+c") {
		t.Fatal("two ctrl+c far apart quit")
	}
	// Another key in between ends the wait too.
	*clock = clock.Add(100 * time.Millisecond)
	m.press("ctrl+o")
	if pressQuits(m, "ctrl+c") {
		t.Fatal("ctrl+c, another key, ctrl+c quit")
	}
	*clock = clock.Add(time.Second)
	if !pressQuits(m, "ctrl+c") {
		t.Fatal("two ctrl+c within the window did not quit")
	}
	// With nothing running one ctrl+c on an empty input quits at once.
	idle := testModel(t, newFake(), 80, 24)
	if !pressQuits(idle, "ctrl+c") {
		t.Fatal("ctrl+c on an idle empty input did not quit")
	}
}

func TestPromptIsNeverHiddenByAPicker(t *testing.T) {
	for _, open := range []string{"ctrl+r", "ctrl+l"} {
		t.Run(open, func(t *testing.T) {
			f := newFake()
			m := testModel(t, f, 80, 24)
			m.press(open)
			if m.picker == nil {
				t.Fatal("picker not open")
			}
			m.feed(permReq("r1", 1, "rm -rf build"))
			s := m.screen()
			if !strings.Contains(s, "Permission needed") || !strings.Contains(s, "rm -rf build") {
				t.Fatalf("the prompt is hidden by the picker:\n%s", s)
			}
			m.press("n")
			if a := answers(f); len(a) != 1 || a[0].args[1].(engine.Answer).Decision != engine.DecisionDeny {
				t.Fatalf("answers = %+v: keys did not reach the prompt", a)
			}
			if !strings.Contains(m.screen(), "Switch ") {
				t.Fatalf("the picker set aside is not back:\n%s", m.screen())
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		f := newFake()
		m := testModel(t, f, 80, 24)
		m.press("?")
		m.feed(permReq("r1", 1, "rm -rf build"))
		if !strings.Contains(m.screen(), "Permission needed") {
			t.Fatalf("the prompt is hidden by the help:\n%s", m.screen())
		}
	})
}

// TestHelpListsEveryKey: the help names the review's and the dialog's
// keys, says what ctrl+z and ctrl+c really do, and opens from a prompt.
func TestHelpListsEveryKey(t *testing.T) {
	for _, w := range []int{80, 120} {
		m := testModel(t, newFake(), w, 60)
		prop, req := reviewProposal()
		m.feed(prop, req)
		m.press("?")
		s := m.screen()
		for _, want := range []string{"Diff review", "accept/reject file", "accept/reject hunk", "unified/split", "edit in $EDITOR",
			"next/prev hunk", "pgdn/space", "↑/k", "type /undo", "clear"} {
			if !strings.Contains(s, want) {
				t.Errorf("width %d: help lacks %q:\n%s", w, want, s)
			}
		}
		if strings.Contains(s, "ctrl+c quit") || strings.Contains(s, "ctrl+z undo") {
			t.Errorf("width %d: help says ctrl+c quits or ctrl+z undoes:\n%s", w, s)
		}
		m.press("y") // closes the help, does not answer
		if m.review == nil || !strings.Contains(m.screen(), "Permission needed") {
			t.Errorf("width %d: the key that closed the help answered the review", w)
		}
	}
}

// TestStatusSpinnerKeepsTheBackground: the spinner in the status bar has
// the bar's colours, so no reset cuts the background before "running".
func TestStatusSpinnerKeepsTheBackground(t *testing.T) {
	for _, name := range []string{"dark", "light", "high-contrast"} {
		th := themes.MustResolve(name, false)
		s := statusBar{state: engine.State{Runtime: "r", Mode: engine.ModeFullAutonomous}, running: true}
		out := s.view(&th, 80, th.Accent.Render("⠋"))
		if strings.Contains(out, th.Accent.Render("⠋")) {
			t.Errorf("%s: the spinner keeps the transcript's style in the bar: %q", name, out)
		}
		if !strings.Contains(out, th.StatusKey.Render("⠋")+th.Status.Render(" running")) {
			t.Errorf("%s: spinner and running are not drawn on the bar's background: %q", name, out)
		}
	}
}

// The second round of the tester's report: a prompt on screen for a while,
// then the person starts typing the next message. A key the prompt does
// nothing with ("c" of "cat", "l" of "ls", "t" of "ten") is typing, and
// the letters after it are typing too, so neither "a" (always allow), "s"
// (session), "e" ($EDITOR) nor "n" (reject) answers. A paste is typing,
// and backspace after a pause edits the draft.
func TestTypingAfterAPauseNeverAnswers(t *testing.T) {
	prop, patchReq := reviewProposal()
	edit := engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r9", Tool: "edit_file", Paths: []string{"main.go"},
		Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-var x = 1\n+var x = 2\n"}
	for _, c := range []struct {
		name   string
		prompt []engine.Event
		gap    time.Duration
		text   string
	}{
		{"burst after the prompt waited", []engine.Event{permReq("r1", 1, "rm -rf build")}, 10 * time.Millisecond, "cat notes.txt"},
		{"typing pace on an edit review", []engine.Event{edit}, 120 * time.Millisecond, "ls -l"},
		{"a patch review", []engine.Event{prop, patchReq}, 100 * time.Millisecond, "ten"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			m := testModel(t, f, 80, 24)
			clock := manualClock(m)
			m.feed(c.prompt...)
			*clock = clock.Add(2500 * time.Millisecond)
			typeAt(m, clock, c.gap, c.text)
			if a := answers(f); len(a) != 0 {
				t.Fatalf("typing %q answered the prompt: %+v", c.text, a)
			}
			if m.input.Value() != c.text {
				t.Fatalf("input = %q, want %q", m.input.Value(), c.text)
			}
		})
	}
	t.Run("a paste, then more text", func(t *testing.T) {
		f := newFake()
		m := testModel(t, f, 80, 24)
		clock := manualClock(m)
		m.feed(permReq("r1", 1, "rm -rf build"))
		*clock = clock.Add(3 * time.Second)
		m.update(tea.PasteMsg{Content: "src/main.go"})
		typeAt(m, clock, 50*time.Millisecond, " and")
		if a := answers(f); len(a) != 0 {
			t.Fatalf("typing after a paste answered the prompt: %+v", a)
		}
		if m.input.Value() != "src/main.go and" {
			t.Fatalf("input = %q", m.input.Value())
		}
	})
	t.Run("backspace after a pause", func(t *testing.T) {
		f := newFake()
		m := testModel(t, f, 80, 24)
		clock := manualClock(m)
		m.feed(permReq("r1", 1, "rm -rf build"))
		typeAt(m, clock, 50*time.Millisecond, "ls -la build")
		*clock = clock.Add(600 * time.Millisecond)
		m.press("backspace")
		*clock = clock.Add(50 * time.Millisecond)
		m.press("backspace")
		typeAt(m, clock, 50*time.Millisecond, "xn")
		if a := answers(f); len(a) != 0 {
			t.Fatalf("keys after backspace answered the prompt: %+v", a)
		}
		if m.input.Value() != "ls -la buixn" {
			t.Fatalf("input = %q", m.input.Value())
		}
	})
}

// TestPromptSaysWhatAlwaysSaves: the dialog and an edit's review say what
// "always allow" would save; a patch review, which has no "always", does
// not.
func TestPromptSaysWhatAlwaysSaves(t *testing.T) {
	req := permReq("r1", 1, "rm -rf build")
	req.Grants = []string{"Bash(rm -rf build)", "Edit(./build)"}
	m := testModel(t, newFake(), 120, 40)
	m.feed(req)
	if s := m.screen(); !strings.Contains(s, "Always allow saves: Bash(rm -rf build), Edit(./build)") {
		t.Fatalf("the dialog does not say what always saves:\n%s", s)
	}
	edit := engine.Event{Type: engine.EventPermissionRequested, TurnID: 1, RequestID: "r2", Tool: "edit_file", Paths: []string{"main.go"},
		Stage: "allow", Reason: "nothing allowed this request", Grants: []string{"Edit(./main.go)"},
		Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-var x = 1\n+var x = 2\n"}
	m2 := testModel(t, newFake(), 120, 40)
	m2.feed(edit)
	if s := m2.screen(); !strings.Contains(s, "Always allow saves: Edit(./main.go)") {
		t.Fatalf("the edit review does not say what always saves:\n%s", s)
	}
	prop, patchReq := reviewProposal()
	patchReq.Stage, patchReq.Grants = "mode", []string{"Edit(./main.go)"}
	m3 := testModel(t, newFake(), 120, 50)
	m3.feed(prop, patchReq)
	if s := m3.screen(); strings.Contains(s, "Always allow saves") {
		t.Fatalf("a patch review offers what always saves:\n%s", s)
	}
}

package tui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/tui/golden")

var goldenWidths = []int{80, 120}

// golden compares a rendered view, colour stripped and trailing blanks
// trimmed, with testdata/tui/golden/<name>_<width>.golden.
func golden(t *testing.T, name string, width int, view string) {
	t.Helper()
	lines := strings.Split(ansi.Strip(view), "\n")
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("%s: line %d is %d wide, more than %d: %q", name, i+1, w, width, l)
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("..", "testdata", "tui", "golden", fmt.Sprintf("%s_%d.golden", name, width))
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
		t.Errorf("%s at width %d differs from %s:\n--- got\n%s\n--- want\n%s", name, width, path, got, want)
	}
}

var goldenT0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func goldenCtx(width int) *renderCtx {
	th := themes.MustResolve("dark", false)
	return &renderCtx{theme: &th, md: newMDRenderer(th.Markdown), width: width, now: goldenT0.Add(2 * time.Second), spinner: "⠋", force: true}
}

func goldenEvents() []engine.Event {
	exit1 := 1
	diff := "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n-var x = 1\n+var x = 2\n"
	return []engine.Event{
		{Type: engine.EventUserMessage, TurnID: 1, Text: "Why does the build fail? Please look at main.go and fix it."},
		{Type: engine.EventReasoningDelta, TurnID: 1, Text: "The error mentions x.\nLet me read the file."},
		{Type: engine.EventTextDelta, TurnID: 1, Text: "## Diagnosis\n\nThe build fails because `x` is declared twice. "},
		{Type: engine.EventTextDelta, TurnID: 1, Text: "I will:\n\n1. read `main.go`\n2. remove the duplicate\n\n```go\nvar x = 2\n```\n"},
		{Type: engine.EventAssistantMessage, TurnID: 1, Text: "## Diagnosis\n\nThe build fails because `x` is declared twice. I will:\n\n1. read `main.go`\n2. remove the duplicate\n\n```go\nvar x = 2\n```\n"},
		{Type: engine.EventToolCallStarted, TurnID: 1, ToolCallID: "t1", Tool: "read_file", Input: []byte(`{"path":"main.go"}`), Time: goldenT0},
		{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: "t1", Tool: "read_file", Output: "package main\n\nvar x = 1\nvar x = 2\n\nfunc main() {}\n", Time: goldenT0.Add(35 * time.Millisecond)},
		{Type: engine.EventToolCallStarted, TurnID: 1, ToolCallID: "t2", Tool: "edit_file", Input: []byte(`{"path":"main.go"}`), Time: goldenT0},
		{Type: engine.EventPermissionDecided, TurnID: 1, ToolCallID: "t2", Tool: "edit_file", Paths: []string{"main.go"}, Decision: engine.DecisionAllow, Scope: engine.ScopeSession, Stage: "user"},
		{Type: engine.EventFileEdited, TurnID: 1, ToolCallID: "t2", Path: "main.go", Diff: diff},
		{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: "t2", Tool: "edit_file", Output: "edited main.go", DurationMS: 12},
		{Type: engine.EventCommandStarted, TurnID: 1, Command: "go build ./...", Time: goldenT0},
		{Type: engine.EventCommandFinished, TurnID: 1, Command: "go build ./...", ExitCode: &exit1, Output: "./main.go:4:5: x redeclared", DurationMS: 1500},
		{Type: engine.EventPermissionDecided, TurnID: 1, Tool: "bash", Command: "rm -rf build", Decision: engine.DecisionDeny, Stage: "user", Feedback: "use make clean"},
		{Type: engine.EventError, TurnID: 1, Text: "provider returned 429", ErrorKind: engine.ErrRateLimit, Retryable: true},
		{Type: engine.EventRuntimeSwitched, TurnID: 1, From: "claude/sonnet", To: "codex/gpt-5", Reason: "failover"},
		{Type: engine.EventModeChanged, From: "full-autonomous", Mode: engine.ModeAnalysisOnly},
		{Type: engine.EventCompactBoundary, TokensBefore: 180000, TokensAfter: 24000},
		{Type: engine.EventFinalResult, TurnID: 1, Status: "max_cycles"},
	}
}

func TestGoldenTranscript(t *testing.T) {
	for _, w := range goldenWidths {
		tr := newTranscript()
		for _, ev := range goldenEvents() {
			tr.apply(ev)
		}
		golden(t, "transcript", w, strings.Join(tr.view(goldenCtx(w), 200), "\n"))
	}
}

func TestGoldenToolCard(t *testing.T) {
	for _, w := range goldenWidths {
		c := &toolCard{tool: "bash", summary: "go test ./... -run 'TestSomethingWithAVeryLongNameThatKeepsGoingOnAndOnAndOnAndOn'", status: cardRunning, started: goldenT0}
		for i := range 7 {
			fmt.Fprintf(&c.output, "=== RUN   Test%d\t(tab)\n", i)
		}
		running := strings.Join(c.render(goldenCtx(w)), "\n")
		c.status, c.duration = cardOK, 3200*time.Millisecond
		done := strings.Join(c.render(goldenCtx(w)), "\n")
		rc := goldenCtx(w)
		rc.expand = true
		expanded := strings.Join(c.render(rc), "\n")
		golden(t, "toolcard", w, running+"\n\n"+done+"\n\n"+expanded)
	}
}

func TestGoldenPermissionDialog(t *testing.T) {
	for _, w := range goldenWidths {
		th := themes.MustResolve("dark", false)
		d := newPermissionDialog(&th)
		d.push(engine.Event{Type: engine.EventPermissionRequested, RequestID: "r1", Tool: "bash",
			Command: "echo ok\x1b[2K\r\u202e" + strings.Repeat(" ", 5000) + "; rm -rf ~",
			Stage:   "safety", Rule: "destructive rm", Reason: "rm -rf outside the workspace"})
		d.push(engine.Event{Type: engine.EventPermissionRequested, RequestID: "r2", Tool: "edit_file", Paths: []string{"main.go"},
			Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-var x = 1\n+var x = 2\n", Stage: "permission_mode", Reason: "ask before edit_file"})
		first := d.view(&th, w, 30)
		d.pop()
		second := d.view(&th, w, 30)
		golden(t, "permission", w, first+"\n\n"+second)
	}
}

func TestGoldenStatusBar(t *testing.T) {
	for _, w := range goldenWidths {
		th := themes.MustResolve("dark", false)
		s := statusBar{state: engine.State{Runtime: "claude", Model: "sonnet-4", Mode: engine.ModePatchProposal, PermissionMode: engine.PermissionAcceptEdits,
			Limits: engine.Limits{BudgetUSD: 2}}}
		s.apply(engine.Event{Type: engine.EventUserMessage})
		s.apply(engine.Event{Type: engine.EventUsageUpdated, Usage: &engine.Usage{InputTokens: 12345, OutputTokens: 678}, CostUSD: 0.25})
		s.queued = 2
		running := s.view(&th, w, "⠋")
		s.apply(engine.Event{Type: engine.EventFinalResult, Usage: &engine.Usage{InputTokens: 20000, OutputTokens: 1500}, CostUSD: 0.4})
		idle := s.view(&th, w, "⠋")
		golden(t, "status", w, running+"\n"+idle)
	}
}

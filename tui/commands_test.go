package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kaizen-code/kz/engine"
)

func (m *Model) command(text string) {
	m.typeText(text)
	m.press("enter")
}

func TestSlashCompletion(t *testing.T) {
	m := testModel(t, newFake(), 100, 30)
	m.typeText("/mo")
	s := m.screen()
	if !strings.Contains(s, "/mode [mode]") || !strings.Contains(s, "/model [name]") || strings.Contains(s, "/undo") {
		t.Fatalf("completions:\n%s", s)
	}
	m.press("tab")
	if v := m.input.Value(); v != "/model " {
		t.Fatalf("first tab: %q", v)
	}
	m.press("tab")
	if v := m.input.Value(); v != "/mode " {
		t.Fatalf("second tab: %q", v)
	}
	// /memory matches too (m…o), after the names that start with "mo".
	m.press("tab")
	if v := m.input.Value(); v != "/memory " {
		t.Fatalf("third tab: %q", v)
	}
	m.press("tab")
	if v := m.input.Value(); v != "/model " {
		t.Fatalf("fourth tab cycles back: %q", v)
	}
}

func TestSlashUnknownSuggests(t *testing.T) {
	m := testModel(t, newFake(), 100, 30)
	m.command("/hlep")
	if s := m.screen(); !strings.Contains(s, "unknown command /hlep — did you mean /help?") {
		t.Fatalf("no suggestion:\n%s", s)
	}
	m.command("/mo")
	if s := m.screen(); !strings.Contains(s, "did you mean /model, /mode?") {
		t.Fatalf("no ambiguity:\n%s", s)
	}
	m.command("/zzzzzz")
	if s := m.screen(); !strings.Contains(s, "unknown command /zzzzzz (/help lists them)") {
		t.Fatalf("far-off name:\n%s", s)
	}
}

func TestSlashSessionCommands(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 30)
	m.command("/mode analysis-only")
	m.command("/mode bogus")
	m.command("/runtime beta")
	m.command("/model a-2")
	m.command("/und")  // unique prefix of /undo: runs it (no undoer here)
	m.command("//etc") // a prompt that starts with a slash
	var got []string
	for _, c := range f.Calls() {
		switch c.method {
		case "SetMode":
			got = append(got, "mode "+string(c.args[0].(engine.Mode)))
		case "SwitchRuntime":
			got = append(got, "switch "+c.args[0].(string)+" "+c.args[1].(string))
		case "Submit":
			got = append(got, "submit "+c.args[0].(string))
		}
	}
	if strings.Join(got, "|") != "mode analysis-only|switch beta |switch alpha a-2|submit /etc" {
		t.Errorf("calls %q", got)
	}
	s := m.screen()
	if !strings.Contains(s, `unknown mode "bogus"`) || !strings.Contains(s, "undo is not available here") {
		t.Errorf("screen:\n%s", s)
	}
}

func TestSlashInfoCommands(t *testing.T) {
	m := testModel(t, newFake(), 160, 40)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "hi"},
		engine.Event{Type: engine.EventFinalResult, TurnID: 1, Usage: &engine.Usage{InputTokens: 1200, OutputTokens: 34}, CostUSD: 0.5})
	m.command("/cost")
	m.command("/permissions")
	m.command("/compact")
	s := m.screen()
	for _, want := range []string{"1200 tokens in, 34 out", "$0.5000", "permission mode: ask", "this session cannot compact on request"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q:\n%s", want, s)
		}
	}
	m.command("/clear")
	s = m.screen()
	if strings.Contains(s, "1200 tokens") || !strings.Contains(s, "screen cleared") {
		t.Errorf("/clear:\n%s", s)
	}
	m.command("/help")
	if s := m.screen(); !strings.Contains(s, "/sessions /undo /changes /compact") {
		t.Errorf("help lacks commands:\n%s", s)
	}
}

func TestSlashExport(t *testing.T) {
	dir := t.TempDir()
	m := testModel(t, newFake(), 100, 30)
	m.ext.workspace = dir
	m.command("/export out.md")
	data, err := os.ReadFile(filepath.Join(dir, "out.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# kz session s1\n") {
		t.Errorf("export:\n%s", data)
	}
	m.command("/export out.md")
	if s := m.screen(); !strings.Contains(s, "export failed") {
		t.Errorf("an existing file was overwritten:\n%s", s)
	}
	// The path shows twice: where the first export went, and once (not
	// twice) in the error.
	if s := m.screen(); strings.Count(s, filepath.Join(dir, "out.md")) != 2 || !strings.Contains(s, "/export FILE") {
		t.Errorf("the error names the path more than once or gives no hint:\n%s", s)
	}
}

// TestSlashExportDefaultNameTwice: /export without a name works twice the
// same day: the second export goes to a new file beside the first.
func TestSlashExportDefaultNameTwice(t *testing.T) {
	dir := t.TempDir()
	m := testModel(t, newFake(), 200, 30)
	m.ext.workspace = dir
	m.command("/export")
	m.command("/export")
	if s := m.screen(); strings.Contains(s, "export failed") {
		t.Fatalf("the second export failed:\n%s", s)
	}
	for _, name := range []string{"kz-session-s1.md", "kz-session-s1-2.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestExportMarkdown(t *testing.T) {
	doc := exportMarkdown(engine.State{ID: "s1", Runtime: "r"}, []engine.TranscriptEntry{
		{Kind: engine.EntryUser, Text: "fix it"},
		{Kind: engine.EntryToolCall, Tool: "bash", Status: "ok", Input: []byte(`{"command":"ls"}`), Output: "a\n```\nb"},
		{Kind: engine.EntryAssistant, Runtime: "r", Text: "done"},
	})
	for _, want := range []string{"## You\n\nfix it", "**tool bash** (ok)", "````\na\n```\nb\n````", "## Assistant (r)\n\ndone"} {
		if !strings.Contains(doc, want) {
			t.Errorf("missing %q in\n%s", want, doc)
		}
	}
}

type fakeUndoer struct {
	calls int
	err   error
}

func (u *fakeUndoer) UndoLast(context.Context) (string, error) {
	u.calls++
	return "restored main.go", u.err
}

func TestSlashUndo(t *testing.T) {
	u := &fakeUndoer{}
	m := testModel(t, newFake(), 100, 30)
	m.ext.undo = u
	m.command("/undo")
	if s := m.screen(); u.calls != 1 || !strings.Contains(s, "undone: restored main.go") {
		t.Fatalf("calls %d:\n%s", u.calls, s)
	}
	u.err = errors.New("no change to undo")
	m.command("/undo")
	if s := m.screen(); !strings.Contains(s, "undo failed: no change to undo") {
		t.Fatalf("error not shown:\n%s", s)
	}
	// ctrl+z types the command; only enter runs it.
	m.press("ctrl+z")
	if v := m.input.Value(); v != "/undo" || u.calls != 2 {
		t.Fatalf("ctrl+z: input %q, calls %d", v, u.calls)
	}
	m.press("enter")
	if u.calls != 3 {
		t.Fatalf("enter after ctrl+z: calls %d", u.calls)
	}
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 2, Text: "go"})
	m.command("/undo")
	if u.calls != 3 {
		t.Errorf("undo ran during a turn")
	}
}

func TestChangeLog(t *testing.T) {
	u := &fakeUndoer{}
	m := testModel(t, newFake(), 100, 40)
	m.ext.undo = u
	m.command("/changes")
	if s := m.screen(); !strings.Contains(s, "nothing applied yet") {
		t.Fatalf("empty log:\n%s", s)
	}
	m.press("esc")
	m.feed(
		engine.Event{Type: engine.EventPatchApplied, TurnID: 1, PatchID: "p1", Text: "rename x",
			Files: []engine.FileChange{{Path: "a.go", Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-var x = 1\n+var y = 1\n"}}},
		engine.Event{Type: engine.EventFileEdited, TurnID: 1, PatchID: "p1", Path: "a.go", Diff: "ignored: part of p1"},
		engine.Event{Type: engine.EventFileEdited, TurnID: 2, Path: "b.go", Diff: "--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-b\n+B\n"},
	)
	m.command("/undo")
	m.command("/changes")
	s := m.screen()
	for _, want := range []string{"Changes applied in this session · 2, newest first", "change 2 · edit of b.go · undone", "+B", "+var y = 1", "file 1/2"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "ignored: part of p1") {
		t.Error("a patch's file_edited was logged twice")
	}
	m.press("tab")
	if s := m.screen(); !strings.Contains(s, "change 1 · patch p1: rename x") || !strings.Contains(s, "file 2/2") {
		t.Errorf("tab to the older change:\n%s", s)
	}
	m.press("esc")
	if m.changeLog != nil {
		t.Error("esc did not close the log")
	}
}

// fakeGrants is a GrantManager over a list.
type fakeGrants struct{ list []Grant }

func (f *fakeGrants) ListGrants(context.Context) ([]Grant, error) { return f.list, nil }

func (f *fakeGrants) RevokeGrant(_ context.Context, g Grant) error {
	for i, x := range f.list {
		if x == g {
			f.list = append(f.list[:i], f.list[i+1:]...)
			return nil
		}
	}
	return errors.New("no such grant")
}

func TestSlashPermissionsListAndRevoke(t *testing.T) {
	gm := &fakeGrants{list: []Grant{{Scope: "session", Rule: "bash:git status"}, {Scope: "always", Rule: "Bash(go test ./...)"}}}
	m := testModel(t, newFake(), 120, 40)
	m.ext.grants = gm
	m.command("/permissions")
	s := m.screen()
	for _, want := range []string{"permission mode:", "1. session bash:git status", "2. always  Bash(go test ./...)"} {
		if !strings.Contains(s, want) {
			t.Fatalf("missing %q:\n%s", want, s)
		}
	}
	m.command("/permissions revoke 2")
	if s := m.screen(); !strings.Contains(s, "revoked always grant Bash(go test ./...)") || len(gm.list) != 1 {
		t.Fatalf("revoke: %+v\n%s", gm.list, s)
	}
	m.command("/permissions revoke 5")
	if s := m.screen(); !strings.Contains(s, "no grant 5: there are 1") {
		t.Fatalf("out of range:\n%s", s)
	}
	m.command("/permissions drop 1")
	if s := m.screen(); !strings.Contains(s, "usage: /permissions") || len(gm.list) != 1 {
		t.Fatalf("bad verb:\n%s", s)
	}
}

// compactingSession is the fake session with Session.Compact.
type compactingSession struct {
	*fakeSession
	err error
}

func (c *compactingSession) Compact(context.Context) (engine.Event, error) {
	c.record("Compact")
	if c.err != nil {
		return engine.Event{}, c.err
	}
	return engine.Event{Type: engine.EventCompactBoundary, TokensBefore: 48000, TokensAfter: 1200}, nil
}

func TestSlashCompactCallsTheSession(t *testing.T) {
	f := &compactingSession{fakeSession: newFake()}
	m := testModel(t, f, 120, 30)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "hi"},
		engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: "complete"})
	m.command("/compact")
	if c := f.Calls(); len(c) != 1 || c[0].method != "Compact" {
		t.Fatalf("calls %v", c)
	}
	if s := m.screen(); !strings.Contains(s, "compacted 48.0k → 1.2k tokens: later turns start from the summary") {
		t.Fatalf("no result:\n%s", s)
	}

	// A prompt typed while the compaction runs waits for it, then goes.
	cmd := cmdCompact(m, "")
	if cmd == nil {
		t.Fatal("no compaction command")
	}
	m.command("after the summary")
	if c := f.Calls(); len(c) != 1 || len(m.queue) != 1 {
		t.Fatalf("the prompt did not wait: calls %v queue %+v", c, m.queue)
	}
	m.update(cmd())
	if c := f.Calls(); len(c) != 3 || c[2].method != "Submit" || c[2].args[0] != "after the summary" || len(m.queue) != 0 {
		t.Fatalf("the queued prompt was not sent: %v queue %+v", c, m.queue)
	}

	// While a turn runs, /compact is refused without calling the session.
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 2, Text: "after the summary"})
	m.command("/compact")
	if c := f.Calls(); len(c) != 3 || !strings.Contains(m.screen(), "wait for the turn to end before compacting") {
		t.Fatalf("compacted during a turn: %v\n%s", c, m.screen())
	}
	m.feed(engine.Event{Type: engine.EventFinalResult, TurnID: 2, Status: "complete"})

	// The session's refusal (a CLI runtime) is shown as it is.
	f.err = errors.New("runtime claude-code cannot compact on request; it manages its own context")
	m.command("/compact")
	if s := m.screen(); strings.Contains(s, "compacting the conversation") {
		t.Errorf("a stale progress notice stays beside the result:\n%s", s)
	}
	if s := m.screen(); !strings.Contains(s, "/compact: runtime claude-code cannot compact on request") {
		t.Fatalf("refusal not shown:\n%s", s)
	}
}

// TestSlashMenuArrows: ↑/↓ move the menu's highlight, not the history,
// reach the entries hidden under "… more", and enter or tab takes the
// highlighted command.
func TestSlashMenuArrows(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 30)
	m.history = []string{"an old prompt"}
	m.histPos = 1
	m.typeText("/")
	if s := m.screen(); !strings.Contains(s, "more") {
		t.Fatalf("the menu hides no entries; the test needs some hidden:\n%s", s)
	}
	last := slashCommands[len(slashCommands)-1].name
	m.press("up") // wraps to the last command, hidden until now
	if m.input.Value() != "/" {
		t.Fatalf("↑ in the menu browsed the history: %q", m.input.Value())
	}
	if s := m.screen(); !strings.Contains(s, "/"+last) {
		t.Fatalf("the highlighted last command is not shown:\n%s", s)
	}
	m.press("down", "down") // the first, then the second: /runtime
	m.press("tab")
	if v := m.input.Value(); v != "/"+slashCommands[1].name+" " {
		t.Fatalf("tab took %q, want the highlighted /%s", v, slashCommands[1].name)
	}
	// Enter runs the highlighted command.
	m.press("ctrl+c")
	m.typeText("/")
	m.press("down", "down") // /runtime, then /model
	m.press("enter")
	if m.picker == nil || m.picker.kind != pickModel {
		t.Fatalf("enter did not run the highlighted /model")
	}
}

// TestSlashMenuAfterPasteAndHistory: a paste that changes the filter puts
// the highlight back at the top, so enter runs what was typed; and a
// command recalled from history does not stop ↑ going on through it.
func TestSlashMenuAfterPasteAndHistory(t *testing.T) {
	f := newFake()
	m := testModel(t, f, 100, 30)
	m.typeText("/")
	m.press("down", "down", "down")
	m.update(tea.PasteMsg{Content: "m"})
	if m.menuMoved || m.menuCursor != 0 {
		t.Fatalf("a paste kept the stale highlight %d", m.menuCursor)
	}
	m.press("ctrl+c")
	m.history = []string{"hello older", "/cost"}
	m.histPos = len(m.history)
	m.press("up")
	if m.input.Value() != "/cost" {
		t.Fatalf("↑ recalled %q", m.input.Value())
	}
	m.press("up")
	if m.input.Value() != "hello older" {
		t.Fatalf("↑ on a recalled command went into the menu: %q", m.input.Value())
	}
}

// TestCtrlCClearsTheHistoryPosition: after ctrl+c clears a recalled
// prompt, ↑ starts again from the newest one.
func TestCtrlCClearsTheHistoryPosition(t *testing.T) {
	m := testModel(t, newFake(), 100, 30)
	m.history = []string{"first", "second", "third"}
	m.histPos = 3
	m.press("up", "up")
	if m.input.Value() != "second" {
		t.Fatalf("input %q", m.input.Value())
	}
	m.press("ctrl+c")
	m.press("up")
	if m.input.Value() != "third" {
		t.Fatalf("↑ after ctrl+c gave %q, want the newest prompt", m.input.Value())
	}
}

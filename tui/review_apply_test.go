package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/workspace"
)

// snapshotUndoer is kz's undoer (internal/app's, over the store) with
// the snapshots in memory: patch.Applier.Undo of the newest change.
type snapshotUndoer struct {
	a     *patch.Applier
	snaps *patch.MemorySnapshots
}

func (u snapshotUndoer) UndoLast(ctx context.Context) (string, error) {
	id := u.snaps.Last()
	if err := u.a.Undo(ctx, u.snaps, id); err != nil {
		return "", err
	}
	return "undid " + id, nil
}

// patchSession is a real interactive session in patch-proposal mode over
// the scripted runtime, journaled in a real store, with kz's real patch
// reviewer writing into work through the real workspace, as internal/app
// wires it.
func patchSession(t *testing.T, work, script string) (*engine.Session, *engine.Subscription, snapshotUndoer) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := scripted.Parse("scripted", "test.jsonl", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	id := engine.NewID()
	if err := st.CreateSession(ctx, id, work, "scripted", "m", engine.ModePatchProposal); err != nil {
		t.Fatal(err)
	}
	snaps := &patch.MemorySnapshots{}
	a := &patch.Applier{FS: ws, Snapshots: snaps,
		JournalDir: filepath.Join(t.TempDir(), "journal"), Root: ws.Dir()}
	w := st.NewWriter()
	sess, err := engine.NewSession(engine.Config{ID: id, Journal: w, Workspace: work, Runtime: "scripted", Interactive: true,
		Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}, Mode: engine.ModePatchProposal,
		Patcher: &patch.Reviewer{Applier: a}, PatchRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	sub := sess.Subscribe()
	t.Cleanup(func() {
		sub.Close()
		if err := sess.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := w.Close(); err != nil {
			t.Error(err)
		}
		_ = ws.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return sess, sub, snapshotUndoer{a: a, snaps: snaps}
}

// crlfSource is a CRLF file of 30 numbered lines whose last line has no
// newline.
func crlfSource() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\r\n")
	}
	return b.String() + "end"
}

// proposalScript answers with a SEARCH/REPLACE proposal of two edits far
// apart in app.txt: two hunks in the review.
func proposalScript() string {
	text := "SUMMARY: two edits\n\napp.txt\n<<<<<<< SEARCH\nline 3\r\n=======\nline three\r\n>>>>>>> REPLACE\n" +
		"app.txt\n<<<<<<< SEARCH\nline 28\r\n=======\nline twenty-eight\r\n>>>>>>> REPLACE\n"
	q := strconv.Quote(text)
	return `{"type":"text_delta","text":` + q + `}` + "\n" + `{"type":"assistant_message","text":` + q + `}` + "\n"
}

// TestReviewAcceptHunkOneRejectHunkTwoOnDisk drives the review of a real
// two-hunk proposal: hunk 1 accepted, hunk 2 rejected, then checks the file
// on disk byte for byte; /undo then restores the exact bytes, mode and
// CRLF line endings from the store's snapshots.
func TestReviewAcceptHunkOneRejectHunkTwoOnDisk(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "app.txt")
	orig := crlfSource()
	if err := os.WriteFile(file, []byte(orig), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o755); err != nil { // umask-proof
		t.Fatal(err)
	}
	sess, sub, undo := patchSession(t, work, proposalScript())
	m := testModel(t, sess, 120, 40)
	m.hunkSelect = true
	m.ext.undo = undo

	m.typeText("edit app.txt")
	m.press("enter")
	pumpUntil(t, m, sub, "the review", func(s string) bool { return strings.Contains(s, "Permission needed: apply_patch") })
	if s := m.screen(); !strings.Contains(s, "M app.txt  +2 −2") || !strings.Contains(s, "+line three␍") {
		t.Fatalf("review:\n%s", s)
	}
	m.press("]")
	if s := m.screen(); !strings.Contains(s, "hunk 2/2") {
		t.Fatalf("not on hunk 2:\n%s", s)
	}
	m.press("x", "y")
	pumpUntil(t, m, sub, "the applied patch", func(s string) bool { return strings.Contains(s, "patch applied") && !m.status.running })

	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(orig, "line 3\r\n", "line three\r\n", 1)
	if string(got) != want {
		t.Fatalf("file after a partial apply:\n%q\nwant\n%q", got, want)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode after apply: %v %v", fi.Mode(), err)
	}
	// The change log holds what was really written: one hunk.
	if n := len(m.changes); n != 1 || strings.Count(m.changes[0].files[0].Diff, "@@ -") != 1 {
		t.Fatalf("change log: %+v", m.changes)
	}

	m.command("/undo")
	if s := m.screen(); !strings.Contains(s, "undone: undid") {
		t.Fatalf("undo not reported:\n%s", s)
	}
	got, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != orig {
		t.Fatalf("undo did not restore the exact bytes:\n%q\nwant\n%q", got, orig)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode after undo: %v %v", fi.Mode(), err)
	}
	if !m.changes[0].undone {
		t.Error("the change log does not mark the change undone")
	}
}

// revertUndoer is snapshotUndoer with kz's RevertChange.
type revertUndoer struct{ snapshotUndoer }

func (u revertUndoer) RevertChange(ctx context.Context, files []engine.FileChange) (string, error) {
	return patch.RevertChange(ctx, u.a, files)
}

// srTurn is one scripted turn answering with a SEARCH/REPLACE proposal.
func srTurn(search, replace string) string {
	text := "SUMMARY: " + replace + "\n\napp.txt\n<<<<<<< SEARCH\n" + search + "\r\n=======\n" + replace + "\r\n>>>>>>> REPLACE\n"
	q := strconv.Quote(text)
	return `{"type":"assistant_message","text":` + q + `}` + "\n" + `{"end_turn":true}` + "\n"
}

// TestChangeLogUndoOlderChange applies three changes through real
// reviews, then undoes the first from the change log: refused, with the
// reason, while the third touches its lines; allowed once the third is
// undone, leaving the second in place.
func TestChangeLogUndoOlderChange(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "app.txt")
	orig := crlfSource()
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	script := srTurn("line 3", "line three") + srTurn("line 28", "line twenty-eight") + srTurn("line 4", "line four")
	sess, sub, undo := patchSession(t, work, script)
	m := testModel(t, sess, 120, 40)
	m.ext.undo = revertUndoer{undo}
	for i, p := range []string{"one", "two", "three"} {
		m.typeText(p)
		m.press("enter")
		pumpUntil(t, m, sub, "review "+p, func(s string) bool { return strings.Contains(s, "Permission needed: apply_patch") })
		m.press("y")
		pumpUntil(t, m, sub, "apply "+p, func(string) bool { return len(m.changes) == i+1 && !m.status.running })
	}
	read := func() string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	all := strings.NewReplacer("line 3\r\n", "line three\r\n", "line 28\r\n", "line twenty-eight\r\n", "line 4\r\n", "line four\r\n").Replace(orig)
	if read() != all {
		t.Fatalf("after three changes: %q", read())
	}

	// The log shows newest first: shift+tab wraps to the oldest change.
	m.command("/changes")
	m.press("tab", "tab")
	if s := m.screen(); !strings.Contains(s, "change 1 · patch") {
		t.Fatalf("not on change 1:\n%s", s)
	}
	m.press("u")
	if s, f := m.screen(), m.changeLog.flash; !strings.Contains(s, "undo of change 1 refused: change 3 (patch") ||
		!strings.Contains(f, "changed lines 1–6 of app.txt after it; undo change 3 first") {
		t.Fatalf("no refusal with its reason (%q):\n%s", f, s)
	}
	if read() != all || m.changes[0].undone {
		t.Fatal("a refused undo changed something")
	}

	// Undo change 3 (the last), then change 1 goes, change 2 stays.
	m.press("esc")
	m.command("/undo")
	m.command("/changes")
	m.press("tab", "tab")
	m.press("u")
	want := strings.Replace(orig, "line 28\r\n", "line twenty-eight\r\n", 1)
	if got := read(); got != want {
		t.Fatalf("after undoing change 1:\n%q\nwant\n%q\nscreen:\n%s", got, want, m.screen())
	}
	if !m.changes[0].undone || m.changes[1].undone || len(m.changes) != 4 {
		t.Fatalf("change log: %+v", m.changes)
	}
	// The revert is the newest change: /undo takes it back.
	m.press("esc")
	m.command("/undo")
	if got := read(); got != strings.Replace(want, "line 3\r\n", "line three\r\n", 1) {
		t.Fatalf("undoing the revert: %q", got)
	}
}

// TestReviewEditInEditorThenApply opens the proposed app.txt in $EDITOR
// from the review (a script that rewrites one line), checks the re-diffed
// review, applies, and checks the disk holds the edited content.
func TestReviewEditInEditorThenApply(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "app.txt")
	orig := crlfSource()
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	editor := filepath.Join(t.TempDir(), "ed.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/line three/line THREE by hand/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", editor)
	old := execProcess
	execProcess = func(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd { return func() tea.Msg { return fn(c.Run()) } }
	t.Cleanup(func() { execProcess = old })

	sess, sub, _ := patchSession(t, work, proposalScript())
	m := testModel(t, sess, 120, 40)
	m.hunkSelect = true
	m.ext.workspace = work
	m.typeText("edit app.txt")
	m.press("enter")
	pumpUntil(t, m, sub, "the review", func(s string) bool { return strings.Contains(s, "Permission needed: apply_patch") })
	// "e" gives the editor's command; the test model drops the commands
	// of keys (it is quiet), so the test runs the one "e" gives by hand.
	if !key.Matches(keyMsg("e"), m.review.keys.Edit) {
		t.Fatal("e does not open the editor")
	}
	cmd := m.review.openEditor(work)
	if cmd == nil {
		t.Fatalf("no editor command: %s", m.review.flash)
	}
	m.update(cmd())
	if s := m.screen(); !strings.Contains(s, "+line THREE by hand␍") || !strings.Contains(s, "app.txt edited: +2 −2") {
		t.Fatalf("not re-diffed:\n%s", s)
	}
	m.press("y")
	pumpUntil(t, m, sub, "the applied patch", func(s string) bool { return strings.Contains(s, "patch applied") && !m.status.running })
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("line 3\r\n", "line THREE by hand\r\n", "line 28\r\n", "line twenty-eight\r\n").Replace(orig)
	if string(got) != want {
		t.Fatalf("file:\n%q\nwant\n%q", got, want)
	}
}

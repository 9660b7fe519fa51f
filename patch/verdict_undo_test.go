package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apply validates and applies a proposal in e's workspace.
func (e *gapEnv) apply(t *testing.T, text string) *Result {
	t.Helper()
	ctx := context.Background()
	p, err := Parse(text)
	must(t, err)
	plan, err := e.a.Validate(ctx, p)
	must(t, err)
	res, err := e.a.Apply(ctx, plan)
	must(t, err)
	return res
}

// changeInSrc modifies src/a.txt and creates src/new.txt.
const changeInSrc = "*** Begin Patch\n*** Update File: src/a.txt\n-one\n+ONE\n*** Add File: src/new.txt\n+new\n*** End Patch\n"

// TestUndoDoesNotFollowALinkSwappedInAfterTheChange: after a change to
// src/, src is replaced by a link to a place holding files with exactly
// the content the change wrote, which an undo that followed the link
// would "restore" (rewrite a.txt, delete new.txt). The undo is refused,
// nothing is written anywhere, and once the link is gone the same undo
// works.
func TestUndoDoesNotFollowALinkSwappedInAfterTheChange(t *testing.T) {
	for _, c := range []struct {
		name, target string
		want         error
	}{
		{"to_a_decoy_dir_in_the_workspace", "decoy", ErrChanged},
		{"to_git_hooks", ".git/hooks", ErrRefused},
		{"to_outside", "@outside", nil},
		{"to_a_home_credential_dir", "@home/.ssh", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newGapEnv(t)
			writeFiles(t, e.work, map[string]string{"src/a.txt": "one\n"})
			res := e.apply(t, changeInSrc)
			place := e.target(c.target)
			if !filepath.IsAbs(place) {
				place = e.p(place)
			}
			writeFiles(t, place, map[string]string{"a.txt": "ONE\n", "new.txt": "new\n"})
			sw := dirToLink("src", c.target)
			sw.do(t, e)
			before := e.world(t)
			err := e.a.Undo(context.Background(), e.snaps, res.ChangeID)
			e.sameWorld(t, "after the refused undo", before)
			e.noJournal(t)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("undo through the swapped link: %v, want %v", err, c.want)
			}
			sw.undo(t, e)
			must(t, e.a.Undo(context.Background(), e.snaps, res.ChangeID))
			if b, _ := os.ReadFile(e.p("src/a.txt")); string(b) != "one\n" {
				t.Fatalf("src/a.txt after undo = %q", b)
			}
			if _, err := os.Lstat(e.p("src/new.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("src/new.txt after undo: %v", err)
			}
		})
	}
}

// TestUndoSwapBetweenItsCheckAndItsWrite: the swap happens after the undo
// judged and read the files, right before it writes.
func TestUndoSwapBetweenItsCheckAndItsWrite(t *testing.T) {
	e := newGapEnv(t)
	writeFiles(t, e.work, map[string]string{"src/a.txt": "one\n", ".git/hooks/a.txt": "ONE\n", ".git/hooks/new.txt": "new\n"})
	res := e.apply(t, changeInSrc)
	before := e.world(t)
	sw := dirToLink("src", ".git/hooks")
	e.a.beforeWrites = func() { sw.do(t, e) }
	err := e.a.Undo(context.Background(), e.snaps, res.ChangeID)
	sw.undo(t, e)
	e.sameWorld(t, "after the failed undo", before)
	e.noJournal(t)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "all files restored") {
		t.Fatalf("undo: %v, want ErrChanged with the files restored", err)
	}
}

// TestRevertSwapBetweenItsCheckAndItsWrite: RevertChange judges and reads
// the file, then the directory becomes a link to .git/hooks holding the
// same content; the revert fails and writes nothing.
func TestRevertSwapBetweenItsCheckAndItsWrite(t *testing.T) {
	e := newGapEnv(t)
	orig := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	writeFiles(t, e.work, map[string]string{"src/f.txt": orig})
	r := &Reviewer{Applier: e.a}
	first := applyText(t, r, SR3("src/f.txt", "two", "TWO"))
	applyText(t, r, SR3("src/f.txt", "six", "SIX"))
	now, err := os.ReadFile(e.p("src/f.txt"))
	must(t, err)
	writeFiles(t, e.work, map[string]string{".git/hooks/f.txt": string(now)})
	before := e.world(t)
	last := e.snaps.Last()
	sw := dirToLink("src", ".git/hooks")
	e.a.beforeWrites = func() { sw.do(t, e) }
	_, err = RevertChange(context.Background(), e.a, first)
	sw.undo(t, e)
	e.sameWorld(t, "after the failed revert", before)
	e.noJournal(t)
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("revert: %v, want ErrChanged", err)
	}
	// Once the link is gone, the same revert works.
	e.a.beforeWrites = nil
	if _, err := RevertChange(context.Background(), e.a, first); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(e.p("src/f.txt")); string(b) != strings.Replace(orig, "six", "SIX", 1) {
		t.Fatalf("after revert: %q", b)
	}
	if e.snaps.Last() == last {
		t.Fatal("the revert saved no change")
	}
}

// TestRecoverDoesNotFollowALinkSwappedInAfterACrash: a crash left a
// journal for src/a.txt (written: "new"); before the restart src became a
// link to .git/hooks, whose a.txt holds "new" too. Recover refuses that
// path, writes nothing and keeps the journal; once the link is gone it
// restores the file and removes the directory the change had created.
func TestRecoverDoesNotFollowALinkSwappedInAfterACrash(t *testing.T) {
	e := newGapEnv(t)
	writeFiles(t, e.work, map[string]string{"src/a.txt": "new\n", "src/n/m/x.txt": "x\n", ".git/hooks/a.txt": "new\n"})
	j := &journal{Version: 1, ChangeID: "chg_crashed", Root: e.a.Root, Entries: []journalEntry{
		{Old: fileState{Path: "src/a.txt", Exists: true, Content: []byte("old\n"), Mode: 0o644}, NewExists: true, NewSHA256: SHA256Hex([]byte("new\n"))},
		{Old: fileState{Path: "src/n/m/x.txt"}, NewExists: true, NewSHA256: SHA256Hex([]byte("x\n")), NewMode: 0o644, CreatedDirs: []string{"src/n", "src/n/m"}},
	}}
	_, err := writeJournal(e.a.JournalDir, j)
	must(t, err)
	sw := dirToLink("src", ".git/hooks")
	sw.do(t, e)
	before := e.world(t)
	ids, err := e.a.Recover(context.Background())
	e.sameWorld(t, "after the refused recovery", before)
	if len(ids) != 0 || !errors.Is(err, ErrChanged) {
		t.Fatalf("recover through the link: %v %v, want ErrChanged", ids, err)
	}
	if ents, _ := os.ReadDir(e.a.JournalDir); len(ents) != 1 {
		t.Fatalf("the journal was not kept: %v", ents)
	}
	sw.undo(t, e)
	ids, err = e.a.Recover(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatalf("recover: %v %v", ids, err)
	}
	if b, _ := os.ReadFile(e.p("src/a.txt")); string(b) != "old\n" {
		t.Fatalf("src/a.txt = %q", b)
	}
	if _, err := os.Lstat(e.p("src/n")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the directories the change created are still there: %v", err)
	}
	e.noJournal(t)
}

// TestValidateRefusesAHardLinkedFile: a file with a second hard link
// (here to a file outside) is refused before its content is read into a
// preview or a snapshot, whatever the change.
func TestValidateRefusesAHardLinkedFile(t *testing.T) {
	for _, text := range []string{modifyA, "*** Begin Patch\n*** Delete File: src/a.txt\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: src/a.txt\n*** Move to: b.txt\n@@\n-secret\n+x\n*** End Patch\n"} {
		e := newGapEnv(t)
		writeFiles(t, e.outside, map[string]string{"secret.txt": "one\nsecret\n"})
		must(t, os.MkdirAll(e.p("src"), 0o755))
		must(t, os.Link(filepath.Join(e.outside, "secret.txt"), e.p("src/a.txt")))
		before := e.world(t)
		p, err := Parse(text)
		must(t, err)
		_, err = e.a.Validate(context.Background(), p)
		var ve *ValidationError
		if !errors.Is(err, ErrHardLink) || !errors.As(err, &ve) || ve.Problems[0].Kind != RefusedNotRegular || strings.Contains(err.Error(), "secret\n") {
			t.Fatalf("validate %q: %v", text, err)
		}
		e.sameWorld(t, "after the refusal", before)
	}
}

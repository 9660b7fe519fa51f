package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// The tests in this file swap a path between the verdict (Validate, or
// the checks of Apply, Undo, RevertChange and Recover) and the action,
// the way a process running in the workspace could, and check that the
// applier acts on exactly what was judged: nothing is written through the
// link, the whole proposal fails with a clear error, every file written
// before the failure is restored, and no journal is left behind.

// gapEnv is a real workspace with a .git/hooks directory, a directory
// outside the workspace and a home directory holding a credential
// directory, the places a swapped link would lead to.
type gapEnv struct {
	work, outside, home string
	a                   *Applier
	snaps               *MemorySnapshots
}

func newGapEnv(t *testing.T) *gapEnv {
	t.Helper()
	e := &gapEnv{work: realTempDir(t), outside: realTempDir(t), home: realTempDir(t)}
	writeFiles(t, e.work, map[string]string{".git/config": "[core]\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n"})
	writeFiles(t, e.outside, map[string]string{"outside.txt": "outside\n"})
	writeFiles(t, e.home, map[string]string{".ssh/authorized_keys": "ssh-ed25519 AAAA person\n"})
	e.snaps = &MemorySnapshots{}
	ws := openWorkspace(t, e.work)
	e.a = &Applier{FS: ws, Guard: testGuard{}, Snapshots: e.snaps, JournalDir: filepath.Join(t.TempDir(), "journal"), Root: ws.Dir()}
	return e
}

func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// p names a path in the workspace.
func (e *gapEnv) p(rel string) string { return filepath.Join(e.work, filepath.FromSlash(rel)) }

// fsState describes every entry under root without following links:
// directories, links with their targets, files with mode and content, and
// special files, so a leftover directory, temporary file or link shows.
func fsState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch m := info.Mode(); {
		case m&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link -> " + target
		case m.IsDir():
			out[rel] = "dir"
		case m.IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %o %q", m.Perm(), b)
		default:
			out[rel] = "special " + m.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameState(t *testing.T, label string, got, want map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: %s is %q, want %q", label, k, got[k], want[k])
		}
	}
}

// world is the state of every place a write could land.
func (e *gapEnv) world(t *testing.T) [3]map[string]string {
	return [3]map[string]string{fsState(t, e.work), fsState(t, e.outside), fsState(t, e.home)}
}

func (e *gapEnv) sameWorld(t *testing.T, label string, want [3]map[string]string) {
	t.Helper()
	got := e.world(t)
	for i, name := range []string{"workspace", "outside", "home"} {
		sameState(t, label+" ("+name+")", got[i], want[i])
	}
}

func (e *gapEnv) noJournal(t *testing.T) {
	t.Helper()
	if ents, _ := os.ReadDir(e.a.JournalDir); len(ents) != 0 {
		t.Fatalf("journal left behind: %v", ents)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// swap is a change made to the workspace behind the applier's back and
// the way to take it back.
type swap struct{ do, undo func(t *testing.T, e *gapEnv) }

// dirToLink replaces the directory dir with a link to target (a path
// relative to the link's directory, or absolute; "@outside" and "@home/x"
// name the outside directory and one in the home).
func dirToLink(dir, target string) swap {
	return swap{
		do: func(t *testing.T, e *gapEnv) {
			must(t, os.Rename(e.p(dir), e.p(dir)+".real"))
			must(t, os.Symlink(e.target(target), e.p(dir)))
		},
		undo: func(t *testing.T, e *gapEnv) {
			must(t, os.Remove(e.p(dir)))
			must(t, os.Rename(e.p(dir)+".real", e.p(dir)))
		},
	}
}

func (e *gapEnv) target(target string) string {
	switch {
	case target == "@outside":
		return e.outside
	case strings.HasPrefix(target, "@home/"):
		return filepath.Join(e.home, strings.TrimPrefix(target, "@home/"))
	case strings.HasPrefix(target, "@abs/"):
		return e.p(strings.TrimPrefix(target, "@abs/"))
	}
	return target
}

// newLink makes the missing name a link to target.
func newLink(name, target string) swap {
	return swap{
		do:   func(t *testing.T, e *gapEnv) { must(t, os.Symlink(e.target(target), e.p(name))) },
		undo: func(t *testing.T, e *gapEnv) { must(t, os.Remove(e.p(name))) },
	}
}

// replaceFile replaces the regular file name by what make creates there,
// and undo puts the file back as it was.
func replaceFile(name string, make func(t *testing.T, e *gapEnv, p string)) swap {
	var saved []byte
	var mode fs.FileMode
	return swap{
		do: func(t *testing.T, e *gapEnv) {
			info, err := os.Stat(e.p(name))
			must(t, err)
			saved, err = os.ReadFile(e.p(name))
			must(t, err)
			mode = info.Mode().Perm()
			must(t, os.Remove(e.p(name)))
			make(t, e, e.p(name))
		},
		undo: func(t *testing.T, e *gapEnv) {
			must(t, os.Remove(e.p(name)))
			must(t, os.WriteFile(e.p(name), saved, mode))
			must(t, os.Chmod(e.p(name), mode))
		},
	}
}

// When a swap happens.
const (
	afterValidate   = iota // between Validate (and the person's review) and Apply
	beforeWrites           // after Apply's checks and journal, before its first write
	afterFirstWrite        // after the first file of the commit was written
)

type gapCase struct {
	name     string
	files    map[string]string
	outside  map[string]string
	proposal string
	swap     swap
	when     int
	want     error
	// written is how many file operations succeeded before the failure
	// (and were rolled back).
	written int
}

const (
	modifyA      = "src/a.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n"
	deleteX      = "*** Begin Patch\n*** Delete File: x.txt\n*** End Patch\n"
	modeChangeSh = "diff --git a/src/run.sh b/src/run.sh\nold mode 100644\nnew mode 100755\n--- a/src/run.sh\n+++ b/src/run.sh\n@@ -2 +2 @@\n-echo a\n+echo b\n"
)

func gapCases() []gapCase {
	fifo := func(t *testing.T, _ *gapEnv, p string) { must(t, syscall.Mkfifo(p, 0o644)) }
	return []gapCase{
		{name: "dir_to_relative_link_to_git_hooks", files: map[string]string{"src/a.txt": "one\n", ".git/hooks/a.txt": "one\n"},
			proposal: modifyA, swap: dirToLink("src", ".git/hooks"), want: ErrChanged},
		{name: "dir_to_absolute_link_to_git_hooks", files: map[string]string{"src/keep.txt": "k\n"},
			proposal: "*** Begin Patch\n*** Add File: src/post-checkout\n+#!/bin/sh\n+touch pwned\n*** End Patch\n",
			swap:     dirToLink("src", "@abs/.git/hooks"), want: ErrChanged},
		{name: "dir_to_link_to_outside", files: map[string]string{"src/a.txt": "one\n"}, outside: map[string]string{"a.txt": "one\n"},
			proposal: modifyA, swap: dirToLink("src", "@outside"), want: ErrChanged},
		{name: "dir_to_link_to_home_credential_dir", files: map[string]string{"src/keep.txt": "k\n"},
			proposal: "*** Begin Patch\n*** Add File: src/authorized_keys\n+ssh-ed25519 AAAA attacker\n*** End Patch\n",
			swap:     dirToLink("src", "@home/.ssh"), want: ErrChanged},
		{name: "dir_to_link_to_protected_agent_config", files: map[string]string{"src/a.txt": "one\n", ".claude/a.txt": "one\n"},
			proposal: modifyA, swap: dirToLink("src", ".claude"), want: ErrChanged},
		{name: "created_files_missing_parent_appears_as_link_to_git_hooks", files: map[string]string{"keep.txt": "k\n"},
			proposal: "*** Begin Patch\n*** Add File: newdir/post-merge\n+#!/bin/sh\n*** End Patch\n",
			swap:     newLink("newdir", ".git/hooks"), want: ErrChanged},
		{name: "created_files_missing_grandparent_appears_as_link_to_outside", files: map[string]string{"a/keep.txt": "k\n"},
			proposal: "*** Begin Patch\n*** Add File: a/new/deep/x.txt\n+x\n*** End Patch\n",
			swap:     newLink("a/new", "@outside"), want: ErrChanged},
		{name: "rename_targets_parent_to_link_to_git_hooks", files: map[string]string{"a.txt": "alpha\n", "dst/keep.txt": "k\n"},
			proposal: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: dst/pre-commit\n@@\n-alpha\n+ALPHA\n*** End Patch\n",
			swap:     dirToLink("dst", ".git/hooks"), want: ErrChanged},
		{name: "rename_sources_parent_to_link_to_decoy", files: map[string]string{"src/a.txt": "alpha\n", "decoy/a.txt": "alpha\n"},
			proposal: "*** Begin Patch\n*** Update File: src/a.txt\n*** Move to: b.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n",
			swap:     dirToLink("src", "decoy"), want: ErrChanged},
		{name: "delete_target_to_link_to_outside_file", files: map[string]string{"x.txt": "bye\n"}, outside: map[string]string{"x.txt": "bye\n"},
			proposal: deleteX, swap: replaceFile("x.txt", func(t *testing.T, e *gapEnv, p string) { must(t, os.Symlink(filepath.Join(e.outside, "x.txt"), p)) }),
			want: ErrChanged},
		{name: "delete_targets_parent_to_link_to_git", files: map[string]string{"d/config": "[core]\n"},
			proposal: "*** Begin Patch\n*** Delete File: d/config\n*** End Patch\n", swap: dirToLink("d", ".git"), want: ErrChanged},
		{name: "file_to_hard_link_to_outside_file", files: map[string]string{"src/a.txt": "one\n"}, outside: map[string]string{"same.txt": "one\n"},
			proposal: modifyA, swap: replaceFile("src/a.txt", func(t *testing.T, e *gapEnv, p string) { must(t, os.Link(filepath.Join(e.outside, "same.txt"), p)) }),
			want: ErrHardLink},
		{name: "file_to_fifo", files: map[string]string{"src/a.txt": "one\n"}, proposal: modifyA, swap: replaceFile("src/a.txt", fifo), want: ErrNotRegular},
		{name: "file_to_link_to_git_hooks_file", files: map[string]string{"src/a.txt": "one\n", ".git/hooks/a.txt": "one\n"},
			proposal: modifyA, swap: replaceFile("src/a.txt", func(t *testing.T, _ *gapEnv, p string) { must(t, os.Symlink("../.git/hooks/a.txt", p)) }),
			want: ErrChanged},
		{name: "dir_replaced_by_another_directory", files: map[string]string{"src/a.txt": "one\n"}, proposal: modifyA,
			swap: swap{
				do: func(t *testing.T, e *gapEnv) {
					must(t, os.Rename(e.p("src"), e.p("src.old")))
					writeFiles(t, e.work, map[string]string{"src/a.txt": "one\n"})
				},
				undo: func(t *testing.T, e *gapEnv) {
					must(t, os.RemoveAll(e.p("src")))
					must(t, os.Rename(e.p("src.old"), e.p("src")))
				},
			}, want: ErrChanged},
		{name: "deeper_dir_to_link_to_git_hooks", files: map[string]string{"a/b/c/x.txt": "one\n", ".git/hooks/c/x.txt": "one\n"},
			proposal: "a/b/c/x.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n", swap: dirToLink("a/b", "../.git/hooks"), want: ErrChanged},
		{name: "mode_change_dir_to_link_to_git_hooks", files: map[string]string{"src/run.sh": "#!/bin/sh\necho a\n", ".git/hooks/run.sh": "#!/bin/sh\necho a\n"},
			proposal: modeChangeSh, swap: dirToLink("src", ".git/hooks"), want: ErrChanged},
		{name: "dir_to_link_to_git_hooks_after_the_checks", files: map[string]string{"src/a.txt": "one\n", ".git/hooks/a.txt": "one\n"},
			proposal: modifyA, swap: dirToLink("src", ".git/hooks"), when: beforeWrites, want: ErrChanged},
		{name: "second_file_swapped_before_the_writes_first_rolled_back", files: map[string]string{"a.txt": "one\n", "src/b.txt": "two\n"},
			proposal: "*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** Add File: src/pre-push\n+#!/bin/sh\n*** End Patch\n",
			swap:     dirToLink("src", "@abs/.git/hooks"), when: beforeWrites, want: ErrChanged, written: 1},
		{name: "second_file_swapped_after_the_first_was_written_first_rolled_back", files: map[string]string{"a.txt": "one\n", "src/b.txt": "two\n", ".git/hooks/b.txt": "two\n"},
			proposal: "*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** Delete File: src/b.txt\n*** End Patch\n",
			swap:     dirToLink("src", ".git/hooks"), when: afterFirstWrite, want: ErrChanged, written: 1},
	}
}

// TestSwapBetweenVerdictAndApply injects each swap and checks that the
// proposal fails with the expected error, that nothing anywhere differs
// from the state before the apply except the swap itself (undone here
// before comparing), and that no journal is left.
func TestSwapBetweenVerdictAndApply(t *testing.T) {
	for _, c := range gapCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := newGapEnv(t)
			writeFiles(t, e.work, c.files)
			writeFiles(t, e.outside, c.outside)
			if strings.Contains(c.proposal, "old mode") {
				must(t, os.Chmod(e.p("src/run.sh"), 0o644))
			}
			p, err := Parse(c.proposal)
			must(t, err)
			plan, err := e.a.Validate(ctx, p)
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			before := e.world(t)
			swapped := false
			doSwap := func() {
				if !swapped {
					swapped = true
					c.swap.do(t, e)
				}
			}
			// The hook runs on the commit's writer goroutines.
			var written atomic.Int64
			e.a.afterWrite = func(n int) {
				written.Store(int64(n))
				if n == 1 && c.when == afterFirstWrite {
					doSwap()
				}
			}
			switch c.when {
			case afterValidate:
				doSwap()
			case beforeWrites:
				e.a.beforeWrites = doSwap
			}
			_, err = e.a.Apply(ctx, plan)
			if !swapped {
				t.Fatal("the swap never ran")
			}
			// What landed where is checked first: it is the point.
			c.swap.undo(t, e)
			e.sameWorld(t, "after the refused apply", before)
			e.noJournal(t)
			if n := written.Load(); n != int64(c.written) {
				t.Errorf("%d files were written before the failure, want %d", n, c.written)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("apply after the swap: %v, want %v", err, c.want)
			}
			if msg := err.Error(); strings.Count(msg, "\n") != 0 || (c.when != afterValidate && !strings.Contains(msg, "all files restored")) {
				t.Fatalf("error is not one clear line that says the files were restored: %q", msg)
			}
			if c.when == afterValidate && e.snaps.Last() != "" {
				t.Fatal("a snapshot was saved for a change refused before any write (content behind the swap may have been copied)")
			}
			if fb := FormatFeedback(err); !strings.Contains(fb, "changed after it was checked") && !strings.Contains(fb, "hard link") && !strings.Contains(fb, "not a regular file") {
				t.Fatalf("feedback does not say what happened: %s", fb)
			}
		})
	}
}

// TestSwappedLinkIsNotFollowedByValidate: a directory that is a link to
// .git/hooks when the proposal is validated is refused by the judgement
// itself, and the refusal writes nothing.
func TestSwappedLinkIsNotFollowedByValidate(t *testing.T) {
	e := newGapEnv(t)
	writeFiles(t, e.work, map[string]string{"lib/a.txt": "one\n"})
	must(t, os.Symlink(".git/hooks", e.p("src")))
	before := e.world(t)
	p, err := Parse("*** Begin Patch\n*** Add File: src/pre-commit\n+x\n*** End Patch\n")
	must(t, err)
	if _, err := e.a.Validate(context.Background(), p); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), ".git") {
		t.Fatalf("validate: %v", err)
	}
	e.sameWorld(t, "after the refusal", before)
}

// TestLinkedDirectoryThatStaysIsStillWritten: a link inside the workspace
// that was there when the proposal was judged (src -> lib) and is still
// there is not a swap; the change is written to the file it leads to, the
// snapshot names that file, and undo restores it.
func TestLinkedDirectoryThatStaysIsStillWritten(t *testing.T) {
	ctx := context.Background()
	e := newGapEnv(t)
	writeFiles(t, e.work, map[string]string{"lib/a.txt": "one\n"})
	must(t, os.Symlink("lib", e.p("src")))
	before := e.world(t)
	p, err := Parse("*** Begin Patch\n*** Update File: src/a.txt\n-one\n+ONE\n*** Add File: src/new/b.txt\n+b\n*** End Patch\n")
	must(t, err)
	plan, err := e.a.Validate(ctx, p)
	must(t, err)
	res, err := e.a.Apply(ctx, plan)
	must(t, err)
	if b, _ := os.ReadFile(e.p("lib/a.txt")); string(b) != "ONE\n" {
		t.Fatalf("lib/a.txt = %q", b)
	}
	if b, _ := os.ReadFile(e.p("lib/new/b.txt")); string(b) != "b\n" {
		t.Fatalf("lib/new/b.txt = %q", b)
	}
	if strings.Join(res.Paths, ",") != "src/a.txt,src/new/b.txt" {
		t.Fatalf("result paths %v", res.Paths)
	}
	snaps, _ := e.snaps.LoadSnapshots(ctx, res.ChangeID)
	if len(snaps) != 2 || snaps[0].Path != "lib/a.txt" || snaps[1].Path != "lib/new/b.txt" || strings.Join(snaps[1].CreatedDirs, ",") != "lib/new" {
		t.Fatalf("snapshots %+v", snaps)
	}
	must(t, e.a.Undo(ctx, e.snaps, res.ChangeID))
	e.sameWorld(t, "after undo", before)
}

// TestSameFileTwiceThroughALinkIsRefused: two paths of one proposal that
// are the same file through a link would write it twice.
func TestSameFileTwiceThroughALinkIsRefused(t *testing.T) {
	e := newGapEnv(t)
	writeFiles(t, e.work, map[string]string{"lib/a.txt": "one\ntwo\n"})
	must(t, os.Symlink("lib", e.p("src")))
	p, err := Parse(SR3("src/a.txt", "one", "ONE") + SR3("lib/a.txt", "two", "TWO"))
	must(t, err)
	_, err = e.a.Validate(context.Background(), p)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Kind != RefusedConflict || !strings.Contains(err.Error(), "same file") {
		t.Fatalf("validate: %v", err)
	}
}

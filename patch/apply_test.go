package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaizen-code/kz/internal/testfs"
	"github.com/kaizen-code/kz/tools/workspace"
)

func newTestApplier(t *testing.T, work string) (*Applier, *MemorySnapshots) {
	t.Helper()
	snaps := &MemorySnapshots{}
	return &Applier{FS: openWorkspace(t, work), Guard: testGuard{}, Snapshots: snaps, JournalDir: filepath.Join(t.TempDir(), "journal")}, snaps
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfs.Write(t, dir, files)
}

// TestThreeFilesThirdFailsTouchesNothing: the first two files match, the
// third does not; nothing is written, not even the first two.
func TestThreeFilesThirdFailsTouchesNothing(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "one\n", "b.txt": "two\n", "c.txt": "three\n"})
	before := readTree(t, work)
	a, snaps := newTestApplier(t, work)
	p, err := Parse(SR3("a.txt", "one", "ONE") + SR3("b.txt", "two", "TWO") + SR3("c.txt", "drei", "THREE"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Validate(context.Background(), p)
	if !errors.Is(err, ErrNoMatch) {
		t.Fatalf("validate: %v, want ErrNoMatch", err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "c.txt" {
		t.Fatalf("problems: %+v", err)
	}
	compareTrees(t, "after refusal", readTree(t, work), before)
	if snaps.Last() != "" {
		t.Fatal("a snapshot was saved for a refused proposal")
	}
	fb := FormatFeedback(err)
	if !strings.Contains(fb, "c.txt, edit 1") || strings.Contains(fb, "a.txt") {
		t.Fatalf("feedback should name only the failed edit:\n%s", fb)
	}
}

// TestApplyWriteFailureRollsBack makes the second write fail and checks the
// first file is restored.
func TestApplyWriteFailureRollsBack(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "one\n", "b.txt": "two\n"})
	before := readTree(t, work)
	a, _ := newTestApplier(t, work)
	p, _ := Parse(SR3("a.txt", "one", "ONE") + SR3("b.txt", "two", "TWO"))
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ws := a.FS.(*workspace.Workspace)
	a.FS, a.Root = failingFS{FS: ws, dirs: RootDirFS(ws.Root()), failOn: "b.txt"}, ws.Dir()
	if _, err := a.Apply(context.Background(), plan); err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "all files restored") {
		t.Fatalf("apply with a failing write: %v", err)
	}
	compareTrees(t, "after failed apply", readTree(t, work), before)
	if ents, _ := os.ReadDir(a.JournalDir); len(ents) != 0 {
		t.Fatalf("journal left behind: %v", ents)
	}
}

// failingFS is a workspace whose writes of files named failOn fail.
type failingFS struct {
	FS
	dirs   DirFS
	failOn string
}

func (f failingFS) OpenRootDir() (Dir, error) {
	d, err := f.dirs.OpenRootDir()
	if err != nil {
		return nil, err
	}
	return failingDir{Dir: d, failOn: f.failOn}, nil
}

type failingDir struct {
	Dir
	failOn string
}

func (d failingDir) OpenDir(name string) (Dir, error) {
	sub, err := d.Dir.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return failingDir{Dir: sub, failOn: d.failOn}, nil
}

func (d failingDir) WriteTemp(name string, data []byte, mode fs.FileMode) (string, error) {
	if name == d.failOn {
		return "", errors.New("disk full (simulated)")
	}
	return d.Dir.WriteTemp(name, data, mode)
}

// TestApplyRefusesFileChangedAfterValidate: a file edited between Validate
// and Apply is not overwritten.
func TestApplyRefusesFileChangedAfterValidate(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "one\n"})
	a, _ := newTestApplier(t, work)
	p, _ := Parse(SR3("a.txt", "one", "ONE"))
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{"a.txt": "one\nmore\n"})
	if _, err := a.Apply(context.Background(), plan); !errors.Is(err, ErrStale) {
		t.Fatalf("apply: %v, want ErrStale", err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "one\nmore\n" {
		t.Fatalf("file overwritten: %q", b)
	}
}

// TestUndoRestoresExactBytesAndRefusesLaterEdits covers CRLF, BOM, mode and
// a created file, then the conflict refusal.
func TestUndoRestoresExactBytesAndRefusesLaterEdits(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"w.txt": "\xef\xbb\xbfa\r\nb\r\nc", "s.sh": "#!/bin/sh\necho 1\n"})
	if err := os.Chmod(filepath.Join(work, "s.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, work)
	a, snaps := newTestApplier(t, work)
	p, err := Parse("*** Begin Patch\n*** Update File: w.txt\n a\n-b\n+B\n*** Update File: s.sh\n-echo 1\n+echo 2\n*** Add File: new/x.txt\n+x\n*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.Validate(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Apply(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(work, "w.txt")); string(got) != "\xef\xbb\xbfa\r\nB\r\nc" {
		t.Fatalf("w.txt = %q", got)
	}
	if err := a.Undo(ctx, snaps, res.ChangeID); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, "after undo", readTree(t, work), before)
	if _, err := os.Stat(filepath.Join(work, "new/x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("undo left the created file")
	}

	// Apply again, edit a file afterwards: undo must refuse, touching nothing.
	plan, err = a.Validate(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err = a.Apply(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{"new/x.txt": "edited by the person\n"})
	mid := readTree(t, work)
	if err := a.Undo(ctx, snaps, res.ChangeID); !errors.Is(err, ErrUndoConflict) {
		t.Fatalf("undo after a later edit: %v, want ErrUndoConflict", err)
	}
	compareTrees(t, "after refused undo", readTree(t, work), mid)
	if err := a.Undo(ctx, snaps, "chg_unknown"); !errors.Is(err, ErrUnknownChange) {
		t.Fatalf("undo unknown: %v", err)
	}
}

// TestModeChangeFromDiff: "old mode/new mode" in a git diff makes a file
// executable, and undo restores 0644.
func TestModeChangeFromDiff(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"run.sh": "#!/bin/sh\necho a\n"})
	a, snaps := newTestApplier(t, work)
	p, err := Parse("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n--- a/run.sh\n+++ b/run.sh\n@@ -2 +2 @@\n-echo a\n+echo b\n")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.Validate(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(filepath.Join(work, "run.sh"))
	if info.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v, want 0755", info.Mode())
	}
	if err := a.Undo(ctx, snaps, snaps.Last()); err != nil {
		t.Fatal(err)
	}
	info, _ = os.Stat(filepath.Join(work, "run.sh"))
	if info.Mode().Perm() != 0o644 {
		t.Fatalf("mode after undo %v, want 0644", info.Mode())
	}
}

func SR3(path, s, r string) string {
	return fmt.Sprintf("%s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n", path, s, r)
}

const crashEnv = "KZ_PATCH_CRASH_CHILD"

// crashProposal renames two files and edits a third: five file operations
// (three writes, two removals), so a kill can land between any two.
const crashProposal = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-alpha\n+ALPHA\n*** Update File: c.txt\n*** Move to: d.txt\n@@\n-gamma\n+GAMMA\n*** Update File: e.txt\n-epsilon\n+EPSILON\n*** End Patch\n"

// crashChild runs in the re-executed test binary: it applies the crash
// proposal and SIGKILLs itself after the n-th file operation.
func crashChild(m *testing.M) bool {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		return false
	}
	var work, journal string
	var n int
	if _, err := fmt.Sscanf(spec, "%d %s %s", &n, &work, &journal); err != nil {
		fmt.Fprintln(os.Stderr, "bad spec:", err)
		os.Exit(2)
	}
	fsys, err := workspace.Open(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	a := &Applier{FS: fsys, Snapshots: &MemorySnapshots{}, JournalDir: journal}
	a.afterWrite = func(step int) {
		if step == n {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	p, err := Parse(crashProposal)
	if err != nil {
		os.Exit(2)
	}
	ctx := context.Background()
	plan, err := a.Validate(ctx, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
	return true
}

// TestKillDuringRenamesRecoversAllOrNone SIGKILLs a real process after
// each of the five file operations of a two-rename proposal, then checks
// the tree is mid-change (the kill really landed between files) and that
// Recover brings it back to exactly the old tree.
func TestKillDuringRenamesRecoversAllOrNone(t *testing.T) {
	for n := 1; n <= 4; n++ {
		t.Run(fmt.Sprintf("kill_after_op_%d", n), func(t *testing.T) {
			work, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, work, map[string]string{"a.txt": "alpha\n", "c.txt": "gamma\n", "e.txt": "epsilon\n"})
			before := readTree(t, work)
			journal := filepath.Join(t.TempDir(), "journal")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s %s", crashEnv, n, work, journal))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed: %v\n%s", err, out)
			}
			mid := readTree(t, work)
			if len(mid) == len(before) && mid["a.txt"].content != nil && string(mid["e.txt"].content) == "epsilon\n" && mid["b.txt"].content == nil {
				t.Fatalf("the kill left the old tree; it did not land between files: %v", mid)
			}
			a := &Applier{FS: openWorkspace(t, work), Snapshots: &MemorySnapshots{}, JournalDir: journal}
			ids, err := a.Recover(context.Background())
			if err != nil || len(ids) != 1 {
				t.Fatalf("recover: %v %v", ids, err)
			}
			compareTrees(t, "after recover", readTree(t, work), before)
			if ids, err := a.Recover(context.Background()); err != nil || len(ids) != 0 {
				t.Fatalf("second recover: %v %v", ids, err)
			}
		})
	}
}

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestPatchProposalCLIRetriesAppliesAndVerifies runs the command line of
// the patch-proposal issue:
//
//	kz -p ... --mode patch-proposal --runtime scripted --script S --permission-mode accept-edits
//
// The script's first proposal does not match the file: nothing is written
// and the model gets only the failed edit with the nearest real lines. Its
// second proposal modifies a CRLF file, adds a file and renames an
// executable one; it is applied atomically and its verification commands
// go through the gate: the read-only one runs and reports its result as
// events, the one that writes is denied by the mode even though a rule
// allows it. kz undo then restores the exact previous tree.
func TestPatchProposalCLIRetriesAppliesAndVerifies(t *testing.T) {
	sb := newSandbox(t)
	sb.userConfig("[permissions]\nallow = [\"Bash(grep:*)\", \"Bash(touch:*)\"]\n")
	write := func(rel, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(sb.workspace, rel)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("greeting.txt", "hello moon\r\nbye\r\n", 0o640)
	write("notes.txt", "draft\n", 0o755)
	if err := os.Mkdir(filepath.Join(sb.workspace, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := patchCLITree(t, sb.workspace)

	// newSandbox changed into the workspace; the script path is resolved
	// from the testdata directory captured by scriptDir.
	s := filepath.Join(filepath.Dir(scriptDir), "patch", "cli", "propose-retry-verify.jsonl")
	out, errOut, code := sb.kz("-p", "greet the world", "--mode", "patch-proposal", "--runtime", "scripted", "--script", s,
		"--permission-mode", "accept-edits", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}

	read := func(rel string) (string, os.FileMode) {
		t.Helper()
		p := filepath.Join(sb.workspace, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v\n%s", rel, err, out)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), fi.Mode().Perm()
	}
	if c, m := read("greeting.txt"); c != "hello world\r\nbye\r\n" || m != 0o640 {
		t.Fatalf("greeting.txt = %q mode %o, want CRLF kept and 0640", c, m)
	}
	if c, _ := read("docs/farewell.txt"); c != "see you\n" {
		t.Fatalf("docs/farewell.txt = %q", c)
	}
	if c, m := read("docs/notes.txt"); c != "final\n" || m != 0o755 {
		t.Fatalf("docs/notes.txt = %q mode %o, want the edit and 0755 kept", c, m)
	}
	for _, gone := range []string{"notes.txt", "verified.txt"} {
		if _, err := os.Lstat(filepath.Join(sb.workspace, gone)); !os.IsNotExist(err) {
			t.Fatalf("%s exists after the run: %v", gone, err)
		}
	}

	var (
		rejected, proposed, applied []engine.Event
		grepFinished, touchStarted  bool
		touchDenied                 *engine.Event
	)
	evs := streamEvents(t, out)
	for i, ev := range evs {
		switch ev.Type {
		case engine.EventPatchRejected:
			rejected = append(rejected, ev)
		case engine.EventPatchProposed:
			proposed = append(proposed, ev)
		case engine.EventPatchApplied:
			applied = append(applied, ev)
		case engine.EventCommandStarted:
			touchStarted = touchStarted || strings.HasPrefix(ev.Command, "touch")
		case engine.EventCommandFinished:
			if ev.Command == "grep -q 'hello world' greeting.txt" && ev.ExitCode != nil && *ev.ExitCode == 0 && !ev.IsError {
				grepFinished = true
			}
		case engine.EventPermissionDecided:
			if ev.Decision == engine.DecisionDeny && strings.Contains(ev.Reason, "patch-proposal") {
				touchDenied = &evs[i]
			}
		}
	}
	if len(rejected) != 1 || rejected[0].Reason != "invalid" {
		t.Fatalf("want one invalid proposal rejected first, got %+v", rejected)
	}
	fb := rejected[0].Text
	if !strings.Contains(fb, "NOT applied") || !strings.Contains(fb, "hello mars") || !strings.Contains(fb, "1 | hello moon") {
		t.Fatalf("feedback lacks the failed edit or the nearest lines:\n%s", fb)
	}
	if len(proposed) != 1 || len(proposed[0].Files) != 3 || proposed[0].PatchID == "" {
		t.Fatalf("patch_proposed = %+v", proposed)
	}
	for _, f := range proposed[0].Files {
		if f.Diff == "" {
			t.Fatalf("file %s proposed without a diff", f.Path)
		}
	}
	if len(applied) != 1 || len(applied[0].Files) != 3 || applied[0].PatchID != proposed[0].PatchID {
		t.Fatalf("patch_applied = %+v", applied)
	}
	if !grepFinished {
		t.Fatalf("the verification command did not run to success as events:\n%s", out)
	}
	if touchDenied == nil || touchStarted {
		t.Fatalf("a verification command that writes was not denied by the mode (denied %v, started %v):\n%s", touchDenied, touchStarted, out)
	}

	if out, errOut, code := sb.kz("undo"); code != 0 || !strings.Contains(out, "undid chg_") {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	after := patchCLITree(t, sb.workspace)
	if len(after) != len(before) {
		t.Fatalf("after undo %v, want %v", patchCLIKeys(after), patchCLIKeys(before))
	}
	for rel, want := range before {
		if got := after[rel]; got != want {
			t.Fatalf("after undo %s = %q, want %q", rel, got, want)
		}
	}
}

// patchCLITree maps each regular file under dir to its mode and bytes.
func patchCLITree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Mode().Perm().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func patchCLIKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

const patchCrashEnv = "KZ_PATCH_CLI_CRASH_CHILD"

// blockingFS is the workspace, except that the write of block waits until
// first holds its new content, then announces itself in marker and hangs,
// so the parent can SIGKILL the process between the two files of one
// change. The applier writes through directory handles (patch.DirFS), so
// the hold is in the root directory's handle, where both files are.
type blockingFS struct {
	*workspace.Workspace
	first, firstContent, block, marker string
}

func (f blockingFS) OpenRootDir() (patch.Dir, error) {
	d, err := patch.RootDirFS(f.Root()).OpenRootDir()
	if err != nil {
		return nil, err
	}
	return blockingDir{Dir: d, f: f}, nil
}

type blockingDir struct {
	patch.Dir
	f blockingFS
}

func (d blockingDir) WriteTemp(name string, data []byte, mode os.FileMode) (string, error) {
	if name == d.f.block {
		for {
			if b, err := os.ReadFile(filepath.Join(d.f.Dir(), d.f.first)); err == nil && string(b) == d.f.firstContent {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := os.WriteFile(d.f.marker, nil, 0o600); err != nil {
			return "", err
		}
		select {}
	}
	return d.Dir.WriteTemp(name, data, mode)
}

// TestPatchCLICrashChild is the process the crash test kills; it does
// nothing unless started by TestPatchCLIRestartRecoversCrashedChange.
func TestPatchCLICrashChild(t *testing.T) {
	spec := os.Getenv(patchCrashEnv)
	if spec == "" {
		t.Skip("only runs as the child of TestPatchCLIRestartRecoversCrashedChange")
	}
	parts := strings.Split(spec, "\n")
	if len(parts) != 3 {
		t.Fatalf("bad spec %q", spec)
	}
	work, journal, marker := parts[0], parts[1], parts[2]
	ws, err := workspace.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	a := &patch.Applier{FS: blockingFS{Workspace: ws, first: "a.txt", firstContent: "A\n", block: "b.txt", marker: marker},
		Snapshots: &patch.MemorySnapshots{}, JournalDir: journal, Root: ws.Dir()}
	p, err := patch.Parse("*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Apply(context.Background(), plan)
	t.Fatalf("apply returned (%v) instead of hanging until killed", err)
}

// TestPatchCLIRestartRecoversCrashedChange kills (SIGKILL) a real process
// in the middle of a two-file change, with its journal in kz's data
// directory, and checks that the next kz run restores both files to the
// state before the change and says so.
func TestPatchCLIRestartRecoversCrashedChange(t *testing.T) {
	sb := newSandbox(t)
	for rel, c := range map[string]string{"a.txt": "a\n", "b.txt": "b\n"} {
		if err := os.WriteFile(filepath.Join(sb.workspace, rel), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := patchCLITree(t, sb.workspace)
	ws, err := filepath.EvalSymlinks(sb.workspace)
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(sb.data, "kz", "journal")
	marker := filepath.Join(t.TempDir(), "blocked")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPatchCLICrashChild$")
	cmd.Env = append(os.Environ(), patchCrashEnv+"="+ws+"\n"+journal+"\n"+marker)
	var childOut strings.Builder
	cmd.Stdout, cmd.Stderr = &childOut, &childOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the child never reached the second file:\n%s", childOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	mid := patchCLITree(t, sb.workspace)
	if mid["a.txt"] == before["a.txt"] || mid["b.txt"] != before["b.txt"] {
		t.Fatalf("the kill did not land between the two files: %v", mid)
	}

	_, errOut, code := sb.kz("-p", "hi", "--runtime", "scripted", "--script", script("hello.jsonl"))
	if code != 0 || !strings.Contains(errOut, "restored 1 change(s) a crash left half-applied") {
		t.Fatalf("restart: exit %d, stderr %q", code, errOut)
	}
	after := patchCLITree(t, sb.workspace)
	for rel, want := range before {
		if after[rel] != want {
			t.Fatalf("after restart %s = %q, want %q", rel, after[rel], want)
		}
	}
	if ents, _ := os.ReadDir(journal); len(ents) != 0 {
		t.Fatalf("journal left after recovery: %v", ents)
	}
}

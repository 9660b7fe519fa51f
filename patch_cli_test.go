package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
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

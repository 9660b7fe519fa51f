package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestSeedProposalCLI runs a patch-proposal turn whose model answers in
// the design documents' JSON: files[].patch holds unified diffs and tests
// holds the verification commands. The first answer has a field kz does
// not know: it is rejected with feedback that names the field, and nothing
// is written. The second is applied, and its tests command runs through
// the gate as verification.
func TestSeedProposalCLI(t *testing.T) {
	sb := newSandbox(t)
	sb.userConfig("[permissions]\nallow = [\"Bash(grep:*)\"]\n")
	if err := os.WriteFile(filepath.Join(sb.workspace, "greeting.txt"), []byte("hello moon\nbye\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(filepath.Dir(scriptDir), "patch", "cli", "seed-proposal.jsonl")
	out, errOut, code := sb.kz("-p", "greet the world", "--mode", "patch-proposal", "--runtime", "scripted", "--script", s,
		"--permission-mode", "accept-edits", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rejected, applied []engine.Event
	verified := false
	for _, ev := range streamEvents(t, out) {
		switch ev.Type {
		case engine.EventPatchRejected:
			rejected = append(rejected, ev)
		case engine.EventPatchApplied:
			applied = append(applied, ev)
		case engine.EventCommandFinished:
			verified = verified || (ev.Command == "grep -q 'hello world' greeting.txt" && ev.ExitCode != nil && *ev.ExitCode == 0)
		}
	}
	if len(rejected) != 1 || rejected[0].Reason != "invalid" || !strings.Contains(rejected[0].Text, `"test_commands"`) {
		t.Fatalf("want the first proposal rejected naming its unknown field, got %+v", rejected)
	}
	if len(applied) != 1 || len(applied[0].Files) != 2 {
		t.Fatalf("patch_applied = %+v\n%s", applied, out)
	}
	for rel, want := range map[string]string{"greeting.txt": "hello world\nbye\n", "farewell.txt": "see you\n"} {
		if got, err := os.ReadFile(filepath.Join(sb.workspace, rel)); err != nil || string(got) != want {
			t.Fatalf("%s = %q, %v; want %q", rel, got, err, want)
		}
	}
	if !verified {
		t.Fatalf("the tests command did not run as verification:\n%s", out)
	}
}

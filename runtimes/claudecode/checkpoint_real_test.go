package claudecode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/checkpoint"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestRealBashChangeIsUndone drives the real CLI: the fake model has
// Claude Code's Bash edit one file, create one and delete one. kz's
// checkpointer, fed by the session the way every runtime's calls are,
// records the change in a real SQLite store, and the real kz binary's
// `kz undo` puts all three back.
func TestRealBashChangeIsUndone(t *testing.T) {
	api := newFakeAPI(t, scriptedBash(map[string]string{"KZ:edit": "sed -i s/old/new/ notes.txt && echo fresh > made.txt && rm doomed.txt"}))
	rt, ws := realSetup(t, api)
	for name, body := range map[string]string{"notes.txt": "the old line\n", "doomed.txt": "keep me\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	data, config := filepath.Join(tmp, "data"), filepath.Join(tmp, "config")
	clitest.Dirs(t, data, config)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	const id = "20260102-030405-c0ffee"
	if err := st.CreateSession(ctx, id, root.Dir(), "claude", "", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	tr := checkpoint.New(checkpoint.Options{WS: root, Store: checkpoint.SQLStore{St: st}})
	t.Cleanup(func() { _ = tr.Close() })
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{ID: id, Checkpoints: tr, Answer: clitest.AllowOnce})
	final := h.Run(t, ctx, "KZ:edit")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("turn: %+v", final)
	}
	h.Stop()
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "the new line\n" {
		t.Fatalf("Claude's Bash did not run: notes.txt = %q", b)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	kz := buildKz(t, tmp)
	undo := func(args ...string) string {
		cmd := exec.Command(kz, append([]string{"undo", "--data-dir", data}, args...)...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "XDG_DATA_HOME="+data, "XDG_STATE_HOME="+tmp, "HOME="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kz undo %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := undo("--list"); !strings.Contains(out, "Bash call of turn 1 on claude") || !strings.Contains(out, "made.txt (remove") ||
		!strings.Contains(out, "doomed.txt (put back") || !strings.Contains(out, "notes.txt (restore") {
		t.Fatalf("kz undo --list:\n%s", out)
	}
	undo()
	for name, want := range map[string]string{"notes.txt": "the old line\n", "doomed.txt": "keep me\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v) after kz undo, want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("made.txt is still there after kz undo: %v", err)
	}
}

// buildKz builds the kz binary into dir.
func buildKz(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "kz")
	build := exec.Command("go", "build", "-o", bin, "github.com/kaizen-code/kz")
	build.Dir = clitest.Repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kz: %v\n%s", err, out)
	}
	return bin
}

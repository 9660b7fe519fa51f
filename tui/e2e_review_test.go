package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/store"
)

// e2eBinary is the kz binary of an end-to-end test: KZ_BIN or KZ_E2E_BIN
// when set (make e2e), else one built into dir.
func e2eBinary(t *testing.T, dir string) string {
	t.Helper()
	for _, v := range []string{"KZ_BIN", "KZ_E2E_BIN"} {
		if bin := os.Getenv(v); bin != "" {
			return bin
		}
	}
	bin := filepath.Join(dir, "kz")
	build := exec.Command("go", "build", "-o", bin, "github.com/kaizen-code/kz")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kz: %v\n%s", err, out)
	}
	return bin
}

// TestE2EReview runs the real kz binary in tmux on the scripted runtime in
// patch-proposal mode: it reviews a two-hunk proposal, rejects the second
// hunk, applies, checks the file, undoes with /undo and checks the exact
// bytes again; then it opens the session picker and resumes an earlier
// session, whose transcript must come back on screen.
func TestE2EReview(t *testing.T) {
	if os.Getenv("KZ_E2E") != "1" {
		t.Skip("end-to-end test: set KZ_E2E=1 (make e2e) to run kz in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("KZ_E2E=1 but tmux is not installed")
	}
	tmp := t.TempDir()
	bin := e2eBinary(t, tmp)
	data, work, config := filepath.Join(tmp, "data"), filepath.Join(tmp, "work"), filepath.Join(tmp, "config")
	for _, d := range []string{data, work, config} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	orig := crlfSource()
	file := filepath.Join(work, "app.txt")
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	earlier := filepath.Join(tmp, "earlier.jsonl")
	if err := os.WriteFile(earlier, []byte(`{"type":"text_delta","text":"the earlier answer\n"}`+"\n"+
		`{"type":"assistant_message","text":"the earlier answer\n"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proposal := filepath.Join(tmp, "proposal.jsonl")
	if err := os.WriteFile(proposal, []byte(proposalScript()), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + config, "XDG_DATA_HOME=" + data, "XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "TERM=xterm-256color"}

	// An earlier session of this folder, run headless.
	first := exec.Command(bin, "-p", "the first question", "--runtime", "scripted", "--script", earlier, "--data-dir", data)
	first.Dir, first.Env = work, append(os.Environ(), env...)
	if out, err := first.CombinedOutput(); err != nil {
		t.Fatalf("headless session: %v\n%s", err, out)
	}
	earlierID := onlySession(t, data)
	t.Logf("earlier session %s", earlierID)

	p := &pane{t: t, socket: fmt.Sprintf("kz-e2e-review-%d", os.Getpid()), name: "kz"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	shell := fmt.Sprintf("cd %q && %s %q --runtime scripted --script %q --mode patch-proposal --data-dir %q; echo KZ-EXITED-$?; sleep 30",
		work, strings.Join(env, " "), bin, proposal, data)
	p.tmux("new-session", "-d", "-s", p.name, "-x", "120", "-y", "40", shell)
	p.waitFor("the status bar", "patch-proposal")

	// 1. The review of a scripted two-hunk proposal: reject hunk 2, apply.
	p.send("edit app.txt")
	p.keys("Enter")
	p.waitFor("the diff review", "Permission needed: apply_patch")
	p.waitFor("the file list", "M app.txt  +2 −2")
	time.Sleep(500 * time.Millisecond) // answer keys right away are ignored
	p.waitFor("hunk 1", "hunk 1/2")
	p.send("]")
	p.waitFor("hunk 2", "hunk 2/2")
	p.pause()
	p.send("x")
	p.waitFor("the rejected hunk", "✗ hunk rejected @@ -25,")
	p.waitFor("the partly accepted file", "◐ M app.txt")
	p.pause()
	p.send("y")
	p.waitFor("the applied patch", "patch applied")
	p.waitGone("the end of the turn", "running")
	want := strings.Replace(orig, "line 3\r\n", "line three\r\n", 1)
	if got, err := os.ReadFile(file); err != nil || string(got) != want {
		t.Fatalf("after the review the file is %q (%v), want %q", got, err, want)
	}

	// 2. Undo restores the exact bytes.
	p.send("/undo")
	p.keys("Enter")
	p.waitFor("the undo", "undone: undid")
	if got, err := os.ReadFile(file); err != nil || string(got) != orig {
		t.Fatalf("after undo the file is %q (%v), want %q", got, err, orig)
	}

	// 3. The session picker lists the earlier session; choosing it resumes
	// it with its transcript.
	p.send("/sessions")
	p.keys("Enter")
	p.waitFor("the session picker", "filter ›")
	p.waitFor("the earlier session", "the first question")
	p.send("first quest")
	p.waitFor("the filtered list", "1 of 2")
	p.keys("Enter")
	p.waitFor("the restored transcript", "the earlier answer")
	p.waitFor("the restored prompt", "the first question")
	if s := p.screen(); strings.Contains(s, "edit app.txt") {
		t.Fatalf("the resumed session shows the other session's prompt:\n%s", s)
	}
	p.keys("C-c")
	p.waitFor("kz to exit", "KZ-EXITED-0")

	// 4. kz --resume ID (a prefix) and kz --continue open the TUI on a
	// stored session with its transcript restored.
	// --continue takes the session of this folder updated last.
	latest := sessionsOf(t, data)[0]
	for i, c := range []struct{ flags, prompt, answer string }{
		{"--resume " + earlierID[:len(earlierID)-2], "the first question", "the earlier answer"},
		{"--continue", latest.Title, "✓ patch applied (some hunks rejected in app.txt)"},
	} {
		if c.flags == "--continue" && latest.ID == earlierID {
			c.answer = "the earlier answer"
		}
		flags := c.flags
		q := &pane{t: t, socket: p.socket, name: fmt.Sprintf("kz%d", i+2)}
		q.tmux("new-session", "-d", "-s", q.name, "-x", "120", "-y", "40", fmt.Sprintf(
			"cd %q && %s %q --runtime scripted --script %q %s --data-dir %q; echo KZ-EXITED-$?; sleep 30",
			work, strings.Join(env, " "), bin, earlier, flags, data))
		q.waitFor("the restored transcript ("+flags+")", c.answer)
		q.waitFor("the restored prompt ("+flags+")", c.prompt)
		q.keys("C-c")
		q.waitFor("kz to exit", "KZ-EXITED-0")
	}
}

// onlySession is the id of the one session stored in data.
func onlySession(t *testing.T, data string) string {
	t.Helper()
	list := sessionsOf(t, data)
	if len(list) != 1 {
		t.Fatalf("sessions = %+v; want one", list)
	}
	return list[0].ID
}

// sessionsOf lists the sessions stored in data, updated last first.
func sessionsOf(t *testing.T, data string) []store.SessionInfo {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	list, err := st.ListSessions(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

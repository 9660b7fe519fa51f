package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// tuiOnPty runs kz's TUI as a process on a pseudo-terminal in sb, with
// the given arguments, types each input (waiting for the screen to show
// the text paired with it first), and returns everything kz wrote to the
// terminal once it exited.
func tuiOnPty(t *testing.T, sb *sandbox, args []string, steps [][2]string) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ptmx.Close() }()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = sb.workspace
	cmd.Env = append(sb.environ(), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = tty.Close()
	scr := &screen{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(scr, ptmx)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for _, st := range steps {
		scr.waitFor(t, st[0], 20*time.Second)
		if _, err := ptmx.WriteString(st[1]); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kz exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("kz did not quit; the screen shows:\n%s", scr.text())
	}
	// Everything kz wrote is read once the terminal side is closed.
	<-copied
	scr.mu.Lock()
	defer scr.mu.Unlock()
	return scr.buf.String()
}

var resumeHint = regexp.MustCompile(`resume with: kz --resume ([0-9a-f-]+)\r?\n`)

// TestQuitPrintsTheResumeCommand: quitting the TUI of a session with a
// stored turn prints `resume with: kz --resume ID` on the normal screen,
// after kz left the alternate screen, with the id the store knows; and
// that command resumes it.
func TestQuitPrintsTheResumeCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs kz as a process on a pty")
	}
	sb := newProcessSandbox(t)
	out := tuiOnPty(t, sb, []string{"--script", script("hello.jsonl")},
		[][2]string{{"Ask kz", "hi\r"}, {"Hello, world.", "/quit\r"}})
	m := resumeHint.FindStringSubmatchIndex(out)
	if m == nil {
		t.Fatalf("no resume hint; kz wrote:\n%q", tail(out, 600))
	}
	if leave := strings.LastIndex(out, "\x1b[?1049l"); leave < 0 || leave > m[0] {
		t.Errorf("the hint is not after the terminal was restored (alt screen left at %d, hint at %d):\n%q", leave, m[0], tail(out, 600))
	}
	id := out[m[2]:m[3]]
	list, _, _ := sb.kzProcess(nil, "sessions", "list")
	if !strings.Contains(list, id) {
		t.Fatalf("the hint's id %s is not a stored session:\n%s", id, list)
	}
	again, errOut, code := sb.kzProcess(nil, "-p", "again", "--resume", id, "--script", script("hello.jsonl"))
	if code != 0 || !strings.Contains(again, "Hello, world.") {
		t.Errorf("kz --resume %s: exit %d %s %s", id, code, again, errOut)
	}
}

// TestQuitWithoutATurnPrintsNoResumeCommand: a session nothing was asked
// in has nothing to resume, and kz says nothing.
func TestQuitWithoutATurnPrintsNoResumeCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs kz as a process on a pty")
	}
	sb := newProcessSandbox(t)
	out := tuiOnPty(t, sb, []string{"--script", script("hello.jsonl")}, [][2]string{{"Ask kz", "/quit\r"}})
	if bytes.Contains([]byte(out), []byte("resume with")) {
		t.Errorf("a hint for a session without turns:\n%q", tail(out, 600))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

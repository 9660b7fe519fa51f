package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// startHolder starts kz -p as a separate process on a long, slow script
// and waits for its first event: from then on that process holds its
// session. It returns the process, the session id and the process's
// stdout, which the caller may close to break the pipe.
func (sb *sandbox) startHolder(extra ...string) (*exec.Cmd, string, io.ReadCloser) {
	sb.t.Helper()
	path := filepath.Join(sb.workspace, "slow.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"text_delta","text":"y","delay_ms":5,"repeat":100000}`+"\n"), 0o644); err != nil {
		sb.t.Fatal(err)
	}
	args := append([]string{"-p", "hold", "--script", path, "--output-format", "stream-json"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "KZ_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		sb.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		sb.t.Fatal(err)
	}
	sb.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		sb.t.Fatalf("the holder printed nothing: %v", sc.Err())
	}
	var ev engine.Event
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.SessionID == "" {
		sb.t.Fatalf("first event %q: %v", sc.Text(), err)
	}
	// The session row is written with the writer's first batch, a moment
	// after the first event is printed.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, _, code := sb.kz("sessions", "show", ev.SessionID); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			sb.t.Fatalf("session %s was never stored", ev.SessionID)
		}
	}
	return cmd, ev.SessionID, stdout
}

// TestASessionIsUsedByOneKzAtATime: while one kz process runs a turn of a
// session (a new one, even before it is stored whole), a second kz
// resuming it, kz sessions delete and kz undo are refused before doing
// anything, naming the holder; once the holder is killed (-9, no clean-up
// at all) the session is free again and keeps both turns.
func TestASessionIsUsedByOneKzAtATime(t *testing.T) {
	sb := newSandbox(t)
	holder, id, _ := sb.startHolder()
	pid := "(pid " + strconv.Itoa(holder.Process.Pid) + ")"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "also", "--resume", id, "--script", script("hello.jsonl"), "--output-format", "json"}, "wait for it to finish or start a new session"},
		{[]string{"-p", "also", "--continue", "--script", script("hello.jsonl")}, "wait for it to finish or start a new session"},
		{[]string{"sessions", "delete", id}, "wait for it to finish, then delete it"},
		{[]string{"undo", id}, "use /undo in that kz, or wait for it to finish"},
	} {
		out, errOut, code := sb.kz(c.args...)
		want := "kz: session " + id + " is in use by another kz " + pid + "; " + c.want
		if code != 1 || !strings.Contains(errOut, want) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Fatalf("kz %v: exit %d, stderr %q, want one line %q", c.args, code, errOut, want)
		}
		if strings.Contains(out, "Hello") {
			t.Fatalf("kz %v ran a turn on a session in use: %s", c.args, out)
		}
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	out, errOut, code := sb.kz("-p", "again", "--resume", id, "--script", script("hello.jsonl"))
	if code != 0 || !strings.Contains(out, "Hello, world.") {
		t.Fatalf("resume after the holder was killed: exit %d %s %s", code, out, errOut)
	}
	show, _, _ := sb.kz("sessions", "show", id)
	if !strings.Contains(show, "interrupted") || !strings.Contains(show, "complete") {
		t.Fatalf("show:\n%s", show)
	}
	if out, errOut, code := sb.kz("sessions", "delete", id); code != 0 || !strings.Contains(out, "deleted "+id) {
		t.Fatalf("delete of a free session: exit %d %s %s", code, out, errOut)
	}
}

// TestUndoActsInTheFolderOfTheChange: a session started in wa and resumed
// in wb applies a change in wb. kz undo from wa is refused, naming wb, and
// touches neither folder; kz undo in wb (no id needed) restores wb.
func TestUndoActsInTheFolderOfTheChange(t *testing.T) {
	sb := newSandbox(t)
	wa := sb.workspace
	wb := filepath.Join(filepath.Dir(wa), "projb")
	if err := os.Mkdir(wb, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sb.kz("-p", "hi", "--script", script("hello.jsonl"), "--output-format", "json")
	var final engine.Event
	if code != 0 || json.Unmarshal([]byte(out), &final) != nil {
		t.Fatalf("first turn: exit %d %s %s", code, out, errOut)
	}
	id := final.SessionID
	// wa holds exactly what the change writes in wb: an undo aimed at the
	// wrong folder would find nothing amiss and rewrite it.
	writeFile(t, filepath.Join(wa, "greeting.txt"), "hello world\r\nbye\r\n")
	writeFile(t, filepath.Join(wb, "greeting.txt"), "hello moon\r\nbye\r\n")
	t.Chdir(wb)
	if _, errOut, code := sb.kz("-p", "fix", "--resume", id, "--mode", "patch-proposal", "--script", script("patch.jsonl"), "--permission-mode", "accept-edits"); code != 0 {
		t.Fatalf("patch in wb: exit %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(wb, "greeting.txt")); string(b) != "hello world\r\nbye\r\n" {
		t.Fatalf("wb after the patch: %q", b)
	}
	t.Chdir(wa)
	for _, args := range [][]string{{"undo", id}, {"undo"}} {
		_, errOut, code := sb.kz(args...)
		if code != 1 || !strings.Contains(errOut, "was applied in "+wb) || !strings.Contains(errOut, "cd "+wb+" && kz undo "+id) ||
			strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Fatalf("kz %v in wa: exit %d %q", args, code, errOut)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(wa, "greeting.txt")); string(b) != "hello world\r\nbye\r\n" {
		t.Fatalf("undo from wa changed wa: %q", b)
	}
	t.Chdir(wb)
	out, errOut, code = sb.kz("undo")
	if code != 0 || !strings.Contains(out, "undid chg_") || !strings.Contains(out, wb) {
		t.Fatalf("undo in wb: exit %d %s %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(wb, "greeting.txt")); string(b) != "hello moon\r\nbye\r\n" {
		t.Fatalf("wb after undo: %q", b)
	}
	// A folder without sessions: the message is about undo.
	wc := filepath.Join(filepath.Dir(wa), "projc")
	if err := os.Mkdir(wc, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wc)
	if _, errOut, code := sb.kz("undo"); code != 1 || !strings.Contains(errOut, "no such session in "+wc+" to undo") || strings.Contains(errOut, "continue") {
		t.Fatalf("undo without a session: exit %d %q", code, errOut)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUndoConflictMessageIsOneUsefulLine: an undo refused because the file
// changed since names the file plainly and says what to do.
func TestUndoConflictMessageIsOneUsefulLine(t *testing.T) {
	sb := newSandbox(t)
	file := filepath.Join(sb.workspace, "greeting.txt")
	writeFile(t, file, "hello moon\r\nbye\r\n")
	if _, errOut, code := sb.kz("-p", "fix", "--mode", "patch-proposal", "--script", script("patch.jsonl"), "--permission-mode", "accept-edits"); code != 0 {
		t.Fatalf("patch: exit %d %s", code, errOut)
	}
	writeFile(t, file, "my own words\n")
	_, errOut, code := sb.kz("undo")
	if code != 1 || !strings.HasPrefix(errOut, "kz: cannot undo chg_") || strings.Count(errOut, "chg_") != 1 ||
		!strings.Contains(errOut, "greeting.txt changed after it") || !strings.Contains(errOut, "undo again") ||
		strings.ContainsAny(errOut, "[]") || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Fatalf("undo after a later edit: exit %d %q", code, errOut)
	}
}

// TestHeadlessFlagsRefuseWhatTheyWouldIgnore: empty values, NaN budgets,
// a timeout without unit and a folder given as script are usage errors
// (or errors) with one line naming the flag as the help writes it.
func TestHeadlessFlagsRefuseWhatTheyWouldIgnore(t *testing.T) {
	sb := newSandbox(t)
	hello := script("hello.jsonl")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-p", "x", "--script", hello, "--mode", ""}, 2, "--mode needs a value"},
		{[]string{"-p", "x", "--script", hello, "--resume", ""}, 2, "--resume needs a value"},
		{[]string{"-p", "x", "--script", hello, "--data-dir", ""}, 2, "--data-dir needs a value"},
		{[]string{"sessions", "list", "--data-dir", ""}, 2, "--data-dir needs a value"},
		{[]string{"-p", "x", "--script", hello, "--budget-usd", "NaN"}, 2, `--budget-usd: "NaN" is not an amount of US dollars`},
		{[]string{"-p", "x", "--script", hello, "--budget-usd", "Inf"}, 2, `--budget-usd: "Inf" is not an amount`},
		{[]string{"-p", "x", "--script", hello, "--timeout", "90"}, 2, `--timeout: "90" is not a duration; use a unit, e.g. 90s or 10m`},
		{[]string{"-p", "x", "--script", hello, "--max-cycles", "many"}, 2, `--max-cycles: "many" is not a whole number`},
		{[]string{"-p", "x", "--frobnicate"}, 2, "unknown flag --frobnicate"},
		{[]string{"-p"}, 2, "-p needs a value"},
		{[]string{"-p", "x", "--script", os.TempDir()}, 1, "--script " + os.TempDir() + ": is a directory, not a script file"},
	} {
		out, errOut, code := sb.kz(c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("kz %q: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errOut, c.want)
		}
		if strings.Contains(out, "Hello") {
			t.Errorf("kz %q ran a turn", c.args)
		}
	}
	help, _, _ := sb.kz("--help")
	for _, flag := range []string{"--max-cycles", "--budget-usd", "--timeout"} {
		i := strings.Index(help, "  "+flag)
		if i < 0 || !strings.Contains(help[i:i+strings.Index(help[i:], "\n")], "(0: no limit)") {
			t.Errorf("help does not say 0 means no limit for %s", flag)
		}
	}
	if !strings.Contains(help, "-p - reads the") {
		t.Error("help does not document -p -")
	}
}

// TestSessionsListAndShowEscapeControlCharacters: a prompt holding escape
// sequences, a tab and a byte that is not UTF-8 reaches the terminal
// escaped, and the table keeps its columns.
func TestSessionsListAndShowEscapeControlCharacters(t *testing.T) {
	sb := newSandbox(t)
	prompt := "\x1b[2J\x1b]0;owned\x07red\xff\tpad"
	if _, errOut, code := sb.kz("-p", prompt, "--script", script("hello.jsonl")); code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	list, _, code := sb.kz("sessions", "list")
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	show, _, code2 := sb.kz("sessions", "show", id)
	for name, out := range map[string]string{"list": list, "show": show} {
		if code != 0 || code2 != 0 {
			t.Fatalf("exit %d %d", code, code2)
		}
		for _, b := range []byte(out) {
			if (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f || b == 0xff {
				t.Fatalf("%s prints byte %#x raw:\n%q", name, b, out)
			}
		}
		if !strings.Contains(out, `\x1b[2J\x1b]0;owned\x07red`+"\uFFFD"+`\tpad`) {
			t.Fatalf("%s does not show the title escaped:\n%q", name, out)
		}
	}
	// The header's columns line up with the row's.
	lines := strings.Split(list, "\n")
	if strings.Index(lines[0], "TITLE") != strings.Index(lines[1], `\x1b`) {
		t.Fatalf("columns broken:\n%s", list)
	}
}

// TestPromptFromStandardInput: kz -p - reads a prompt far over the argv
// limit from stdin; without -, stdin is never read.
func TestPromptFromStandardInput(t *testing.T) {
	sb := newSandbox(t)
	big := strings.Repeat("word ", 1<<20/5) + "end"
	stdin = strings.NewReader(big)
	t.Cleanup(func() { stdin = os.Stdin })
	out, errOut, code := sb.kz("-p", "-", "--script", script("hello.jsonl"), "--output-format", "json")
	var final engine.Event
	if code != 0 || json.Unmarshal([]byte(out), &final) != nil {
		t.Fatalf("exit %d %s", code, errOut)
	}
	js, _, _ := sb.kz("sessions", "export", final.SessionID, "--format", "json")
	var x struct{ Turns []struct{ Prompt string } }
	if err := json.Unmarshal([]byte(js), &x); err != nil || len(x.Turns) != 1 || x.Turns[0].Prompt != big {
		t.Fatalf("stored prompt is not the one on stdin (%v)", err)
	}
	stdin = readerFunc(func([]byte) (int, error) { t.Error("stdin read without -p -"); return 0, io.EOF })
	if _, errOut, code := sb.kz("-p", "x", "--script", script("hello.jsonl")); code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	stdin = strings.NewReader("  \n")
	if _, errOut, code := sb.kz("-p", "-", "--script", script("hello.jsonl")); code != 2 || !strings.Contains(errOut, "standard input held no prompt") {
		t.Fatalf("empty stdin: exit %d %q", code, errOut)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestRuntimesWarnsAboutIgnoredProjectRuntimes: kz runtimes says why a
// runtime of an untrusted project is missing, as kz -p does.
func TestRuntimesWarnsAboutIgnoredProjectRuntimes(t *testing.T) {
	sb := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(sb.workspace, ".kz"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sb.workspace, ".kz", "config.toml"), "[runtimes.evil]\nkind = \"scripted\"\nscript = \"x.jsonl\"\n")
	out, errOut, code := sb.kz("runtimes")
	if code != 0 || strings.Contains(out, "evil") || !strings.Contains(errOut, "runtime evil ignored until you trust this folder") {
		t.Fatalf("runtimes: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestClosedOutputInterruptsTheTurn: kz -p … | head -2 — the reader goes
// away mid-turn. kz is not killed by SIGPIPE: it ends the turn as
// interrupted, records it and exits 3.
func TestClosedOutputInterruptsTheTurn(t *testing.T) {
	sb := newSandbox(t)
	holder, id, stdout := sb.startHolder()
	if err := stdout.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- holder.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = holder.Process.Kill()
		t.Fatalf("kz went on after its output was closed (then: %v)", <-done)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit after the output closed: %v, want code 3", err)
	}
	// Recorded as interrupted by kz itself, not by the next open's
	// recovery of a dead process's turn: the claim is free and the turn
	// has its end.
	show, errOut, code := sb.kz("sessions", "show", id)
	if code != 0 || !strings.Contains(show, "interrupted") {
		t.Fatalf("show: exit %d %s %s", code, show, errOut)
	}
}

// TestReadOnlyDataDirStillListsSessions: with a data dir kz may not write,
// the commands that only show sessions still work (with a warning), and a
// turn fails with one line saying the data dir is read-only.
func TestReadOnlyDataDirStillListsSessions(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only folders; run as another user to test this")
	}
	sb := newSandbox(t)
	if _, errOut, code := sb.kz("-p", "hi", "--script", script("hello.jsonl")); code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	dir := filepath.Join(sb.data, "kz")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	out, errOut, code := sb.kz("sessions", "list")
	if code != 0 || !strings.Contains(out, "hi") || !strings.Contains(errOut, "read-only") {
		t.Fatalf("list: exit %d %s %s", code, out, errOut)
	}
	_, errOut, code = sb.kz("-p", "x", "--script", script("hello.jsonl"))
	if code != 1 || !strings.Contains(errOut, "is read-only, and kz must write its sessions there") {
		t.Fatalf("turn: exit %d %s", code, errOut)
	}
}

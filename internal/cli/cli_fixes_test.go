package cli

import (
	"bufio"
	"bytes"
	"context"
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
	// Each delta ends a line, which kz -p prints as soon as it is stored.
	if err := os.WriteFile(path, []byte(`{"type":"text_delta","text":"y\n","delay_ms":5,"repeat":100000}`+"\n"), 0o644); err != nil {
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
		// json promises a final_result even for a turn that cannot start.
		if c.args[len(c.args)-1] == "json" {
			if ev := jsonFinal(t, out); ev.Status != string(engine.StatusError) || !strings.Contains(ev.Text, "is in use by another kz") {
				t.Fatalf("final_result for a busy session: %+v", ev)
			}
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

// jsonFinal parses out as exactly one final_result line.
func jsonFinal(t *testing.T, out string) engine.Event {
	t.Helper()
	var ev engine.Event
	if strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &ev) != nil || ev.Type != engine.EventFinalResult {
		t.Fatalf("stdout is not one final_result: %q", out)
	}
	return ev
}

// TestJSONPrintsAFinalResultWhenTheTurnCannotStart: every error of
// kz -p --output-format json before a turn (a missing session or script,
// a bad script line or config, a locks dir kz cannot use) still prints
// one final_result with status error and the error in text, and exits 1;
// stream-json prints it as its one line, text prints nothing on stdout,
// and a usage error prints
// no final_result in any format.
func TestJSONPrintsAFinalResultWhenTheTurnCannotStart(t *testing.T) {
	sb := newSandbox(t)
	bad := filepath.Join(sb.workspace, "bad.jsonl")
	writeFile(t, bad, "{\"type\":\"text_delta\",\"text\":\"ok\"}\n{\"type\": \"text_delta\", \"tex\": 1}\n")
	hello := script("hello.jsonl")
	locks := filepath.Join(sb.data, "kz", "locks")
	for _, c := range []struct {
		name  string
		setup func()
		args  []string
		want  string
	}{
		{"missing session", nil, []string{"--resume", "nosuch", "--script", hello}, "no such session: nosuch"},
		{"missing script", nil, []string{"--script", "/nonexistent"}, "--script /nonexistent: no such file"},
		{"bad script line", nil, []string{"--script", bad}, bad + ":2: malformed line"},
		{"bad config", func() { sb.userConfig("colour = \"red\"\n") }, []string{"--script", hello}, `unknown key "colour"`},
		{"unusable locks dir", func() {
			sb.userConfig("")
			_ = os.RemoveAll(locks)
			writeFile(t, locks, "not a directory")
		}, []string{"--script", hello}, "locks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup()
			}
			args := append([]string{"-p", "x"}, c.args...)
			out, errOut, code := sb.kz(append(args, "--output-format", "json")...)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Fatalf("json: exit %d, stderr %q, want %q", code, errOut, c.want)
			}
			ev := jsonFinal(t, out)
			if ev.Status != string(engine.StatusError) || !strings.Contains(ev.Text, c.want) || ev.ErrorKind == "" {
				t.Fatalf("final_result %+v, want status error with %q", ev, c.want)
			}
			if out, errOut, code := sb.kz(append(args, "--output-format", "text")...); code != 1 || out != "" || !strings.Contains(errOut, c.want) {
				t.Fatalf("text: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			out, errOut, code = sb.kz(append(args, "--output-format", "stream-json")...)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Fatalf("stream-json: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if evs := streamEvents(t, out); len(evs) != 1 || evs[0].Type != engine.EventFinalResult || evs[0].Status != string(engine.StatusError) {
				t.Fatalf("stream-json: stdout %q, want one final_result", out)
			}
		})
	}
	if out, _, code := sb.kz("-p", "x", "--mode", "turbo", "--output-format", "json"); code != 2 || out != "" {
		t.Fatalf("usage error: exit %d, stdout %q", code, out)
	}
}

// TestCancelledBeforeTheTurnIsInterrupted: a signal (or a closed output)
// while kz opens a new database, before any turn, ends kz with exit 3 and
// one line saying it was interrupted, not exit 1 with the migration's
// "context canceled"; json still prints its final_result, interrupted.
func TestCancelledBeforeTheTurnIsInterrupted(t *testing.T) {
	_ = newSandbox(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errOutputClosed)
	for _, args := range [][]string{
		{"-p", "x", "--script", script("hello.jsonl"), "--output-format", "json"},
		{"-p", "x", "--script", script("hello.jsonl")},
		{"sessions", "list"},
	} {
		var out, errOut bytes.Buffer
		code := run(ctx, args, &out, &errOut)
		if code != 3 || errOut.String() != "kz: interrupted: the output was closed\n" {
			t.Fatalf("kz %q: exit %d, stderr %q", args, code, errOut.String())
		}
		if args[len(args)-1] == "json" {
			if ev := jsonFinal(t, out.String()); ev.Status != string(engine.StatusInterrupted) {
				t.Fatalf("final_result %+v", ev)
			}
		} else if out.Len() != 0 {
			t.Fatalf("kz %q printed %q", args, out.String())
		}
	}
	// A plain cancel (no cause) says just "interrupted".
	ctx, stop := context.WithCancel(context.Background())
	stop()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"sessions", "list"}, &out, &errOut); code != 3 || errOut.String() != "kz: interrupted\n" {
		t.Fatalf("plain cancel: exit %d, stderr %q", code, errOut.String())
	}
}

// TestUndoTakesThisFoldersChangeOfASessionThatMovedOn: a session applies
// a change in fa, then (resumed) one in fb. kz undo in fa, with or
// without the id, undoes fa's change and leaves fb's; once fa has none
// left the refusal names fb and a command that works, --data-dir (given
// after the id) included.
func TestUndoTakesThisFoldersChangeOfASessionThatMovedOn(t *testing.T) {
	sb := newSandbox(t)
	fa := sb.workspace
	fb := filepath.Join(filepath.Dir(fa), "projb")
	if err := os.Mkdir(fb, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(filepath.Dir(fa), "my data")
	patchArgs := []string{"-p", "fix", "--mode", "patch-proposal", "--script", script("patch.jsonl"), "--permission-mode", "accept-edits", "--data-dir", data, "--output-format", "json"}
	for _, args := range [][]string{{"undo"}, {"undo", "ID"}} {
		for _, w := range []string{fa, fb} {
			writeFile(t, filepath.Join(w, "greeting.txt"), "hello moon\n")
		}
		t.Chdir(fa)
		out, errOut, code := sb.kz(patchArgs...)
		if code != 0 {
			t.Fatalf("patch in fa: exit %d %s", code, errOut)
		}
		id := jsonFinal(t, out).SessionID
		t.Chdir(fb)
		if _, errOut, code := sb.kz(append(patchArgs, "--resume", id)...); code != 0 {
			t.Fatalf("patch in fb: exit %d %s", code, errOut)
		}
		t.Chdir(fa)
		undo := append(args, "--data-dir", data)
		if args[len(args)-1] == "ID" {
			undo[1] = id
		}
		if out, errOut, code := sb.kz(undo...); code != 0 || !strings.Contains(out, "undid chg_") {
			t.Fatalf("kz %q in fa: exit %d %s %s", undo, code, out, errOut)
		}
		for w, want := range map[string]string{fa: "hello moon\n", fb: "hello world\n"} {
			if b, _ := os.ReadFile(filepath.Join(w, "greeting.txt")); string(b) != want {
				t.Fatalf("kz %q: %s holds %q, want %q", undo, w, b, want)
			}
		}
		_, errOut, code = sb.kz("undo", id, "--data-dir", data)
		want := "was applied in " + fb + "; undo it from that folder: cd " + fb + " && kz undo " + id + " --data-dir '" + data + "'"
		if code != 1 || !strings.Contains(errOut, want) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Fatalf("second undo in fa: exit %d %q, want %q", code, errOut, want)
		}
	}
}

// TestSmallCLIInconsistencies: flags after kz undo's id, subcommands
// after flags, kz version with arguments, an empty session id and a
// timeout too long each get the right exit code and a message that says
// what to do.
func TestSmallCLIInconsistencies(t *testing.T) {
	sb := newSandbox(t)
	d := filepath.Join(sb.data, "elsewhere")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"undo", "nosuch", "--data-dir", d}, 1, "no such session: nosuch"},
		{[]string{"--data-dir", d, "sessions", "list"}, 2, "subcommands come first: kz sessions list --data-dir " + d},
		{[]string{"-p", "x", "sessions"}, 2, "unexpected argument \"sessions\" (quote the prompt"},
		{[]string{"version", "extra"}, 2, "kz version takes no arguments"},
		{[]string{"sessions", "delete", ""}, 2, "the session id is empty"},
		{[]string{"undo", ""}, 2, "the session id is empty"},
		{[]string{"-p", "x", "--timeout", "9999999h"}, 2, `--timeout: "9999999h" is out of range (at most 2562047h`},
		{[]string{"-p", "x", "--timeout", "90"}, 2, `--timeout: "90" is not a duration; use a unit`},
	} {
		_, errOut, code := sb.kz(c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("kz %q: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errOut, c.want)
		}
	}
}

// TestFinalResultOutputHoldsStreamedText: a turn whose runtime streams
// text without a closing assistant_message has that text as the json
// final_result's output, whole when it completes and as far as it got
// when it is interrupted.
func TestFinalResultOutputHoldsStreamedText(t *testing.T) {
	sb := newSandbox(t)
	complete := filepath.Join(sb.workspace, "deltas.jsonl")
	writeFile(t, complete, `{"type":"text_delta","text":"Hello"}`+"\n"+`{"type":"text_delta","text":", world."}`+"\n")
	out, errOut, code := sb.kz("-p", "x", "--script", complete, "--output-format", "json")
	if ev := jsonFinal(t, out); code != 0 || ev.Status != "complete" || ev.Output != "Hello, world." {
		t.Fatalf("complete: exit %d %+v %s", code, ev, errOut)
	}
	slow := filepath.Join(sb.workspace, "slow.jsonl")
	writeFile(t, slow, `{"type":"text_delta","text":"y","delay_ms":5,"repeat":100000}`+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(500*time.Millisecond, cancel)
	defer timer.Stop()
	var outb, errb bytes.Buffer
	code = run(ctx, []string{"-p", "x", "--script", slow, "--output-format", "json"}, &outb, &errb)
	ev := jsonFinal(t, outb.String())
	if code != 3 || ev.Status != "interrupted" || ev.Output == "" || strings.Trim(ev.Output, "y") != "" {
		t.Fatalf("interrupted: exit %d %+v %s", code, ev, errb.String())
	}
}

// TestSessionsDatesAreLocal: kz sessions list and show write the session's
// times as the local date and time of the zone TZ names, to the minute;
// the Markdown export adds the offset.
func TestSessionsDatesAreLocal(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	if _, errOut, code := sb.kzProcess(nil, "-p", "hi", "--script", script("hello.jsonl")); code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	// Three zones 13 hours apart: each shows its own wall clock.
	for _, c := range []struct{ tz, offset string }{{"UTC", "+00:00"}, {"Asia/Kolkata", "+05:30"}, {"America/Los_Angeles", "-0"}} {
		env := []string{"TZ=" + c.tz}
		before := time.Now()
		list, errOut, code := sb.kzProcess(env, "sessions", "list")
		if code != 0 {
			t.Fatalf("%s: exit %d %s", c.tz, code, errOut)
		}
		loc, err := time.LoadLocation(c.tz)
		if err != nil {
			t.Skipf("no zone data for %s: %v", c.tz, err)
		}
		fields := strings.Fields(strings.Split(list, "\n")[1])
		id, stamp := fields[0], fields[1]+" "+fields[2]
		at, err := time.ParseInLocation("2006-01-02 15:04", stamp, loc)
		if err != nil {
			t.Fatalf("%s: the list's date %q: %v\n%s", c.tz, stamp, err, list)
		}
		if d := before.Sub(at); d < 0 || d > 5*time.Minute {
			t.Errorf("%s: the list says %s, %s before now: not the local time\n%s", c.tz, stamp, d, list)
		}
		show, _, _ := sb.kzProcess(env, "sessions", "show", id)
		if !strings.Contains(show, "created   "+fields[1]+" ") {
			t.Errorf("%s: show does not give the local date:\n%s", c.tz, show)
		}
		md, _, _ := sb.kzProcess(env, "sessions", "export", id)
		if !strings.Contains(md, "- created: "+fields[1]+" ") || !strings.Contains(md, " "+c.offset) {
			t.Errorf("%s: the export's date has no local offset:\n%s", c.tz, md)
		}
	}
}

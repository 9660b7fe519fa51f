package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/kaizen-code/kz/internal/logging"
)

// fakeACPMain is the test binary as a minimal ACP agent (KZ_FAKE_ACP=1):
// it answers the handshake, and each prompt with a line that is not JSON
// (which kz logs that it skipped), a line on its own stderr (which kz
// keeps to itself) and a short answer.
func fakeACPMain() int {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("fake-acp 1.0.0")
		return 0
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	write := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = os.Stdout.Write(append(b, '\n'))
	}
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		reply := func(result any) { write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) }
		switch m.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": 1, "agentInfo": map[string]string{"name": "fake-acp", "version": "1.0.0"},
				"agentCapabilities": map[string]bool{"loadSession": false}})
		case "session/new":
			reply(map[string]string{"sessionId": "fake-1"})
		case "session/prompt":
			_, _ = fmt.Fprintln(os.Stderr, "the agent's own stderr")
			_, _ = fmt.Fprintln(os.Stdout, "this line is not JSON")
			write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "fake-1",
				"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": "fake answer from the agent"}}}})
			reply(map[string]string{"stopReason": "end_turn"})
		default:
			reply(map[string]any{})
		}
	}
	return 0
}

// fakeACPRuntime configures the fake ACP agent as the runtime fakeacp. The
// agent is a hard link of the test binary in the workspace, which the OS
// sandbox shows the agent (its /tmp, where the test binary is, is
// private).
func fakeACPRuntime(t *testing.T, sb *sandbox) {
	t.Helper()
	agent := filepath.Join(sb.workspace, "fake-acp-agent")
	if err := os.Link(os.Args[0], agent); err != nil {
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(agent, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb.userConfig(fmt.Sprintf("[runtimes.fakeacp]\nkind = \"acp\"\ncommand = %q\nenv = { KZ_FAKE_ACP = \"1\" }\n", agent))
}

// screen collects what a program writes to a pseudo-terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.Strip(s.buf.String())
}

// waitFor waits until the screen shows want.
func (s *screen) waitFor(t *testing.T, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(s.text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q; it shows:\n%s", want, s.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// While the TUI runs, nothing but the TUI writes to the terminal: a turn
// on an ACP agent that makes kz log (a line of the agent's that is not
// JSON) and writes to its own stderr leaves kz's stderr empty, and the
// log file in the state directory has the line. kz runs as a process on a
// pseudo-terminal with its stderr going to a file of its own, so that any
// package writing to stderr (slog's default, the standard logger, a child
// inheriting it) is caught. kz -p's stderr keeps its own messages and
// nothing else, its logs going to the same file.
func TestNothingButTheTUIWritesToTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kz as a process on a pty")
	}
	sb := newSandbox(t)
	fakeACPRuntime(t, sb)
	stderrPath := filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(stderrPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = errFile.Close() }()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ptmx.Close() }()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--runtime", "fakeacp")
	cmd.Dir = sb.workspace
	cmd.Env = append(os.Environ(), "KZ_MAIN=1", "TERM=xterm-256color", "KZ_LOG=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, errFile
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
	// exited closes once kz is reaped; waitErr is its status then.
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = ptmx.Close()
		<-copied
	}()

	scr.waitFor(t, "Ask kz", 20*time.Second)
	if _, err := ptmx.WriteString("hello agent\r"); err != nil {
		t.Fatal(err)
	}
	scr.waitFor(t, "fake answer from the agent", 30*time.Second)
	if _, err := ptmx.WriteString("/quit\r"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("kz exited with %v", waitErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("kz did not quit; the screen shows:\n%s", scr.text())
	}
	if b, _ := os.ReadFile(stderrPath); len(b) > 0 {
		t.Errorf("kz wrote to stderr while its TUI ran:\n%s", b)
	}
	logPath := filepath.Join(sb.state, "kz", logging.FileName)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("no log file: %v", err)
	}
	if n := strings.Count(string(b), "skipping a line that is not JSON"); n != 1 {
		t.Errorf("the log has %d lines about the agent's non-JSON line, want 1:\n%s", n, b)
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v, %v", fi.Mode(), err)
	}

	out, errOut, code := sb.kz("-p", "hello again", "--runtime", "fakeacp")
	if code != 0 || !strings.Contains(out, "fake answer from the agent") {
		t.Fatalf("kz -p exit %d: %s %s", code, out, errOut)
	}
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "kz: session ") {
		t.Errorf("kz -p's stderr holds more than its own message:\n%s", errOut)
	}
	if b, _ := os.ReadFile(logPath); strings.Count(string(b), "skipping a line that is not JSON") != 2 {
		t.Errorf("kz -p did not log to the file:\n%s", b)
	}
}

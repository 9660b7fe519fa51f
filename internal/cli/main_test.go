package cli

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
)

// TestMain doubles as the kz binary: with KZ_MAIN=1 the test binary runs
// kz's main, so process-level tests (kill -9) need no separate build.
func TestMain(m *testing.M) {
	// Sandboxed bash re-executes this binary as the Landlock wrapper.
	if code, ok := SandboxWrapper(os.Args); ok {
		os.Exit(code)
	}
	if os.Getenv("KZ_MAIN") == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	if os.Getenv("KZ_FAKE_ACP") == "1" {
		os.Exit(fakeACPMain())
	}
	mcptest.ServeIfChild()
	goleak.VerifyTestMain(m)
}

// sandbox gives a test its own workspace, config and data directories.
type sandbox struct {
	t         *testing.T
	workspace string
	config    string
	data      string
	// state holds the log and the agents' homes.
	state string
	// cache holds what kz remembers between runs to start faster (the
	// sandbox probe), out of the home that tests watch.
	cache string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	sb := newProcessSandbox(t)
	t.Setenv("XDG_CONFIG_HOME", sb.config)
	t.Setenv("XDG_DATA_HOME", sb.data)
	t.Setenv("XDG_STATE_HOME", sb.state)
	t.Setenv("XDG_CACHE_HOME", sb.cache)
	t.Setenv("PATH", "/usr/bin:/bin") // no agent CLI is found by accident
	t.Chdir(sb.workspace)
	return sb
}

// newProcessSandbox is newSandbox without changing this process's
// environment or directory: for tests that run kz only as a separate
// process (sb.kzProcess), which gets both from sb.environ and
// sb.workspace. Such tests may run in parallel; sb.kz may not be used.
func newProcessSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	sb := &sandbox{t: t, workspace: filepath.Join(root, "proj"), config: filepath.Join(root, "config"), data: filepath.Join(root, "data"),
		state: filepath.Join(root, "state"), cache: filepath.Join(root, "cache")}
	for _, d := range []string{sb.workspace, sb.config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return sb
}

// environ is the environment of a kz process run in the sandbox: this
// process's, with the sandbox's folders and a PATH on which no agent CLI
// is found by accident, and KZ_MAIN set so the test binary runs kz.
func (sb *sandbox) environ() []string {
	return append(os.Environ(), "XDG_CONFIG_HOME="+sb.config, "XDG_DATA_HOME="+sb.data, "XDG_STATE_HOME="+sb.state, "XDG_CACHE_HOME="+sb.cache,
		"PATH=/usr/bin:/bin", "KZ_MAIN=1")
}

// scriptDir is resolved before any test changes directory.
var scriptDir = func() string {
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "scripts"))
	if err != nil {
		panic(err)
	}
	return p
}()

func script(name string) string { return filepath.Join(scriptDir, name) }

func (sb *sandbox) userConfig(body string) {
	sb.t.Helper()
	if err := os.MkdirAll(filepath.Join(sb.config, "kz"), 0o755); err != nil {
		sb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.config, "kz", "config.toml"), []byte(body), 0o644); err != nil {
		sb.t.Fatal(err)
	}
}

func (sb *sandbox) kz(args ...string) (string, string, int) {
	sb.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	if strings.Contains(errb.String(), "panic") {
		sb.t.Fatalf("kz %v panicked: %s", args, errb.String())
	}
	return out.String(), errb.String(), code
}

func streamEvents(t *testing.T, out string) []engine.Event {
	t.Helper()
	var evs []engine.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev engine.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad stream line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestHeadlessTurnSessionsAndResume(t *testing.T) {
	sb := newSandbox(t)
	out, errOut, code := sb.kz("-p", "hi", "--runtime", "scripted", "--script", script("hello.jsonl"), "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := streamEvents(t, out)
	first, last := evs[0], evs[len(evs)-1]
	if first.Type != engine.EventSessionStarted || last.Type != engine.EventFinalResult || last.Status != "complete" {
		t.Fatalf("stream from %s to %s (%s)", first.Type, last.Type, last.Status)
	}
	id := last.SessionID
	for _, ev := range evs {
		if ev.SessionID != id || ev.Seq == 0 || ev.Runtime != "scripted" || ev.Time.IsZero() {
			t.Fatalf("event without session, seq, runtime or time: %+v", ev)
		}
	}

	list, _, code := sb.kz("sessions", "list")
	if code != 0 || !strings.Contains(list, id) {
		t.Fatalf("sessions list (exit %d):\n%s", code, list)
	}
	md, _, code := sb.kz("sessions", "export", id, "--format", "md")
	if code != 0 || !strings.Contains(md, "## Turn 1") || !strings.Contains(md, "hi") || !strings.Contains(md, "Hello, world.") {
		t.Fatalf("export md (exit %d):\n%s", code, md)
	}

	out, errOut, code = sb.kz("-p", "again", "--resume", id[:12], "--script", script("hello.jsonl"))
	if code != 0 || !strings.Contains(out, "Hello, world.") {
		t.Fatalf("resume exit %d: %s %s", code, out, errOut)
	}
	js, _, _ := sb.kz("sessions", "export", id, "--format", "json")
	var x struct {
		Session struct{ Turns int }
		Turns   []struct {
			Prompt, Status string
		}
	}
	if err := json.Unmarshal([]byte(js), &x); err != nil {
		t.Fatal(err)
	}
	if x.Session.Turns != 2 || len(x.Turns) != 2 || x.Turns[1].Prompt != "again" || x.Turns[1].Status != "complete" {
		t.Fatalf("resumed session = %+v", x)
	}
	list, _, _ = sb.kz("sessions", "list", "--json")
	var sessions []any
	_ = json.Unmarshal([]byte(list), &sessions)
	if len(sessions) != 1 {
		t.Fatalf("resume created a new session: %s", list)
	}
	// --continue picks the latest session of this folder.
	if _, errOut, code := sb.kz("-p", "third", "--continue", "--script", script("hello.jsonl")); code != 0 {
		t.Fatalf("continue: %d %s", code, errOut)
	}
	show, _, _ := sb.kz("sessions", "show", id)
	if !strings.Contains(show, "third") || strings.Count(show, "complete") != 3 {
		t.Fatalf("show:\n%s", show)
	}
	if out, _, code := sb.kz("sessions", "delete", id); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("delete: %d %s", code, out)
	}
}

func TestCapabilityMismatchFailsBeforeAnyTurn(t *testing.T) {
	sb := newSandbox(t)
	_, errOut, code := sb.kz("-p", "fix it", "--runtime", "scripted", "--script", script("text-only.jsonl"), "--mode", "full-autonomous")
	if code == 0 || !strings.Contains(errOut, "mode full-autonomous needs") || !strings.Contains(errOut, "patch-proposal") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("error is not one line: %q", errOut)
	}
	// json promises one final_result on stdout, even for a turn that
	// could not start.
	out, _, code := sb.kz("-p", "fix it", "--runtime", "scripted", "--script", script("text-only.jsonl"), "--mode", "full-autonomous", "--output-format", "json")
	var final engine.Event
	if err := json.Unmarshal([]byte(out), &final); err != nil || code != 1 || final.Type != engine.EventFinalResult ||
		final.Status != string(engine.StatusError) || !strings.Contains(final.Text, "mode full-autonomous needs") {
		t.Fatalf("json of a turn that cannot start: exit %d %q (%v)", code, out, err)
	}
	list, _, _ := sb.kz("sessions", "list", "--json")
	if strings.TrimSpace(list) != "null" && strings.TrimSpace(list) != "[]" {
		t.Fatalf("a refused turn left a session: %s", list)
	}
	out, errOut, code = sb.kz("-p", "propose", "--runtime", "scripted", "--script", script("text-only.jsonl"), "--mode", "patch-proposal")
	if code != 0 || !strings.Contains(out, "A text-only answer.") {
		t.Fatalf("patch-proposal: exit %d %s %s", code, out, errOut)
	}
}

func TestFailoverChainAndDenials(t *testing.T) {
	sb := newSandbox(t)
	sb.userConfig(fmt.Sprintf(`
failover = ["steady"]
[runtimes.flaky]
kind = "scripted"
script = %q
[runtimes.steady]
kind = "scripted"
script = %q
[runtimes.careful]
kind = "scripted"
script = %q
`, script("fail-overloaded.jsonl"), script("hello.jsonl"), script("deny.jsonl")))
	out, errOut, code := sb.kz("-p", "go", "--runtime", "flaky", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var switched *engine.Event
	evs := streamEvents(t, out)
	for i, ev := range evs {
		if ev.Type == engine.EventRuntimeSwitched {
			switched = &evs[i]
		}
	}
	last := evs[len(evs)-1]
	if switched == nil || switched.Reason != "failover" || !strings.HasPrefix(switched.From, "flaky") || !strings.HasPrefix(switched.To, "steady") {
		t.Fatalf("switch = %+v", switched)
	}
	if last.Status != "complete" || last.Runtime != "steady" {
		t.Fatalf("final = %+v", last)
	}

	out, errOut, code = sb.kz("-p", "clean up", "--runtime", "careful", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs = streamEvents(t, out)
	var denied bool
	for _, ev := range evs {
		if ev.Type == engine.EventRuntimeSwitched {
			t.Fatal("a denial failed over")
		}
		if ev.Type == engine.EventPermissionDecided && ev.Decision == engine.DecisionDeny && ev.Command == "rm -rf build" {
			denied = true
		}
	}
	if !denied || evs[len(evs)-1].Runtime != "careful" {
		t.Fatalf("denial not in the stream: %v", denied)
	}
	if _, errOut, _ := sb.kz("-p", "clean up", "--runtime", "careful"); !strings.Contains(errOut, "denied bash rm -rf build") {
		t.Fatalf("denial not reported in text mode: %s", errOut)
	}
	// yolo lets the same call through.
	out, _, _ = sb.kz("-p", "clean up", "--runtime", "careful", "--permission-mode", "yolo")
	if !strings.Contains(out, "build is gone.") {
		t.Fatalf("yolo: %s", out)
	}
}

func TestEachLimitHasItsStatusAndExit3(t *testing.T) {
	sb := newSandbox(t)
	for _, c := range []struct{ flag, value, status string }{
		{"--max-cycles", "2", "max_cycles"},
		{"--budget-usd", "1", "budget_exceeded"},
		{"--timeout", "300ms", "timeout"},
	} {
		out, errOut, code := sb.kz("-p", "loop", "--script", script("limits.jsonl"), "--output-format", "json", c.flag, c.value)
		var final engine.Event
		if err := json.Unmarshal([]byte(out), &final); err != nil {
			t.Fatalf("%s: %v (%s)", c.flag, err, out)
		}
		if code != 3 || final.Status != c.status || !strings.Contains(errOut, "turn ended: "+c.status) {
			t.Errorf("%s: exit %d status %s stderr %q", c.flag, code, final.Status, errOut)
		}
	}
}

func TestBadInputGetsOneLineErrors(t *testing.T) {
	sb := newSandbox(t)
	bad := filepath.Join(sb.workspace, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"type\":\"text_delta\",\"text\":\"ok\"}\n{\"type\": \"text_delta\", \"tex\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func()
		args  []string
		code  int
		want  string
	}{
		{"malformed script line", nil, []string{"-p", "x", "--script", bad}, 1, bad + ":2: malformed line"},
		{"unknown runtime", nil, []string{"-p", "x", "--runtime", "nope"}, 1, `unknown runtime "nope"`},
		{"scripted without script", nil, []string{"-p", "x", "--runtime", "scripted"}, 2, "needs --script"},
		{"bad mode", nil, []string{"-p", "x", "--mode", "turbo"}, 2, `unknown mode "turbo"`},
		{"bad flag", nil, []string{"-p", "x", "--frobnicate"}, 2, "frobnicate"},
		{"stray argument", nil, []string{"-p", "x", "extra"}, 2, "unexpected argument"},
		{"unknown config key", func() { sb.userConfig("default_mode = \"analysis-only\"\n\ncolour = \"red\"\n") }, []string{"-p", "x", "--script", script("hello.jsonl")}, 1, "config.toml:3: unknown key \"colour\""},
		{"unknown failover runtime", func() { sb.userConfig("failover = [\"scripted\", \"nosuch\"]\n") }, []string{"-p", "x", "--script", script("hello.jsonl")}, 1, `config.toml:1: failover: unknown runtime "nosuch"`},
		{"resume missing id", func() { sb.userConfig("") }, []string{"-p", "x", "--resume", "20990101-nothing", "--script", script("hello.jsonl")}, 1, "no such session: 20990101-nothing"},
		{"unreadable database", func() {
			_ = os.Remove(filepath.Join(sb.data, "kz", "kz.db"))
			if err := os.MkdirAll(filepath.Join(sb.data, "kz", "kz.db"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"sessions", "list"}, 1, "kz.db"},
		{"unknown command", nil, []string{"frob"}, 2, `unknown command "frob"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup()
			}
			_, errOut, code := sb.kz(c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, c.code, errOut, c.want)
			}
			if n := strings.Count(strings.TrimRight(errOut, "\n"), "\n"); n != 0 {
				t.Fatalf("error spans %d lines: %q", n+1, errOut)
			}
		})
	}
	// A file that is not a database is kept aside, with a line saying what
	// it was, and kz goes on with a fresh one.
	_ = os.RemoveAll(filepath.Join(sb.data, "kz", "kz.db"))
	if err := os.WriteFile(filepath.Join(sb.data, "kz", "kz.db"), bytes.Repeat([]byte("garbage!"), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sb.kz("-p", "x", "--script", script("hello.jsonl"))
	if code != 0 || !strings.Contains(errOut, "was damaged (file is not a database: it starts with \"garbage!") || !strings.Contains(out, "Hello") {
		t.Fatalf("corrupt db: exit %d %q", code, errOut)
	}
	if aside, _ := filepath.Glob(filepath.Join(sb.data, "kz", "kz.db.corrupt-*")); len(aside) == 0 {
		t.Fatal("corrupt database not kept aside")
	}
}

func TestUntrustedProjectCannotAllowOrStartRuntimes(t *testing.T) {
	sb := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(sb.workspace, ".kz"), 0o755); err != nil {
		t.Fatal(err)
	}
	proj := fmt.Sprintf("permission_mode = \"yolo\"\n[permissions]\nallow = [\"Bash(*)\"]\ndeny = [\"Bash(rm:*)\"]\n[runtimes.evil]\nkind = \"scripted\"\nscript = %q\n", script("hello.jsonl"))
	if err := os.WriteFile(filepath.Join(sb.workspace, ".kz", "config.toml"), []byte(proj), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sb.kz("-p", "clean", "--script", script("deny.jsonl"))
	if code != 0 || !strings.Contains(out, "I did not delete build.") {
		t.Fatalf("untrusted project loosened permissions: exit %d %s %s", code, out, errOut)
	}
	for _, w := range []string{"allow rules ignored", "runtime evil ignored", "permission_mode yolo ignored"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("no warning %q in %q", w, errOut)
		}
	}
	if out, _, code := sb.kz("trust"); code != 0 || !strings.Contains(out, "trusted") {
		t.Fatalf("trust: %d %s", code, out)
	}
	_, errOut, _ = sb.kz("-p", "clean", "--script", script("deny.jsonl"))
	if strings.Contains(errOut, "ignored") {
		t.Fatalf("trusted project still refused: %s", errOut)
	}
	// Changing the file withdraws the trust.
	if err := os.WriteFile(filepath.Join(sb.workspace, ".kz", "config.toml"), []byte(proj+"# changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ = sb.kz("-p", "clean", "--script", script("deny.jsonl"))
	if !strings.Contains(errOut, "allow rules ignored") {
		t.Fatalf("changed project kept its trust: %s", errOut)
	}
}

func TestVersionAndRuntimes(t *testing.T) {
	sb := newSandbox(t)
	out, _, code := sb.kz("version")
	if code != 0 || !strings.HasPrefix(out, "kz ") {
		t.Fatalf("version: %q", out)
	}
	out, _, code = sb.kz("runtimes")
	if code != 0 || !strings.Contains(out, "claude") || !strings.Contains(out, "claude not found") || !strings.Contains(out, "set the environment variable ANTHROPIC_API_KEY") {
		t.Fatalf("runtimes:\n%s", out)
	}
	out, _, code = sb.kz("--help")
	if code != 0 || !strings.Contains(out, "Exit codes") {
		t.Fatalf("help: %s", out)
	}
	// Every exit code kz uses is documented, with what it means.
	for _, want := range []string{"0  the turn completed", "1  error", "2  usage error", "3  the turn was interrupted or hit a limit"} {
		if !strings.Contains(out, want) {
			t.Errorf("kz --help does not document %q", want)
		}
	}
}

// TestKill9MidStream kills a kz -p while it streams and checks that the
// database is intact, keeps what was flushed, and marks the turn interrupted.
// startStream starts `kz -p` as a process on a script of the given
// lines, with stream-json output, and returns it with a scanner of its
// events.
func (sb *sandbox) startStream(script string) (*exec.Cmd, *bufio.Scanner) {
	sb.t.Helper()
	path := filepath.Join(sb.workspace, "long.jsonl")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		sb.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-p", "stream", "--script", path, "--output-format", "stream-json")
	cmd.Env = append(os.Environ(), "KZ_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		sb.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		sb.t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout)
}

func TestKill9MidStream(t *testing.T) {
	sb := newSandbox(t)
	var b strings.Builder
	b.WriteString(`{"type":"session_started"}` + "\n")
	b.WriteString(`{"type":"tool_call_started","tool_call_id":"c1","tool":"bash","input":{"command":"make"}}` + "\n")
	b.WriteString(`{"type":"text_delta","text":"x","repeat":200}` + "\n")
	// An error is must-deliver: the journal writes it at once.
	b.WriteString(`{"type":"error","text":"checkpoint","error_kind":"internal"}` + "\n")
	// Each delta ends a line: kz -p prints text once it is stored, and
	// the store cuts streamed text only where no secret can be split.
	b.WriteString(`{"type":"text_delta","text":"y\n","delay_ms":2,"repeat":100000}` + "\n")
	cmd, sc := sb.startStream(b.String())
	var sessionID string
	var ys int
	for sc.Scan() {
		var ev engine.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		sessionID = ev.SessionID
		if ev.Type == engine.EventTextDelta {
			ys += strings.Count(ev.Text, "y")
		}
		if ys > 300 {
			break
		}
	}
	time.Sleep(50 * time.Millisecond) // let a batch or two reach the disk
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	show, errOut, code := sb.kz("sessions", "show", sessionID)
	if code != 0 || !strings.Contains(show, "interrupted") {
		t.Fatalf("show after kill: exit %d %s %s", code, show, errOut)
	}
	db, err := sql.Open("sqlite3", filepath.Join(sb.data, "kz", "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var verdict string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&verdict); err != nil || verdict != "ok" {
		t.Fatalf("integrity_check = %q %v", verdict, err)
	}
	rows, err := db.Query("SELECT seq, type, data FROM events WHERE session_id = ? ORDER BY seq", sessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var types []string
	var xs, ysDB int
	var partial string
	prev := int64(0)
	for rows.Next() {
		var seq int64
		var typ, data string
		if err := rows.Scan(&seq, &typ, &data); err != nil {
			t.Fatal(err)
		}
		if seq <= prev {
			t.Fatalf("seq not increasing: %d after %d", seq, prev)
		}
		prev = seq
		types = append(types, typ)
		var ev engine.Event
		_ = json.Unmarshal([]byte(data), &ev)
		if typ == "text_delta" {
			xs += strings.Count(ev.Text, "x")
			ysDB += strings.Count(ev.Text, "y")
		}
		if typ == "assistant_message" && ev.Partial {
			partial = ev.Text
		}
	}
	joined := strings.Join(types, ",")
	for _, want := range []string{"user_message", "session_started", "tool_call_started", "error", "tool_call_finished", "final_result"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("event %s missing: %s", want, joined)
		}
	}
	if xs != 200 {
		t.Fatalf("deltas flushed before the checkpoint lost: %d of 200", xs)
	}
	if ysDB < ys {
		t.Fatalf("%d lines printed, %d stored", ys, ysDB)
	}
	if partial != strings.Repeat("x", 200)+strings.Repeat("y\n", ysDB) {
		t.Fatalf("partial answer does not match the persisted deltas (%d bytes)", len(partial))
	}
	var status, output string
	if err := db.QueryRow("SELECT IFNULL(status,''), (SELECT output FROM transcript WHERE session_id = ? AND tool_call_id = 'c1') FROM turns WHERE session_id = ?", sessionID, sessionID).Scan(&status, &output); err != nil {
		t.Fatal(err)
	}
	if status != "interrupted" || output != engine.InterruptedNotRerun {
		t.Fatalf("turn %q, tool output %q", status, output)
	}
}

func TestPatchProposalAppliesVerifiesAndUndoes(t *testing.T) {
	sb := newSandbox(t)
	sb.userConfig("[permissions]\nallow = [\"Bash(grep:*)\"]\n")
	file := filepath.Join(sb.workspace, "greeting.txt")
	if err := os.WriteFile(file, []byte("hello moon\r\nbye\r\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	// Headless with the default permission mode: asked, so denied, nothing written.
	out, errOut, code := sb.kz("-p", "fix the greeting", "--mode", "patch-proposal", "--script", script("patch.jsonl"), "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello moon\r\nbye\r\n" {
		t.Fatalf("a declined proposal changed the file: %q", b)
	}
	if !strings.Contains(out, `"type":"patch_rejected"`) {
		t.Fatalf("no patch_rejected: %s", out)
	}
	out, errOut, code = sb.kz("-p", "fix the greeting", "--mode", "patch-proposal", "--script", script("patch.jsonl"),
		"--permission-mode", "accept-edits", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(file)
	if string(b) != "hello world\r\nbye\r\n" {
		t.Fatalf("file after apply: %q", b)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	var applied, verified bool
	for _, ev := range streamEvents(t, out) {
		if ev.Type == engine.EventPatchApplied && len(ev.Files) == 1 && ev.Files[0].Path == "greeting.txt" {
			applied = true
		}
		if ev.Type == engine.EventCommandFinished && ev.Command == "grep -q 'hello world' greeting.txt" && ev.ExitCode != nil && *ev.ExitCode == 0 {
			verified = true
		}
	}
	if !applied || !verified {
		t.Fatalf("applied %v verified %v:\n%s", applied, verified, out)
	}
	if out, errOut, code := sb.kz("undo"); code != 0 || !strings.Contains(out, "undid chg_") {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello moon\r\nbye\r\n" {
		t.Fatalf("undo did not restore the exact bytes: %q", b)
	}
	if _, errOut, code := sb.kz("undo"); code != 1 || !strings.Contains(errOut, "no change to undo") {
		t.Fatalf("second undo: %d %s", code, errOut)
	}
}

func TestNativeRuntimeFromTheCommandLine(t *testing.T) {
	sb := newSandbox(t)
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "read_file", Args: `{"path":"notes.txt"}`}}, Usage: engine.Usage{InputTokens: 100, OutputTokens: 10}},
		llmtest.Reply{Text: "The notes say hi.", Usage: engine.Usage{InputTokens: 120, OutputTokens: 5}})
	t.Setenv("KZ_FAKE_KEY", "sk-test")
	sb.userConfig(fmt.Sprintf("[permissions]\ndeny = [\"Bash\"]\n[runtimes.fake]\nkind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_FAKE_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", fake.URL))
	if err := os.WriteFile(filepath.Join(sb.workspace, "notes.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sb.kz("-p", "what do the notes say?", "--runtime", "fake", "--model", "claude-sonnet-4-5", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := streamEvents(t, out)
	last := evs[len(evs)-1]
	if last.Status != "complete" || last.Output != "The notes say hi." || last.Usage == nil || last.Usage.InputTokens != 220 || last.CostUSD <= 0 {
		t.Fatalf("final = %+v", last)
	}
	var read bool
	for _, ev := range evs {
		if ev.Type == engine.EventToolCallFinished && ev.Tool == "read_file" && strings.Contains(ev.Output, "hi") {
			read = true
		}
	}
	// A bare deny rule removes the tool before the model sees it.
	if first := fake.Requests()[0]; first.Contains(`"name":"bash"`) || !first.Contains(`"name":"read_file"`) {
		t.Fatalf("tools offered: %s", first.Raw)
	}
	if !read || len(fake.Requests()) != 2 || !fake.Requests()[1].Contains("hi") {
		t.Fatalf("the file did not reach the model: read %v, %d requests", read, len(fake.Requests()))
	}
}

func TestPolicyCheckUsesTheGate(t *testing.T) {
	sb := newSandbox(t)
	sb.userConfig("[permissions]\nallow = [\"Bash(git status:*)\"]\ndeny = [\"Bash(rm:*)\"]\n")
	out, errOut, code := sb.kz("policy", "check", "--tool", "bash", "--input", `{"command":"git status && rm -rf build"}`, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Decision, Stage, Rule, Reason string
		Subcommands                   []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Decision != "deny" || rep.Stage != "deny_rule" || !strings.Contains(rep.Rule, "rm") || len(rep.Subcommands) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	out, _, _ = sb.kz("policy", "check", "--tool", "bash", "--input", `{"command":"git status"}`)
	if !strings.Contains(out, "decision: allow") {
		t.Fatalf("text report: %s", out)
	}
	out, _, _ = sb.kz("policy", "check", "--tool", "write_file", "--input", `{"path":".git/hooks/pre-commit","content":"x"}`, "--permission-mode", "yolo")
	if !strings.Contains(out, "decision: deny") {
		t.Fatalf(".git write in yolo: %s", out)
	}
	if _, errOut, code := sb.kz("policy", "check", "--tool", "bash", "--input", "{not json"); code != 2 || !strings.Contains(errOut, "not valid JSON") {
		t.Fatalf("bad input: %d %s", code, errOut)
	}
}

func TestWithResumeReplacesTheSessionFlags(t *testing.T) {
	t.Parallel()
	got := strings.Join(withResume([]string{"--continue", "--theme", "light", "--resume", "old", "--resume=x"}, "new"), " ")
	if got != "--theme light --resume new" {
		t.Fatalf("args = %q", got)
	}
}

// TestHangupInterruptsTheTurn: a hangup (the terminal closed) ends a
// headless turn like an interrupt: kz prints the final result, records the
// turn as interrupted and exits 3, instead of dying mid-write.
func TestHangupInterruptsTheTurn(t *testing.T) {
	sb := newSandbox(t)
	cmd, sc := sb.startStream(`{"type":"text_delta","text":"y\n","delay_ms":2,"repeat":100000}` + "\n")
	var sessionID, final string
	signalled := false
	for sc.Scan() {
		var ev engine.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		sessionID = ev.SessionID
		if ev.Type == engine.EventTextDelta && !signalled {
			if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
		if ev.Type == engine.EventFinalResult {
			final = string(ev.Status)
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit after a hangup: %v, want code 3", err)
	}
	if final != "interrupted" {
		t.Fatalf("final_result status %q, want interrupted", final)
	}
	show, errOut, code := sb.kz("sessions", "show", sessionID)
	if code != 0 || !strings.Contains(show, "interrupted") {
		t.Fatalf("show after a hangup: exit %d %s %s", code, show, errOut)
	}
}

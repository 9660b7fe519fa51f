package claudecode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
)

// The test binary doubles as a fake `claude`: with KZ_FAKE_CLAUDE_SCRIPT
// set it replays a JSONL script instead of running tests. "<-" lines are
// written to stdout as the CLI would; "->" lines are what kz must write
// next, checked as a subset of the real line; "fake" lines are actions.
func TestMain(m *testing.M) {
	if script := os.Getenv("KZ_FAKE_CLAUDE_SCRIPT"); script != "" {
		os.Exit(fakeMain(script, os.Getenv("KZ_FAKE_CLAUDE_REPORT")))
	}
	goleak.VerifyTestMain(m)
}

// scriptLine is one line of a fake CLI script (the samples' format plus
// fake actions).
type scriptLine struct {
	Dir  string          `json:"dir"`
	Msg  json.RawMessage `json:"msg,omitempty"`
	Kind string          `json:"kind,omitempty"`
	// fake actions: exit, sleep, child, hang, ignore_sigint, wait_sigint,
	// stream (Count text deltas carrying their send time, Every apart).
	Op     string `json:"op,omitempty"`
	Code   int    `json:"code,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	MS     int    `json:"ms,omitempty"`
	Count  int    `json:"count,omitempty"`
	Every  int    `json:"every_us,omitempty"`
}

// fakeMain replays script. Every check is written to report ("ok N …" or
// "FAIL …"), which the test reads after the process is gone.
func fakeMain(script, report string) int {
	rep, _ := os.OpenFile(report, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	logf := func(format string, args ...any) {
		if rep != nil {
			_, _ = fmt.Fprintf(rep, format+"\n", args...)
		}
	}
	logf("argv %s", strings.Join(os.Args[1:], "\x1f"))
	data, err := os.ReadFile(script)
	if err != nil {
		logf("FAIL read script: %v", err)
		return 3
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	ids := map[string]string{}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT)
	readLine := func() (map[string]any, bool) {
		for {
			line, err := in.ReadBytes('\n')
			if err != nil && len(line) == 0 {
				return nil, false
			}
			var got map[string]any
			if jerr := json.Unmarshal(line, &got); jerr != nil {
				logf("FAIL kz wrote a non-JSON line: %q", line)
				return nil, false
			}
			// kz always opens with initialize; answer it unless the
			// script wants to see it.
			if req, _ := got["request"].(map[string]any); got["type"] == "control_request" && req["subtype"] == "initialize" {
				if os.Getenv("KZ_FAKE_EXPECT_INIT") == "" {
					_, _ = fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"pid":%d}}}`+"\n", got["request_id"], os.Getpid())
					_ = out.Flush()
					continue
				}
			}
			return got, true
		}
	}
	for i, raw := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l scriptLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			logf("FAIL script line %d: %v", i, err)
			return 3
		}
		switch l.Dir {
		case "<-":
			msg := string(l.Msg)
			for rec, real := range ids {
				msg = strings.ReplaceAll(msg, `"request_id":"`+rec+`"`, `"request_id":"`+real+`"`)
			}
			_, _ = out.WriteString(msg + "\n")
			_ = out.Flush()
		case "->":
			got, ok := readLine()
			if !ok {
				logf("FAIL line %d: stdin closed, want %s", i, l.Msg)
				return 3
			}
			var want map[string]any
			_ = json.Unmarshal(l.Msg, &want)
			if want["type"] == "control_request" {
				ids[fmt.Sprint(want["request_id"])] = fmt.Sprint(got["request_id"])
				delete(want, "request_id")
			}
			if why := subset(want, got); why != "" {
				b, _ := json.Marshal(got)
				logf("FAIL line %d: %s\n  got %s", i, why, b)
				return 3
			}
			logf("ok %d %s", i, l.Kind)
		case "fake":
			switch l.Op {
			case "exit":
				_ = out.Flush()
				_, _ = fmt.Fprint(os.Stderr, l.Stderr)
				return l.Code
			case "sleep":
				time.Sleep(time.Duration(l.MS) * time.Millisecond)
			case "child":
				c := exec.Command("sleep", "60")
				if err := c.Start(); err != nil {
					logf("FAIL child: %v", err)
					return 3
				}
				logf("child %d", c.Process.Pid)
			case "exit_if_resume":
				if slices.Contains(os.Args, "--resume") {
					_, _ = fmt.Fprint(os.Stderr, l.Stderr)
					return 1
				}
			case "ignore_sigint":
				signal.Ignore(syscall.SIGINT)
			case "wait_sigint":
				<-sigs
				logf("ok %d sigint", i)
			case "hang":
				select {}
			case "stream":
				for n := 0; n < l.Count; n++ {
					_, _ = fmt.Fprintf(out, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d;"}},"session_id":"s","parent_tool_use_id":null}`+"\n", time.Now().UnixNano())
					_ = out.Flush()
					if l.Every > 0 {
						time.Sleep(time.Duration(l.Every) * time.Microsecond)
					}
				}
			}
		}
	}
	// Like the CLI: stay until stdin closes; anything kz writes now was
	// not expected.
	for {
		got, ok := readLine()
		if !ok {
			return 0
		}
		b, _ := json.Marshal(got)
		logf("FAIL unexpected line after the script: %s", b)
	}
}

// subset reports why want is not contained in got, or "". A string
// expected as "~text" only has to contain text.
func subset(want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("want object, got %T", got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				if wv == nil {
					continue
				}
				return fmt.Sprintf("missing key %q", k)
			}
			if why := subset(wv, gv); why != "" {
				return k + ": " + why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("want %d-element array, got %v", len(w), got)
		}
		for i := range w {
			if why := subset(w[i], g[i]); why != "" {
				return fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return ""
	case string:
		if strings.HasPrefix(w, "~") {
			if g, ok := got.(string); ok && strings.Contains(g, w[1:]) {
				return ""
			}
			return fmt.Sprintf("want text containing %q, got %v", w[1:], got)
		}
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("want %v, got %v", want, got)
	}
	return ""
}

// ---- harness ----

// memJournal keeps every event of a session in order.
type memJournal struct {
	mu  sync.Mutex
	evs []engine.Event
}

func (j *memJournal) Append(ev engine.Event) error {
	j.mu.Lock()
	j.evs = append(j.evs, ev)
	j.mu.Unlock()
	return nil
}

func (j *memJournal) Flush(context.Context) error { return nil }

func (j *memJournal) events() []engine.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]engine.Event(nil), j.evs...)
}

func (j *memJournal) ofType(t engine.EventType) []engine.Event {
	var out []engine.Event
	for _, ev := range j.events() {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// fake is one fake-CLI setup: a script, a report file and a runtime that
// runs the test binary as `claude`.
type fake struct {
	t      testing.TB
	dir    string
	report string
	rt     *Runtime
}

func newFake(t *testing.T, lines []scriptLine, env ...string) *fake {
	t.Helper()
	return newFakeTB(t, lines, env...)
}

// newFakeB is newFake for benchmarks.
func newFakeB(b *testing.B, lines []scriptLine) *fake { return newFakeTB(b, lines) }

func newFakeTB(t testing.TB, lines []scriptLine, env ...string) *fake {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	script := filepath.Join(dir, "script.jsonl")
	if err := os.WriteFile(script, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, dir: dir, report: filepath.Join(dir, "report.txt")}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	f.rt = New(Config{Name: "claude", Command: os.Args[0], Workspace: ws, KillGrace: 300 * time.Millisecond,
		Env: append([]string{"KZ_FAKE_CLAUDE_SCRIPT=" + script, "KZ_FAKE_CLAUDE_REPORT=" + f.report}, env...)})
	t.Cleanup(func() { _ = f.rt.Close() })
	return f
}

// reportLines returns the fake's report after its process ended.
func (f *fake) reportLines() []string {
	b, _ := os.ReadFile(f.report)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// checkReport fails the test on any FAIL line and returns the ok count.
func (f *fake) checkReport() int {
	f.t.Helper()
	oks := 0
	for _, l := range f.reportLines() {
		if strings.HasPrefix(l, "FAIL") {
			f.t.Errorf("fake claude: %s", l)
		}
		if strings.HasPrefix(l, "ok ") {
			oks++
		}
	}
	return oks
}

func (f *fake) argv() []string {
	for _, l := range f.reportLines() {
		if a, ok := strings.CutPrefix(l, "argv "); ok {
			return strings.Split(a, "\x1f")
		}
	}
	return nil
}

// harness is a kz session around runtimes, with a person who answers
// permission requests through answer and an onEvent hook.
type harness struct {
	s       *engine.Session
	journal *memJournal
	stop    func()
}

type harnessOpts struct {
	gate     engine.Gate
	pmode    engine.PermissionMode
	mode     engine.Mode
	failover []engine.ChainLink
	answer   func(ev engine.Event) engine.Answer
	onEvent  func(h *harness, ev engine.Event)
	prior    *engine.Prior
	// patcher reviews proposals in patch-proposal mode.
	patcher engine.Patcher
}

func newHarness(t *testing.T, runtimes []engine.RuntimeEntry, o harnessOpts) *harness {
	t.Helper()
	j := &memJournal{}
	ws := ""
	switch rt := runtimes[0].Runtime.(type) {
	case *Runtime:
		ws = rt.cfg.Workspace
	case *resultRecorder:
		ws = rt.cfg.Workspace
	}
	s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: j, Runtimes: runtimes, Gate: o.gate,
		Interactive: true, PermissionMode: o.pmode, Mode: o.mode, Failover: o.failover, Prior: o.prior, Patcher: o.patcher})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{s: s, journal: j}
	sub := s.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if o.onEvent != nil {
				o.onEvent(h, ev)
			}
			if ev.Type == engine.EventPermissionRequested && o.answer != nil {
				_ = s.Answer(ev.RequestID, o.answer(ev))
			}
		}
	}()
	h.stop = func() {
		cancel()
		sub.Close()
		<-done
		_ = s.Close(context.Background())
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) run(t *testing.T, ctx context.Context, prompt string) engine.Event {
	t.Helper()
	final, err := h.s.RunTurn(ctx, prompt)
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	return final
}

// sample loads the recorded lines of a sample file.
func sample(t *testing.T, name string) []scriptLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []scriptLine
	for _, raw := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l scriptLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatal(err)
		}
		if l.Dir == "meta" {
			continue
		}
		out = append(out, l)
	}
	return out
}

// kinds returns the recorded line of each kind label in the kinds sample.
func kinds(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for _, l := range sample(t, "claude-code.kinds.jsonl") {
		out[l.Kind] = l.Msg
	}
	return out
}

func cli(msg string) scriptLine  { return scriptLine{Dir: "<-", Msg: json.RawMessage(msg)} }
func host(msg string) scriptLine { return scriptLine{Dir: "->", Msg: json.RawMessage(msg)} }
func op(o string) scriptLine     { return scriptLine{Dir: "fake", Op: o} }

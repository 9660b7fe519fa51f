package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
)

// The test binary doubles as the fake CLI: with KZ_FAKE_SCRIPT set it
// replays a JSONL script instead of running tests. "<-" lines are written
// to stdout as the CLI would; "->" lines are what kz must write next,
// checked as a subset of the real line; "fake" lines are actions. Run k of
// one fake uses script-k.jsonl when it exists, so multi-turn tests give
// each CLI process its own script.
func TestMain(m *testing.M) {
	if script := os.Getenv("KZ_FAKE_SCRIPT"); script != "" {
		os.Exit(fakeMain(script, os.Getenv("KZ_FAKE_REPORT")))
	}
	goleak.VerifyTestMain(m)
}

// scriptLine is one line of a fake script (the samples' format plus fake
// actions).
type scriptLine struct {
	Dir  string          `json:"dir"`
	Msg  json.RawMessage `json:"msg,omitempty"`
	Kind string          `json:"kind,omitempty"`
	// fake actions: exit, sleep, child, hang, raw (write Text as is),
	// stream (Count text deltas carrying their send time, Every apart).
	Op     string `json:"op,omitempty"`
	Code   int    `json:"code,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	MS     int    `json:"ms,omitempty"`
	Count  int    `json:"count,omitempty"`
	Every  int    `json:"every_us,omitempty"`
	Text   string `json:"text,omitempty"`
}

func fakeMain(script, report string) int {
	rep, _ := os.OpenFile(report, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	logf := func(format string, args ...any) {
		if rep != nil {
			_, _ = fmt.Fprintf(rep, format+"\n", args...)
		}
	}
	run := 0
	if b, err := os.ReadFile(report); err == nil {
		run = strings.Count(string(b), "argv ")
	}
	logf("argv %s", strings.Join(os.Args[1:], "\x1f"))
	if alt := strings.TrimSuffix(script, ".jsonl") + "-" + strconv.Itoa(run) + ".jsonl"; fileExists(alt) {
		script = alt
	}
	data, err := os.ReadFile(script)
	if err != nil {
		logf("FAIL read script: %v", err)
		return 3
	}
	wd, _ := os.Getwd()
	text := strings.ReplaceAll(string(data), "<workdir>", wd)
	text = strings.ReplaceAll(text, `\u003cworkdir\u003e`, wd)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	// ids maps the ids of the recorded host requests to the ids kz used.
	ids := map[string]string{}
	readLine := func() (map[string]any, bool) {
		line, err := in.ReadBytes('\n')
		if err != nil && len(line) == 0 {
			return nil, false
		}
		var got map[string]any
		if jerr := json.Unmarshal(line, &got); jerr != nil {
			logf("FAIL kz wrote a non-JSON line: %q", line)
			return nil, false
		}
		return got, true
	}
	for i, raw := range strings.Split(strings.TrimSpace(text), "\n") {
		var l scriptLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			logf("FAIL script line %d: %v", i, err)
			return 3
		}
		switch l.Dir {
		case "<-":
			var m map[string]any
			_ = json.Unmarshal(l.Msg, &m)
			if _, isReq := m["method"]; !isReq && m["id"] != nil {
				if real, ok := ids[fmt.Sprint(m["id"])]; ok {
					m["id"], _ = strconv.Atoi(real)
				}
				b, _ := json.Marshal(m)
				l.Msg = b
			}
			_, _ = out.Write(l.Msg)
			_ = out.WriteByte('\n')
			_ = out.Flush()
		case "->":
			got, ok := readLine()
			if !ok {
				logf("FAIL line %d: stdin closed, want %s", i, l.Msg)
				return 3
			}
			var want map[string]any
			_ = json.Unmarshal(l.Msg, &want)
			if _, isReq := want["method"]; isReq && want["id"] != nil {
				ids[fmt.Sprint(want["id"])] = fmt.Sprint(got["id"])
				delete(want, "id")
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
				// Like a background terminal: its own session, outside
				// the CLI's process group.
				c := exec.Command("sleep", "60")
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				if err := c.Start(); err != nil {
					logf("FAIL child: %v", err)
					return 3
				}
				logf("child %d", c.Process.Pid)
			case "hang":
				select {}
			case "raw":
				_, _ = out.WriteString(l.Text + "\n")
				_ = out.Flush()
			case "stream":
				for n := 0; n < l.Count; n++ {
					_, _ = fmt.Fprintf(out, streamLine+"\n", time.Now().UnixNano())
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

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
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

// fake is one fake-CLI setup: scripts, a report file and a runtime that
// runs the test binary as the CLI.
type fake struct {
	t      testing.TB
	dir    string
	ws     string
	report string
	snaps  *memSnapshots
	rt     *Runtime
}

func writeScript(t testing.TB, path string, lines []scriptLine) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// memSnapshots keeps the snapshots kz saves before each write.
type memSnapshots struct {
	mu    sync.Mutex
	snaps []tools.Snapshot
}

func (m *memSnapshots) SaveSnapshot(_ context.Context, s tools.Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snaps = append(m.snaps, s)
	return nil
}

func (m *memSnapshots) all() []tools.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]tools.Snapshot(nil), m.snaps...)
}

// newFake sets up a fake CLI; runs after the first use more[k-1] when given.
func newFake(t testing.TB, lines []scriptLine, more ...[]scriptLine) *fake {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.jsonl")
	writeScript(t, script, lines)
	for k, m := range more {
		writeScript(t, filepath.Join(dir, fmt.Sprintf("script-%d.jsonl", k+1)), m)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, dir: dir, ws: ws, report: filepath.Join(dir, "report.txt"), snaps: &memSnapshots{}}
	f.rt = New(Config{Name: "gemini", Command: os.Args[0], Workspace: ws, KillGrace: 300 * time.Millisecond, AuthMethod: "gemini-api-key",
		HandshakeTimeout: 10 * time.Second, Snapshots: f.snaps,
		Env: []string{"KZ_FAKE_SCRIPT=" + script, "KZ_FAKE_REPORT=" + f.report}})
	// The agent process outlives its turns; closing the runtime ends it.
	t.Cleanup(func() { _ = f.rt.Close() })
	return f
}

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
			f.t.Errorf("fake CLI: %s", l)
		}
		if strings.HasPrefix(l, "ok ") {
			oks++
		}
	}
	return oks
}

// childPid waits for the fake to report the child it started.
func (f *fake) childPid() int {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range f.reportLines() {
			if s, ok := strings.CutPrefix(l, "child "); ok {
				pid, _ := strconv.Atoi(s)
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatal("the fake never started its child")
	return 0
}

func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

type harness struct {
	s       *engine.Session
	journal *memJournal
}

type harnessOpts struct {
	gate     engine.Gate
	failover []engine.ChainLink
	answer   func(ev engine.Event) engine.Answer
	onEvent  func(h *harness, ev engine.Event)
	prior    *engine.Prior
}

func newHarness(t testing.TB, ws string, runtimes []engine.RuntimeEntry, o harnessOpts) *harness {
	t.Helper()
	j := &memJournal{}
	s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: j, Runtimes: runtimes, Gate: o.gate,
		Interactive: true, Failover: o.failover, Prior: o.prior})
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
	t.Cleanup(func() {
		cancel()
		sub.Close()
		<-done
		_ = s.Close(context.Background())
	})
	return h
}

func (h *harness) run(t testing.TB, ctx context.Context, prompt string) engine.Event {
	t.Helper()
	final, err := h.s.RunTurn(ctx, prompt)
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	return final
}

// sample loads the recorded lines of a sample file in testdata, without
// bookkeeping lines.
func sample(t testing.TB, name string) []scriptLine {
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
func kinds(t testing.TB, name string) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for _, l := range sample(t, name) {
		out[l.Kind] = l.Msg
	}
	return out
}

func cli(msg string) scriptLine  { return scriptLine{Dir: "<-", Msg: json.RawMessage(msg)} }
func host(msg string) scriptLine { return scriptLine{Dir: "->", Msg: json.RawMessage(msg)} }
func op(o string) scriptLine     { return scriptLine{Dir: "fake", Op: o} }

func allowOnce(engine.Event) engine.Answer { return engine.Answer{Decision: engine.DecisionAllow} }

// streamLine is the message chunk the fake's stream action writes,
// carrying its send time in nanoseconds.
const streamLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d;"}}}}`

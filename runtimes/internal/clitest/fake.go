// Package clitest is the test support of the runtimes that drive an agent
// CLI (claudecode, codex, acp): the test binary that doubles as a fake CLI
// replaying a recorded script, the session harness around a runtime, and
// the helpers of the tests that drive the real CLIs (finding the pinned
// binary, scratch homes and workspaces, the sandbox, the processes a CLI
// leaves behind). Only tests import it.
package clitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Line is one line of a fake CLI's script: the recorded samples' format
// (testdata/*.jsonl) plus the fake's own actions.
type Line struct {
	// Dir is "<-" for a line the CLI writes, "->" for the line kz must
	// write next (checked as a subset of what kz wrote), "fake" for an
	// action, "meta" for a sample's bookkeeping (skipped).
	Dir  string          `json:"dir"`
	Msg  json.RawMessage `json:"msg,omitempty"`
	Kind string          `json:"kind,omitempty"`
	// Op is the action of a "fake" line: exit (with Code, after writing
	// Stderr), exit_if_arg (exit 1 with Stderr when the CLI was started
	// with the argument Text), sleep (MS), child (start `sleep 60` and
	// report its pid), orphan (start `sleep 60` in a session of its own
	// holding the CLI's stdout, as a tool's background process can, so
	// that the CLI's death does not end its output; report its pid), hang, raw (write Text as it is), stream (Count text
	// deltas carrying their send time, Every microseconds apart),
	// ignore_sigint, wait_sigint (report once SIGINT arrives).
	Op     string `json:"op,omitempty"`
	Code   int    `json:"code,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	MS     int    `json:"ms,omitempty"`
	Count  int    `json:"count,omitempty"`
	Every  int    `json:"every_us,omitempty"`
	Text   string `json:"text,omitempty"`
}

// CLI is a line the fake CLI writes.
func CLI(msg string) Line { return Line{Dir: "<-", Msg: json.RawMessage(msg)} }

// Host is a line kz must write next.
func Host(msg string) Line { return Line{Dir: "->", Msg: json.RawMessage(msg)} }

// Op is a fake action without arguments.
func Op(o string) Line { return Line{Dir: "fake", Op: o} }

// Protocol is what the fake must know of one CLI's wire protocol.
type Protocol struct {
	// StreamLine is the text delta the "stream" action writes, with one
	// %d for its send time in nanoseconds.
	StreamLine string
	// DetachChild starts the "child" action's process in a session of its
	// own, outside the CLI's process group, as a background terminal is.
	DetachChild bool
	// Workdir replaces "<workdir>" in the script (where the samples were
	// recorded) with the fake's working directory.
	Workdir bool
	// CatchSIGINT makes the fake catch SIGINT from its start: it then
	// lives on after one (as Claude Code, which answers an interrupt
	// itself), and a wait_sigint action sees it. Otherwise SIGINT kills
	// the fake, unless an ignore_sigint action came first.
	CatchSIGINT bool
	// Learn is given each expected host line (want) and the line kz
	// wrote (got). When want is a request the recording made, Learn
	// records in ids the id kz gave it and removes the id from want, so
	// that the rest is compared.
	Learn func(want, got map[string]any, ids map[string]string)
	// Rewrite puts the ids kz chose (ids, recorded → kz's) into a recorded
	// CLI line that answers one of kz's requests.
	Rewrite func(msg []byte, ids map[string]string) []byte
	// Intercept, when set, sees every line kz writes first; a line it
	// answers itself (it returns true) is not matched against the script.
	Intercept func(got map[string]any, out *bufio.Writer) bool
}

// JSONRPC is the id handling of a JSON-RPC CLI (Codex's app-server, an
// ACP agent): kz's requests carry numeric ids of their own, and the CLI's
// responses name them.
var JSONRPC = Protocol{
	DetachChild: true,
	Workdir:     true,
	Learn: func(want, got map[string]any, ids map[string]string) {
		if _, isReq := want["method"]; isReq && want["id"] != nil {
			ids[fmt.Sprint(want["id"])] = fmt.Sprint(got["id"])
			delete(want, "id")
		}
	},
	Rewrite: func(msg []byte, ids map[string]string) []byte {
		var m map[string]any
		_ = json.Unmarshal(msg, &m)
		if _, isReq := m["method"]; isReq || m["id"] == nil {
			return msg
		}
		if real, ok := ids[fmt.Sprint(m["id"])]; ok {
			m["id"], _ = strconv.Atoi(real)
		}
		b, _ := json.Marshal(m)
		return b
	},
}

// The fake CLI finds its script and report through these variables, which
// the runtime under test passes to it (Fake.Env).
const (
	scriptVar = "KZ_FAKE_SCRIPT"
	reportVar = "KZ_FAKE_REPORT"
)

// Main is the TestMain of a package whose test binary doubles as the fake
// CLI: started with KZ_FAKE_SCRIPT set, it replays that script for p and
// exits; otherwise it runs the tests and fails on leaked goroutines.
func Main(m *testing.M, p Protocol) {
	if script := os.Getenv(scriptVar); script != "" {
		os.Exit(replay(p, script, os.Getenv(reportVar)))
	}
	goleak.VerifyTestMain(m)
}

// replay plays script as the CLI. Every check is written to report ("ok N
// …" or "FAIL …"), which the test reads after the process is gone. Run k
// of one fake (counted in the report) uses script-k.jsonl when it exists,
// so that multi-process tests give each CLI process its own script.
func replay(p Protocol, script, report string) int {
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
	text := string(data)
	if p.Workdir {
		wd, _ := os.Getwd()
		text = strings.ReplaceAll(text, "<workdir>", wd)
		text = strings.ReplaceAll(text, `\u003cworkdir\u003e`, wd)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	sigs := make(chan os.Signal, 4)
	if p.CatchSIGINT {
		signal.Notify(sigs, syscall.SIGINT)
	}
	// ids maps the ids of the recorded host requests to the ids kz used.
	ids := map[string]string{}
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
			if p.Intercept != nil && p.Intercept(got, out) {
				continue
			}
			return got, true
		}
	}
	for i, raw := range strings.Split(strings.TrimSpace(text), "\n") {
		var l Line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			logf("FAIL script line %d: %v", i, err)
			return 3
		}
		switch l.Dir {
		case "<-":
			msg := []byte(l.Msg)
			if p.Rewrite != nil {
				msg = p.Rewrite(msg, ids)
			}
			_, _ = out.Write(msg)
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
			if p.Learn != nil {
				p.Learn(want, got, ids)
			}
			if why := subset(want, got); why != "" {
				b, _ := json.Marshal(got)
				logf("FAIL line %d: %s\n  got %s", i, why, b)
				return 3
			}
			logf("ok %d %s", i, l.Kind)
		case "fake":
			if code, exit := act(p, l, i, out, sigs, logf); exit {
				return code
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

// act performs the fake action of line i; exit says the fake ends with
// code.
func act(p Protocol, l Line, i int, out *bufio.Writer, sigs <-chan os.Signal, logf func(string, ...any)) (code int, exit bool) {
	switch l.Op {
	case "exit":
		_ = out.Flush()
		_, _ = fmt.Fprint(os.Stderr, l.Stderr)
		return l.Code, true
	case "exit_if_arg":
		if slices.Contains(os.Args, l.Text) {
			_, _ = fmt.Fprint(os.Stderr, l.Stderr)
			return 1, true
		}
	case "sleep":
		time.Sleep(time.Duration(l.MS) * time.Millisecond)
	case "child":
		c := exec.Command("sleep", "60")
		if p.DetachChild {
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if err := c.Start(); err != nil {
			logf("FAIL child: %v", err)
			return 3, true
		}
		logf("child %d", c.Process.Pid)
	case "orphan":
		c := exec.Command("sleep", "60")
		c.Stdout = os.Stdout
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			logf("FAIL orphan: %v", err)
			return 3, true
		}
		logf("child %d", c.Process.Pid)
	case "hang":
		select {}
	case "raw":
		_, _ = out.WriteString(l.Text + "\n")
		_ = out.Flush()
	case "stream":
		for n := 0; n < l.Count; n++ {
			_, _ = fmt.Fprintf(out, p.StreamLine+"\n", time.Now().UnixNano())
			_ = out.Flush()
			if l.Every > 0 {
				time.Sleep(time.Duration(l.Every) * time.Microsecond)
			}
		}
	case "ignore_sigint":
		signal.Ignore(syscall.SIGINT)
	case "wait_sigint":
		<-sigs
		logf("ok %d sigint", i)
	}
	return 0, false
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

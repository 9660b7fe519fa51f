package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Fake is one fake-CLI setup of a test: its scripts, its report and a
// workspace, in a directory of their own. A runtime under test runs the
// test binary (os.Args[0]) as its CLI with Env added to its configured
// environment; Main makes that binary replay the script.
type Fake struct {
	t testing.TB
	// Dir holds the scripts and the report; WS is the workspace (Dir/ws).
	Dir, WS string
	// Report is the file the fake writes its checks to.
	Report string
	script string
}

// NewFake writes the script of a fake CLI, lines for its first run and
// more[k-1] for run k when given.
func NewFake(t testing.TB, lines []Line, more ...[]Line) *Fake {
	t.Helper()
	dir := t.TempDir()
	f := &Fake{t: t, Dir: dir, WS: filepath.Join(dir, "ws"), Report: filepath.Join(dir, "report.txt"), script: filepath.Join(dir, "script.jsonl")}
	writeScript(t, f.script, lines)
	for k, m := range more {
		writeScript(t, filepath.Join(dir, fmt.Sprintf("script-%d.jsonl", k+1)), m)
	}
	Dirs(t, f.WS)
	return f
}

func writeScript(t testing.TB, path string, lines []Line) {
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

// Env is what the runtime's configured environment must hold for the
// test binary to act as this fake CLI.
func (f *Fake) Env() []string {
	return []string{scriptVar + "=" + f.script, reportVar + "=" + f.Report}
}

// ReportLines returns the fake's report so far (complete once its process
// has ended).
func (f *Fake) ReportLines() []string {
	b, _ := os.ReadFile(f.Report)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// CheckReport fails the test on any FAIL line and returns how many host
// lines the fake checked.
func (f *Fake) CheckReport() int {
	f.t.Helper()
	oks := 0
	for _, l := range f.ReportLines() {
		if strings.HasPrefix(l, "FAIL") {
			f.t.Errorf("fake CLI: %s", l)
		}
		if strings.HasPrefix(l, "ok ") {
			oks++
		}
	}
	return oks
}

// ChildPid waits up to 5 seconds for the fake to report the child its
// child action started.
func (f *Fake) ChildPid() int {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range f.ReportLines() {
			if s, ok := strings.CutPrefix(l, "child "); ok {
				pid, err := strconv.Atoi(s)
				if err != nil {
					f.t.Fatal(err)
				}
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatal("the fake never started its child")
	return 0
}

// Argv returns the arguments the fake's first run was started with.
func (f *Fake) Argv() []string { return f.ArgvOf(0) }

// ArgvOf returns the arguments run k of the fake (0 is the first) was
// started with, or nil when there was no such run.
func (f *Fake) ArgvOf(k int) []string {
	for _, l := range f.ReportLines() {
		if a, ok := strings.CutPrefix(l, "argv "); ok {
			if k == 0 {
				return strings.Split(a, "\x1f")
			}
			k--
		}
	}
	return nil
}

// Sample loads the recorded lines of a sample file in the package's
// testdata, without its bookkeeping lines.
func Sample(t testing.TB, name string) []Line {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []Line
	for _, raw := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l Line
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

// Kinds returns the recorded line of each kind label of a sample file.
func Kinds(t testing.TB, name string) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for _, l := range Sample(t, name) {
		out[l.Kind] = l.Msg
	}
	return out
}

// JSONString is s as a JSON string, for building script lines.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

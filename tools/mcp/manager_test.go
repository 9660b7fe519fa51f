package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.ServeIfChild()
	goleak.VerifyTestMain(m)
}

// start builds a manager over specs, starts it and closes it with the
// test.
func start(t *testing.T, env []string, specs ...mcp.Spec) *mcp.Manager {
	t.Helper()
	m := mcp.NewManager(specs)
	if env != nil {
		m.Environ = func() []string { return env }
	}
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Start(ctx)
	return m
}

func status(t *testing.T, m *mcp.Manager, name string) mcp.Status {
	t.Helper()
	for _, s := range m.Statuses() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status of %s in %+v", name, m.Statuses())
	return mcp.Status{}
}

// callTool runs one MCP tool as the Executor would: Prepare, then Run.
func callTool(t *testing.T, m *mcp.Manager, name, input string) (string, error) {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Spec().Name != name {
			continue
		}
		c, err := tl.Prepare(context.Background(), nil, []byte(input))
		if err != nil {
			return "", err
		}
		return c.Run(context.Background(), &tools.RunContext{})
	}
	t.Fatalf("no tool %s among %+v", name, status(t, m, strings.Split(name, "__")[1]).Tools)
	return "", nil
}

func TestStdioServerToolsAndCall(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	spec := mcptest.StdioSpec(t, "notes", log)
	spec.TrustAnnotations = true
	m := start(t, nil, spec)
	st := status(t, m, "notes")
	if st.State != mcp.StateReady || st.Error != "" {
		t.Fatalf("status %+v", st)
	}
	var names []string
	for _, tl := range st.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"mcp__notes__echo", "mcp__notes__note", "mcp__notes__big"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if !m.ReadOnly("mcp__notes__echo") || m.ReadOnly("mcp__notes__note") || m.ReadOnly("mcp__other__echo") {
		t.Errorf("read-only: echo %v note %v", m.ReadOnly("mcp__notes__echo"), m.ReadOnly("mcp__notes__note"))
	}
	for _, tl := range m.Tools() {
		s := tl.Spec()
		if s.Name == "mcp__notes__echo" && (!s.ReadOnly || !strings.Contains(string(s.Schema), `"text"`) || !s.Exposure.Visible()) {
			t.Errorf("echo spec %+v", s)
		}
	}
	out, err := callTool(t, m, "mcp__notes__echo", `{"text":"hi"}`)
	if err != nil || out != "echo: hi" {
		t.Fatalf("echo: %q %v", out, err)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 || calls[0] != `echo {"text":"hi"}` {
		t.Errorf("server log %q", calls)
	}
	if _, err := callTool(t, m, "mcp__notes__fail", `{}`); err == nil || err.Error() != "the fail tool failed" {
		t.Errorf("fail: %v", err)
	}
	if _, err := callTool(t, m, "mcp__notes__echo", `[1]`); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("array input: %v", err)
	}
}

// Without trust_annotations a server's readOnlyHint does not count.
func TestAnnotationsNeedTrust(t *testing.T) {
	m := start(t, nil, mcptest.StdioSpec(t, "notes", filepath.Join(t.TempDir(), "calls")))
	if m.ReadOnly("mcp__notes__echo") {
		t.Error("echo is read-only without trust_annotations")
	}
	for _, tl := range m.Tools() {
		if tl.Spec().ReadOnly {
			t.Errorf("%s is read-only", tl.Spec().Name)
		}
	}
}

func TestHTTPServerHeadersFromEnvironment(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	url := mcptest.NewHTTP(t, log, func(h http.Header) bool { return h.Get("Authorization") == "Bearer s3cret-value" })
	spec := mcp.Spec{Name: "web", Transport: mcp.HTTP, URL: url + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"},
		StartupTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second}
	m := start(t, []string{"WEB_TOKEN=s3cret-value"}, spec)
	if st := status(t, m, "web"); st.State != mcp.StateReady {
		t.Fatalf("status %+v", st)
	}
	out, err := callTool(t, m, "mcp__web__echo", `{"text":"over http"}`)
	if err != nil || out != "echo: over http" {
		t.Fatalf("echo: %q %v", out, err)
	}
	if calls := mcptest.Calls(t, log); len(calls) != 1 {
		t.Errorf("server log %q", calls)
	}

	// A variable that is not set is named, and the server is not
	// reached with an empty credential.
	m2 := start(t, []string{}, spec)
	if st := status(t, m2, "web"); st.State != mcp.StateFailed || !strings.Contains(st.Error, "WEB_TOKEN is not set") {
		t.Errorf("status without the variable: %+v", st)
	}
	// A wrong credential fails the start with the server's answer.
	m3 := start(t, []string{"WEB_TOKEN=wrong"}, spec)
	if st := status(t, m3, "web"); st.State != mcp.StateFailed || st.Error == "" || strings.Contains(st.Error, "wrong") {
		t.Errorf("status with a wrong token: %+v", st)
	}
}

func TestUntrustedAndDisabledServersNeverStart(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	spec := mcp.Spec{Name: "proj", Transport: mcp.Stdio, Command: "sh", Args: []string{"-c", "touch " + marker}, NotTrusted: true,
		StartupTimeout: time.Second, ToolTimeout: time.Second}
	off := spec
	off.Name, off.NotTrusted, off.Disabled = "off", false, true
	m := start(t, nil, spec, off)
	if st := status(t, m, "proj"); st.State != mcp.StateNotTrusted || !strings.Contains(st.Error, "kz trust") {
		t.Errorf("untrusted: %+v", st)
	}
	if st := status(t, m, "off"); st.State != mcp.StateDisabled {
		t.Errorf("disabled: %+v", st)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a server that may not start ran: %v", err)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools %v", m.Tools())
	}
}

func TestFailedStartsAreReported(t *testing.T) {
	specs := []mcp.Spec{
		{Name: "missing", Transport: mcp.Stdio, Command: "/nonexistent/mcp-server"},
		{Name: "exits", Transport: mcp.Stdio, Command: "sh", Args: []string{"-c", "echo broken config >&2; exit 1"}},
		{Name: "hangs", Transport: mcp.Stdio, Command: "sleep", Args: []string{"30"}},
		{Name: "nohttp", Transport: mcp.HTTP, URL: "http://127.0.0.1:1/mcp"},
	}
	for i := range specs {
		specs[i].StartupTimeout, specs[i].ToolTimeout = 500*time.Millisecond, time.Second
	}
	began := time.Now()
	m := start(t, nil, specs...)
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("starting took %s", d)
	}
	for name, want := range map[string]string{"missing": "no such file", "exits": "", "hangs": "did not start within 500ms", "nohttp": ""} {
		st := status(t, m, name)
		if st.State != mcp.StateFailed || st.Error == "" || !strings.Contains(st.Error, want) {
			t.Errorf("%s: %+v (want an error with %q)", name, st, want)
		}
	}
}

func TestCrashMidSessionIsAClearToolError(t *testing.T) {
	m := start(t, nil, mcptest.StdioSpec(t, "fragile", filepath.Join(t.TempDir(), "calls")))
	// The tools stay registered with the native runtime after a crash:
	// the one taken before it is called after it.
	var echo tools.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "mcp__fragile__echo" {
			echo = tl
		}
	}
	if _, err := callTool(t, m, "mcp__fragile__crash", `{}`); err == nil || !strings.Contains(err.Error(), "mcp server fragile") {
		t.Fatalf("crash call: %v", err)
	}
	// The next call says the server is gone, without waiting for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := echo.Prepare(context.Background(), nil, []byte(`{"text":"x"}`))
		if err == nil {
			_, err = c.Run(context.Background(), &tools.RunContext{})
		}
		if err != nil && strings.Contains(err.Error(), "mcp server fragile is not running (the server stopped") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call after the crash: %v; status %+v", err, status(t, m, "fragile"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := status(t, m, "fragile"); st.State != mcp.StateExited {
		t.Errorf("status %+v", st)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("a crashed server still offers tools: %v", m.Tools())
	}
}

// Close stops the server and whatever it started: no process of its group
// is left.
func TestCloseLeavesNoProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	spec := mcp.Spec{Name: "forks", Transport: mcp.Stdio, Command: "sh",
		Args: []string{"-c", `sleep 300 & echo $$ > "$1"; exec "$0" -test.run='^$'`, exe, pidFile},
		Env:  map[string]string{mcptest.ServeEnv: "stdio"}, StartupTimeout: 10 * time.Second, ToolTimeout: time.Second}
	m := mcp.NewManager([]mcp.Spec{spec})
	m.Start(context.Background())
	if st := status(t, m, "forks"); st.State != mcp.StateReady {
		m.Close()
		t.Fatalf("status %+v", st)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	var pgid int
	for _, c := range strings.TrimSpace(string(b)) {
		pgid = pgid*10 + int(c-'0')
	}
	m.Close()
	// A killed process the server orphaned is reaped by init, which takes
	// a moment; a live one would stay.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has processes after Close: %v", pgid, err)
	}
	if st := status(t, m, "forks"); st.State != mcp.StateStopped {
		t.Errorf("status after Close %+v", st)
	}
}

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

func TestBashEnvHasNoSecrets(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-leak")
	t.Setenv("GITHUB_TOKEN", "ghp_should_not_leak")
	t.Setenv("MY_PASSWORD", "hunter2")
	t.Setenv("KZ_RANDOM_VAR", "not-in-the-minimal-set")
	t.Setenv("ALLOWED_API_KEY", "explicitly-allowed")
	f := newFixture(t)
	r := f.call(t, "bash", map[string]any{"command": "env"})
	if r.IsError {
		t.Fatal(r.Output)
	}
	for _, leak := range []string{"sk-ant-should-not-leak", "ghp_should_not_leak", "hunter2", "not-in-the-minimal-set",
		"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "explicitly-allowed"} {
		if strings.Contains(r.Output, leak) {
			t.Errorf("env output contains %q", leak)
		}
	}
	if !strings.Contains(r.Output, "PATH=") {
		t.Errorf("no PATH in %q", r.Output)
	}
	f.env.PassEnv = []string{"ALLOWED_API_KEY"}
	if r = f.call(t, "bash", map[string]any{"command": "env"}); !strings.Contains(r.Output, "ALLOWED_API_KEY=explicitly-allowed") {
		t.Errorf("allow-listed variable missing: %q", r.Output)
	}
}

func TestBashBasics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.callID(t, "b1", "bash", map[string]any{"command": "pwd; echo err >&2; exit 3"})
	if r.IsError || !strings.Contains(r.Output, f.ws.Dir()+"\n") || !strings.Contains(r.Output, "err") ||
		!strings.Contains(r.Output, "[exit code 3]") {
		t.Fatalf("got %+v", r)
	}
	reqs := f.perm.requests()
	if len(reqs) != 1 || reqs[0].Command != "pwd; echo err >&2; exit 3" || reqs[0].Tool != "bash" || reqs[0].ToolCallID != "b1" {
		t.Fatalf("request = %+v", reqs)
	}
	started := f.rec.ofType(engine.EventCommandStarted)
	finished := f.rec.ofType(engine.EventCommandFinished)
	if len(started) != 1 || len(finished) != 1 || finished[0].ExitCode == nil || *finished[0].ExitCode != 3 ||
		finished[0].ToolCallID != "b1" {
		t.Fatalf("command events: %+v %+v", started, finished)
	}
	// No stdin: a read gets EOF at once instead of hanging.
	if r = f.call(t, "bash", map[string]any{"command": "cat; echo done"}); r.Output != "done" {
		t.Fatalf("stdin: %q", r.Output)
	}
	// Output cap keeps the head and the tail.
	r = f.call(t, "bash", map[string]any{"command": "echo FIRST; head -c 200000 /dev/zero | tr '\\0' a; echo; echo LAST"})
	if !strings.HasPrefix(r.Output, "FIRST") || !strings.HasSuffix(r.Output, "LAST") || !strings.Contains(r.Output, "bytes of output omitted") ||
		len(r.Output) > bashHead+bashTail+200 {
		t.Fatalf("cap: %d bytes, head %q", len(r.Output), r.Output[:20])
	}
	// Timeout.
	start := time.Now()
	f.env.KillGrace = 100 * time.Millisecond
	r = f.call(t, "bash", map[string]any{"command": "sleep 30", "timeout_ms": 200})
	if !r.IsError || !strings.Contains(r.Output, "timed out") || time.Since(start) > 10*time.Second {
		t.Fatalf("timeout: %+v after %v", r, time.Since(start))
	}
	// Progress events carry the output while it runs.
	f.call(t, "bash", map[string]any{"command": "echo one; sleep 0.3; echo two"})
	var prog strings.Builder
	for _, e := range f.rec.ofType(engine.EventToolCallProgress) {
		prog.WriteString(e.Output)
	}
	if !strings.Contains(prog.String(), "one") || !strings.Contains(prog.String(), "two") {
		t.Errorf("progress = %q", prog.String())
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestBashInterruptKillsGroup starts `sleep 100 & sleep 100`, cancels the
// call and checks both sleeps are gone.
func TestBashInterruptKillsGroup(t *testing.T) {
	f := newFixture(t)
	f.env.KillGrace = 200 * time.Millisecond
	pidFile := filepath.Join(f.ws.Dir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []ToolResult, 1)
	in, _ := json.Marshal(map[string]any{"command": "sleep 100 & echo $! > pids; sleep 100 & echo $! >> pids; wait"})
	go func() {
		done <- f.ex.Execute(ctx, f.perm, f.rec, []ToolCall{{ID: "int", Name: "bash", Input: in}})
	}()
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for len(pids) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(pidFile)
		pids = pids[:0]
		for _, l := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(l); err == nil {
				pids = append(pids, p)
			}
		}
	}
	if len(pids) < 2 {
		cancel()
		<-done
		t.Fatal("the command did not start its children")
	}
	for _, p := range pids {
		if !alive(p) {
			t.Fatalf("child %d not running before cancel", p)
		}
	}
	cancel()
	var res []ToolResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the call")
	}
	if !res[0].IsError || !strings.Contains(res[0].Output, "interrupted") {
		t.Errorf("result %+v", res[0])
	}
	time.Sleep(100 * time.Millisecond)
	for _, p := range pids {
		if alive(p) {
			t.Errorf("child %d survived the interrupt", p)
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	finished := f.rec.ofType(engine.EventToolCallFinished)
	if len(finished) != 1 || finished[0].Status != engine.ToolStatusInterrupted {
		t.Errorf("finished = %+v", finished)
	}
}

// TestBashBackgroundJobStopped checks a job left running by a finished
// command does not outlive the call (nor hold it open).
func TestBashBackgroundJobStopped(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	r := f.call(t, "bash", map[string]any{"command": "sleep 100 & echo $!"})
	if time.Since(start) > 5*time.Second {
		t.Fatalf("call waited for the background job: %v", time.Since(start))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(r.Output))
	if err != nil {
		t.Fatalf("output %q", r.Output)
	}
	time.Sleep(100 * time.Millisecond)
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("background job survived")
	}
}

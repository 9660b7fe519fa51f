package native

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/workspace"
)

// These tests press "esc" on a native turn whose model asked for a shell
// command that does not end by itself: the first interrupt must stop the
// command (its whole process group) and the turn, the second must kill a
// command that ignores SIGTERM without waiting for the grace period.

// graceTools is the real Executor and built-in tools with the given kill
// grace, over each session's workspace.
func graceTools(t *testing.T, grace time.Duration) *ExecutorTools {
	reg := tools.NewBuiltinRegistry()
	et := &ExecutorTools{Registry: reg}
	var exec *tools.Executor
	et.Executor = func(turn *engine.Turn) (*tools.Executor, error) {
		if exec != nil {
			return exec, nil
		}
		ws, err := workspace.Open(turn.Workspace)
		if err != nil {
			return nil, fmt.Errorf("open workspace: %w", err)
		}
		t.Cleanup(func() { _ = ws.Close() })
		env := tools.NewEnv(ws, turn.SessionID, &memSnapshots{})
		env.KillGrace = grace
		exec, err = tools.NewExecutor(tools.ExecutorConfig{Registry: reg, Env: env})
		return exec, err
	}
	return et
}

// startCommandTurn submits a turn whose model runs command with bash, and
// waits until the command wrote its process group id to pgid.
func startCommandTurn(t *testing.T, grace time.Duration, command string) (*harness, int, <-chan engine.Event) {
	t.Helper()
	args, _ := jsonString(command)
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Text: "Running it.", Calls: []llmtest.Call{{ID: "b1", Name: "bash", Args: `{"command":` + args + `}`}}},
		llmtest.Reply{Text: "this reply must never be asked for"})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: mustNative(t,
		Config{LLM: fake.Config(), Models: []string{"claude-sonnet-4-5"}, Tools: graceTools(t, grace)})}}, runtime: "native"})
	finals := make(chan engine.Event, 1)
	go func() {
		final, err := h.s.RunTurn(context.Background(), "run the server")
		if err != nil {
			t.Errorf("RunTurn: %v", err)
		}
		finals <- final
	}()
	pgid := waitForPgid(t, filepath.Join(h.ws, "pgid"))
	t.Cleanup(func() {
		// Whatever the test's outcome, nothing it started outlives it.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if n := len(fake.Requests()); n != 1 {
			t.Errorf("the model was asked %d times; an interrupted turn must not go on", n)
		}
	})
	return h, pgid, finals
}

func jsonString(s string) (string, error) {
	return strconv.Quote(s), nil
}

func waitForPgid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("pgid file: %q", b)
			}
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command never started")
	return 0
}

// groupGone waits until no process of the group is left (zombies are
// reaped by their new parent shortly after the kill).
func groupGone(pgid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func awaitFinal(t *testing.T, finals <-chan engine.Event, within time.Duration) (engine.Event, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case f := <-finals:
		return f, time.Since(start)
	case <-time.After(within):
		t.Fatalf("the turn did not end within %s", within)
		return engine.Event{}, 0
	}
}

// checkInterruptedCard checks what the store keeps of the command: its
// call ended interrupted (never ok) and the turn too.
func checkInterruptedCard(t *testing.T, h *harness, final engine.Event) {
	t.Helper()
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("final status %q, want interrupted\n%s", final.Status, dump(h.journal.Events()))
	}
	var finished []engine.Event
	for _, ev := range h.journal.OfType(engine.EventToolCallFinished) {
		if ev.ToolCallID == "b1" {
			finished = append(finished, ev)
		}
	}
	if len(finished) != 1 || finished[0].Status != engine.ToolStatusInterrupted || !finished[0].IsError {
		t.Errorf("tool_call_finished of the command: %+v", finished)
	}
}

func TestFirstInterruptStopsARunningCommandAndItsGroup(t *testing.T) {
	t.Parallel()
	// The command and a child of it in the background: the whole group
	// must go, not only the shell.
	h, pgid, finals := startCommandTurn(t, 10*time.Second, `sleep 30 & echo $$ > pgid; wait`)
	h.s.Interrupt(false)
	final, took := awaitFinal(t, finals, 5*time.Second)
	t.Logf("the turn ended %s after the interrupt", took)
	checkInterruptedCard(t, h, final)
	if took > 3*time.Second {
		t.Errorf("the first interrupt took %s; SIGTERM ends sleep at once", took)
	}
	if !groupGone(pgid, 2*time.Second) {
		t.Errorf("process group %d is still alive after the interrupt", pgid)
	}
}

func TestSecondInterruptKillsACommandThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	const grace = 30 * time.Second
	h, pgid, finals := startCommandTurn(t, grace, `trap '' TERM INT; echo $$ > pgid; while :; do sleep 0.05; done`)
	h.s.Interrupt(false)
	// The command ignores SIGTERM: it lives on through the grace.
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("the command died of the polite stop (%v); the test proves nothing", err)
	}
	select {
	case f := <-finals:
		t.Fatalf("the turn ended before the command did: %+v", f)
	default:
	}
	h.s.Interrupt(true)
	final, took := awaitFinal(t, finals, 5*time.Second)
	t.Logf("the turn ended %s after the second interrupt", took)
	if took > 2*time.Second {
		t.Errorf("the hard kill took %s, not at once (grace %s)", took, grace)
	}
	checkInterruptedCard(t, h, final)
	if !groupGone(pgid, 2*time.Second) {
		t.Errorf("process group %d is still alive after the hard kill", pgid)
	}
}

func TestFirstInterruptStopsTheStream(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Text: strings.Repeat("word ", 50), HoldAfterFirst: true})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: mustNative(t,
		Config{LLM: fake.Config(), Models: []string{"claude-sonnet-4-5"}})}}, runtime: "native", mode: engine.ModeAnalysisOnly})
	fake.Hook = func() { h.s.Interrupt(false) }
	start := time.Now()
	final := h.run("talk")
	// HoldAfterFirst holds the stream for 5 seconds unless the client
	// goes away.
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the stream went on for %s after the interrupt", took)
	}
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("final %+v\n%s", final, dump(h.journal.Events()))
	}
	if evs := h.journal.OfType(engine.EventError); len(evs) != 0 {
		t.Errorf("an interrupt is not an error: %+v", evs)
	}
}

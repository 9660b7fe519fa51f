package claudecode

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// stoppable runs the Claude runtime under a context the test can cancel
// at a moment of its choosing, the way the session's hard interrupt does.
type stoppable struct {
	*Runtime
	mu   sync.Mutex
	stop context.CancelFunc
}

func (s *stoppable) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.stop = cancel
	s.mu.Unlock()
	return s.Runtime.Run(ctx, t)
}

func (s *stoppable) hardStop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
}

// holdJournal calls hold with each event before storing it. The session
// appends under its lock from the goroutine that emits, so a hold on an
// event the runtime emits keeps the runtime's turn loop where it is.
type holdJournal struct {
	clitest.Journal
	hold func(ev engine.Event)
}

func (j *holdJournal) Append(ev engine.Event) error {
	j.hold(ev)
	return j.Journal.Append(ev)
}

// The person's hard stop comes after the CLI has ended the turn but before
// kz has read its result line: the turn is over, so it ends with what the
// CLI said and the idle CLI lives on for the next turn. The stop arrives
// in exactly that window on every turn (the result line is read, the loop
// is held in an emit), where a loop that chose between the two at random
// would kill the idle CLI on about half of them.
func TestHardStopAfterTheTurnEndedKeepsTheCLI(t *testing.T) {
	const turns = 8
	var lines []clitest.Line
	for k := 1; k <= turns; k++ {
		lines = append(lines,
			clitest.Host(fmt.Sprintf(`{"type":"user","message":{"content":[{"text":"q%d"}]}}`, k)),
			clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-h","model":"m"}`),
			clitest.CLI(fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","model":"m","content":[{"type":"text","text":"a%d"}]},"parent_tool_use_id":null}`, k, k)),
			clitest.CLI(fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"a%d","session_id":"sess-h","total_cost_usd":0}`, k)))
	}
	f := newFake(t, lines)
	rt := &stoppable{Runtime: f.rt}
	var sess *engine.Session
	turn := 0
	j := &holdJournal{hold: func(ev engine.Event) {
		if ev.Type != engine.EventAssistantMessage {
			return
		}
		p := f.rt.procs[sess.ID()].p
		deadline := time.Now().Add(10 * time.Second)
		for p.results.Load() < int64(turn) {
			if time.Now().After(deadline) {
				t.Errorf("turn %d: the CLI's result never arrived", turn)
				return
			}
			time.Sleep(time.Millisecond)
		}
		rt.hardStop()
	}}
	sess, err := engine.NewSession(engine.Config{Workspace: f.WS, Journal: j, Runtimes: []engine.RuntimeEntry{{Runtime: rt}}, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close(context.Background()) }()
	pid := 0
	for turn = 1; turn <= turns; turn++ {
		final, err := sess.RunTurn(context.Background(), fmt.Sprintf("q%d", turn))
		if err != nil {
			t.Fatal(err)
		}
		if final.Status != string(engine.StatusComplete) || final.Output != fmt.Sprintf("a%d", turn) {
			t.Fatalf("turn %d ended %s %q (%s), want complete: the stop killed a turn that was over", turn, final.Status, final.Output, final.Text)
		}
		now := f.rt.Pid(sess.ID())
		if pid != 0 && now != pid {
			t.Fatalf("turn %d ran on a new CLI (%d, was %d)", turn, now, pid)
		}
		pid = now
	}
	_ = f.rt.Close()
	if n := f.CheckReport(); n != turns {
		t.Errorf("fake checked %d host lines, want %d", n, turns)
	}
}

// A CLI that is gone between turns, however it went, costs the next turn
// nothing: kz starts another that resumes the same Claude session, and
// the turn answers. A crash during a turn still ends it as a crash.
func TestCLIGoneBetweenTurnsIsReplaced(t *testing.T) {
	first := []clitest.Line{
		clitest.Host(`{"type":"user","message":{"content":[{"text":"first"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-r","model":"m"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"one","session_id":"sess-r","total_cost_usd":0}`),
	}
	second := []clitest.Line{
		clitest.Host(`{"type":"user","message":{"content":[{"text":"second"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-r","model":"m"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"two","session_id":"sess-r","total_cost_usd":0}`),
	}
	killCLI := func(t *testing.T, p *process) {
		if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		// before are fake lines of the first CLI ahead of its turn.
		before, after []clitest.Line
		// end ends the first CLI, p, between the turns.
		end func(t *testing.T, p *process)
		// unreaped says kz cannot have seen the CLI's end when the
		// next turn starts: its output is still open.
		unreaped bool
	}{
		{name: "killed", end: killCLI},
		{name: "killed while a background child holds its output", before: []clitest.Line{clitest.Op("orphan")},
			end: killCLI, unreaped: true},
		{name: "exited on its own", after: []clitest.Line{{Dir: "fake", Op: "exit", Code: 1, Stderr: "out of memory"}},
			end: func(*testing.T, *process) {}},
		{name: "stopped by kz", end: func(_ *testing.T, p *process) { p.killNow() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := append(append(append([]clitest.Line(nil), c.before...), first...), c.after...)
			f := newFakeRuns(t, lines, second)
			h := newHarness(t, single(f), clitest.Options{})
			if final := h.Run(t, context.Background(), "first"); final.Status != string(engine.StatusComplete) || final.Output != "one" {
				t.Fatalf("first turn %+v", final)
			}
			pid := f.rt.Pid(h.Session.ID())
			c.end(t, f.rt.procs[h.Session.ID()].p)
			waitExited(t, pid)
			if c.unreaped && !f.rt.procs[h.Session.ID()].p.alive() {
				t.Fatal("the dead CLI was reaped before the next turn: the case tests nothing")
			}
			final := h.Run(t, context.Background(), "second")
			if final.Status != string(engine.StatusComplete) || final.Output != "two" {
				t.Fatalf("the turn after the CLI ended: %s %q %s, want complete \"two\"", final.Status, final.Output, final.Text)
			}
			if a := f.ArgvOf(1); !slices.Contains(a, "--resume") || !slices.Contains(a, "sess-r") {
				t.Errorf("the new CLI's argv %q does not resume sess-r", a)
			}
			if now := f.rt.Pid(h.Session.ID()); now == pid || now == 0 {
				t.Errorf("the turn ran on pid %d, the dead CLI was %d", now, pid)
			}
			if c.unreaped {
				clitest.CheckGone(t, 3*time.Second, "the dead CLI's replacement", f.ChildPid())
			}
			_ = f.rt.Close()
			if n := f.CheckReport(); n != 2 {
				t.Errorf("fake checked %d host lines, want 2", n)
			}
		})
	}
}

// A CLI that dies during a turn (after it took the prompt) still ends the
// turn as a crash: only a CLI that was gone before the turn is replaced.
func TestCLICrashDuringTurnIsReported(t *testing.T) {
	f := newFake(t, []clitest.Line{
		clitest.Host(`{"type":"user","message":{"content":[{"text":"first"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-c2","model":"m"}`),
		clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"one","session_id":"sess-c2","total_cost_usd":0}`),
		clitest.Host(`{"type":"user","message":{"content":[{"text":"second"}]}}`),
		clitest.CLI(`{"type":"system","subtype":"init","session_id":"sess-c2","model":"m"}`),
		{Dir: "fake", Op: "exit", Code: 2, Stderr: "boom"},
	})
	h := newHarness(t, single(f), clitest.Options{})
	if final := h.Run(t, context.Background(), "first"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("first turn %+v", final)
	}
	final := h.Run(t, context.Background(), "second")
	if final.Status != string(engine.StatusInterrupted) || final.ErrorKind != engine.ErrCrashed {
		t.Errorf("a crash during the turn ended %s/%s, want interrupted/crashed", final.Status, final.ErrorKind)
	}
	if a := f.ArgvOf(1); a != nil {
		t.Errorf("a crash during the turn started another CLI: %q", a)
	}
}

// newFakeRuns is newFake for a fake whose run k+1 (the CLI kz starts
// after the first) plays more[k].
func newFakeRuns(t testing.TB, lines []clitest.Line, more ...[]clitest.Line) *fake {
	t.Helper()
	f := &fake{Fake: clitest.NewFake(t, lines, more...)}
	f.rt = New(Config{Name: "claude", Command: os.Args[0], Workspace: f.WS, KillGrace: 300 * time.Millisecond, Env: f.Env()})
	t.Cleanup(func() { _ = f.rt.Close() })
	return f
}

// waitExited waits until the process pid has ended (reaped or not).
func waitExited(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !proc.Exited(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

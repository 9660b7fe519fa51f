package claudecode

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// The person presses esc twice in quick succession while the real CLI runs
// a long tool: the turn ends at once, well within a kill grace far longer
// than the test, the CLI and its tool's child are gone, and the next turn
// resumes the Claude session in a new process.
func TestRealSecondInterruptKillsAtOnce(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZ:hello") {
			return fakeReply{Text: "back again"}
		}
		if _, ok := r.toolResult(); ok {
			return fakeReply{Text: "unexpected continuation"}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_twice", Name: "Bash", Input: map[string]string{"command": "sleep 39.75", "description": "wait"}}}}
	})
	rt, _ := realSetup(t, api)
	rt.cfg.KillGrace = 30 * time.Second
	var mu sync.Mutex
	var cli int
	var sleeps []int
	var secondAt time.Time
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce,
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventPermissionDecided && ev.Decision == engine.DecisionAllow {
				pid := rt.Pid(h.Session.ID())
				clitest.WhenRunning(func() {
					mu.Lock()
					cli, sleeps = pid, clitest.Procs("sleep", "39.75")
					mu.Unlock()
					h.Session.Interrupt(false)
					time.Sleep(50 * time.Millisecond)
					mu.Lock()
					secondAt = time.Now()
					mu.Unlock()
					h.Session.Interrupt(true)
				}, "sleep", "39.75")
			}
		}})
	final := h.Run(t, context.Background(), "KZ:sleep")
	ended := time.Now()
	if final.Status != string(engine.StatusInterrupted) {
		t.Fatalf("status %s, want interrupted", final.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if cli == 0 || len(sleeps) == 0 {
		t.Fatalf("the tool never ran (cli %d, sleep %v)", cli, sleeps)
	}
	if secondAt.IsZero() || secondAt.After(ended) {
		// The CLI ended the turn on the first interrupt before the second
		// was sent: there is no hard stop to time on this run.
		t.Skipf("the first interrupt ended the turn before the second was sent")
	}
	took := ended.Sub(secondAt)
	t.Logf("the turn ended %v after the second interrupt", took)
	if took > 5*time.Second {
		t.Errorf("the second interrupt took %v (grace %v)", took, rt.cfg.KillGrace)
	}
	clitest.CheckGone(t, 3*time.Second, "the second interrupt", append([]int{cli}, sleeps...)...)
	if fin := h.Journal.OfType(engine.EventToolCallFinished); len(fin) != 1 || fin[0].Status != engine.ToolStatusInterrupted {
		t.Errorf("tool_call_finished %+v", fin)
	}
	final = h.Run(t, context.Background(), "KZ:hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "back again" {
		t.Errorf("next turn %+v", final)
	}
}

// The real CLI is killed between turns (as the OOM killer or a stray kill
// would): the next turn starts another CLI that resumes the same Claude
// session, so the model sees the first turn, and the turn answers.
func TestRealCLIKilledBetweenTurnsResumes(t *testing.T) {
	api := papayaAPI(t)
	rt, ws := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	if final := h.Run(t, context.Background(), "KZ:remember the word PAPAYA"); final.Status != string(engine.StatusComplete) || final.Output != "noted" {
		t.Fatalf("first turn %+v", final)
	}
	// Claude Code writes the session to disk lazily, after the turn's
	// result: the kill waits for it, or the CLI has nothing to resume
	// (TestRealCLIResumeOfALostSessionStartsPrimed is that case).
	native := h.Journal.OfType(engine.EventSessionStarted)[0].NativeID
	waitSessionFile(t, filepath.Dir(ws), native, "noted")
	pid := rt.Pid(h.Session.ID())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExited(t, pid)
	final := h.Run(t, context.Background(), "KZ:which word?")
	if final.Status != string(engine.StatusComplete) || final.Output != "it was PAPAYA" {
		t.Fatalf("the turn after the kill: %s %q %s", final.Status, final.Output, final.Text)
	}
	if now := rt.Pid(h.Session.ID()); now == pid || now == 0 {
		t.Errorf("the turn ran on pid %d, the killed CLI was %d", now, pid)
	}
	started := h.Journal.OfType(engine.EventSessionStarted)
	if len(started) != 2 || started[0].NativeID == "" || started[1].NativeID != started[0].NativeID {
		t.Errorf("the new CLI did not resume the Claude session: %+v", started)
	}
}

// The real CLI is killed between turns before its session reached the
// disk (Claude Code writes it lazily, and a kill right after the turn's
// result finds nothing written; here whatever was written is removed
// too): the CLI refuses the --resume with an error result, and the next
// turn starts a new Claude session primed with kz's transcript, so the
// model still sees the first turn.
func TestRealCLIResumeOfALostSessionStartsPrimed(t *testing.T) {
	api := papayaAPI(t)
	rt, ws := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	if final := h.Run(t, context.Background(), "KZ:remember the word PAPAYA"); final.Status != string(engine.StatusComplete) || final.Output != "noted" {
		t.Fatalf("first turn %+v", final)
	}
	pid := rt.Pid(h.Session.ID())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExited(t, pid)
	native := h.Journal.OfType(engine.EventSessionStarted)[0].NativeID
	// Whatever the CLI wrote of the session goes (a CLI killed this soon
	// after its result has often written nothing yet).
	err := filepath.WalkDir(filepath.Dir(ws), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), native) {
			return os.Remove(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	final := h.Run(t, context.Background(), "KZ:which word?")
	if final.Status != string(engine.StatusComplete) || final.Output != "it was PAPAYA" {
		t.Fatalf("the turn after the lost session: %s %q %s", final.Status, final.Output, final.Text)
	}
	started := h.Journal.OfType(engine.EventSessionStarted)
	if len(started) != 2 || started[1].NativeID == "" || started[1].NativeID == native {
		t.Errorf("the second turn did not start a new Claude session: %+v", started)
	}
}

// waitSessionFile waits until a file named after the Claude session native
// is under root and holds the turn's answer, for up to 10 seconds.
func waitSessionFile(t *testing.T, root, native, answer string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		found := false
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), native) {
				// The file comes before the conversation does: it holds
				// the turn once the answer is in it.
				if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), answer) {
					found = true
					return filepath.SkipAll
				}
			}
			return nil
		})
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Claude Code never wrote session %s with %q under %s", native, answer, root)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// papayaAPI is a fake model that notes the first message and, asked
// "KZ:which word?", answers "it was PAPAYA" only when the conversation it
// is sent holds the word: the answer tells whether the first turn reached
// the model of the second.
func papayaAPI(t *testing.T) *fakeAPI {
	return newFakeAPI(t, func(r *apiRequest) fakeReply {
		switch {
		case strings.Contains(r.lastUserText(), "KZ:which") && strings.Contains(r.allText(), "PAPAYA"):
			return fakeReply{Text: "it was PAPAYA"}
		case strings.Contains(r.lastUserText(), "KZ:which"):
			return fakeReply{Text: "no idea"}
		}
		return fakeReply{Text: "noted"}
	})
}

package claudecode

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/workspace"
)

// More tests of the real `claude` CLI against fakeAPI: a prompt withdrawn
// by control_cancel_request, the immediate interrupt, a crash without
// failover, bounded retries, patch-proposal mode and the version probe.

// captureLog makes rt log every line it reads (debug level) into a buffer.
func captureLog(rt *Runtime) *clitest.LogBuffer {
	buf := &clitest.LogBuffer{}
	rt.log = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("runtime", rt.cfg.Name)
	return buf
}

// indexOf returns the position of the first event matching ok, or -1.
func indexOf(evs []engine.Event, ok func(engine.Event) bool) int {
	return slices.IndexFunc(evs, ok)
}

// A graceful interrupt while a can_use_tool request waits for the person:
// the CLI withdraws it with control_cancel_request, which closes kz's
// prompt (before the tool call is closed, so it is the CLI's cancel and not
// the end of the turn that closed it); the CLI stays alive for the next turn.
func TestRealInterruptClosesPendingPrompt(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZ:hello") {
			return fakeReply{Text: "still here"}
		}
		if _, ok := r.toolResult(); ok {
			return fakeReply{Text: "unexpected continuation"}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_pending", Name: "Bash", Input: map[string]string{"command": "touch never.txt", "description": "x"}}}}
	})
	rt, ws := realSetup(t, api)
	logs := captureLog(rt)
	// Nobody answers: the prompt stays open until something closes it.
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{OnEvent: func(h *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventPermissionRequested {
			h.Session.Interrupt(false)
		}
	}})
	final := h.Run(t, context.Background(), "KZ:pending")
	if final.Status != string(engine.StatusInterrupted) {
		t.Fatalf("status %s, want interrupted", final.Status)
	}
	evs := h.Journal.Events()
	dec := indexOf(evs, func(ev engine.Event) bool {
		return ev.Type == engine.EventPermissionDecided && ev.ToolCallID == "toolu_pending"
	})
	if dec < 0 || evs[dec].Decision != engine.DecisionDeny || evs[dec].Stage != "cancelled" {
		t.Fatalf("the prompt was not closed as cancelled: %+v", h.Journal.OfType(engine.EventPermissionDecided))
	}
	if fin := indexOf(evs, func(ev engine.Event) bool {
		return ev.Type == engine.EventToolCallFinished && ev.ToolCallID == "toolu_pending"
	}); fin >= 0 && fin < dec {
		t.Errorf("the prompt closed only after the tool call ended (event %d after %d)", dec, fin)
	}
	if !strings.Contains(logs.String(), `control_cancel_request`) {
		t.Error("the CLI sent no control_cancel_request")
	}
	if p := h.Session.Pending(); len(p) != 0 {
		t.Errorf("still pending: %v", p)
	}
	if _, err := os.Stat(filepath.Join(ws, "never.txt")); err == nil {
		t.Error("the withdrawn command ran")
	}
	pid := rt.Pid(h.Session.ID())
	if pid == 0 {
		t.Fatal("the CLI did not stay alive")
	}
	final = h.Run(t, context.Background(), "KZ:hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "still here" || rt.Pid(h.Session.ID()) != pid {
		t.Errorf("next turn %+v (pid %d, was %d)", final, rt.Pid(h.Session.ID()), pid)
	}
}

// environOf returns the environment of a live process.
func environOf(pid int) []string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return strings.Split(string(b), "\x00")
}

// The immediate interrupt during a long tool call: SIGINT to the CLI's
// group, SIGKILL after the grace period; the CLI, its tool's child and every
// process carrying the CLI's marker are gone, and the next turn resumes the
// Claude session in a new process.
func TestRealImmediateInterruptLeavesNoProcess(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZ:hello") {
			return fakeReply{Text: "back again"}
		}
		if _, ok := r.toolResult(); ok {
			return fakeReply{Text: "unexpected continuation"}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_imm", Name: "Bash", Input: map[string]string{"command": "sleep 38.5", "description": "wait"}}}}
	})
	rt, _ := realSetup(t, api)
	var mu sync.Mutex
	var cli int
	var sleeps []int
	var marker string
	var interruptedAt time.Time
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce,
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventPermissionDecided && ev.Decision == engine.DecisionAllow {
				pid := rt.Pid(h.Session.ID())
				clitest.WhenRunning(func() {
					mu.Lock()
					cli, sleeps = pid, clitest.Procs("sleep", "38.5")
					for _, kv := range environOf(pid) {
						if strings.HasPrefix(kv, markerVar+"=") {
							marker = kv
						}
					}
					interruptedAt = time.Now()
					mu.Unlock()
					h.Session.Interrupt(true)
				}, "sleep", "38.5")
			}
		}})
	final := h.Run(t, context.Background(), "KZ:sleep")
	ended := time.Now()
	if final.Status != string(engine.StatusInterrupted) {
		t.Fatalf("status %s, want interrupted", final.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if cli == 0 || len(sleeps) == 0 || marker == "" {
		t.Fatalf("the tool never ran (cli %d, sleep %v, marker %q)", cli, sleeps, marker)
	}
	took := ended.Sub(interruptedAt)
	t.Logf("the turn ended %v after the interrupt (cli %d, tool child %v)", took, cli, sleeps)
	if took > rt.cfg.KillGrace+3*time.Second {
		t.Errorf("the immediate interrupt took %v (grace %v)", took, rt.cfg.KillGrace)
	}
	clitest.CheckGone(t, 3*time.Second, "the immediate interrupt", append([]int{cli}, sleeps...)...)
	if left := (proc.Tree{Marker: marker}).Marked(); len(left) > 0 {
		t.Errorf("processes of the killed CLI remain: %v", left)
	}
	if rt.Pid(h.Session.ID()) != 0 {
		t.Error("the runtime still names a CLI for the session")
	}
	final = h.Run(t, context.Background(), "KZ:hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "back again" {
		t.Errorf("next turn %+v", final)
	}
	if p := rt.Pid(h.Session.ID()); p == 0 || p == cli {
		t.Errorf("next turn ran in pid %d (killed CLI was %d)", p, cli)
	}
}

// The CLI killed mid-turn with no failover configured: an error event,
// the turn ends interrupted, and the next turn works in a new CLI.
func TestRealKilledMidTurnEndsInterrupted(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZ:hello") {
			return fakeReply{Text: "alive"}
		}
		if _, ok := r.toolResult(); ok {
			return fakeReply{Text: "unexpected continuation"}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_kill", Name: "Bash", Input: map[string]string{"command": "sleep 37.75", "description": "wait"}}}}
	})
	rt, _ := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce,
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventPermissionDecided {
				pid := rt.Pid(h.Session.ID())
				clitest.WhenRunning(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }, "sleep", "37.75")
			}
		}})
	final := h.Run(t, context.Background(), "KZ:sleep")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %s, want interrupted", final.Status)
	}
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed || !strings.Contains(errs[0].Text, "claude CLI exited") {
		t.Errorf("error events %+v", errs)
	}
	time.Sleep(200 * time.Millisecond)
	if left := clitest.Procs("sleep", "37.75"); len(left) > 0 {
		t.Errorf("the tool's child survived the CLI: %v", left)
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	final = h.Run(t, context.Background(), "KZ:hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "alive" {
		t.Errorf("next turn %+v", final)
	}
}

// withEnv returns env with key set to val, or removed when val is "".
func withEnv(env []string, key, val string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
	if val != "" {
		out = append(out, key+"="+val)
	}
	return out
}

// Claude's own retries are bounded by kz's default (not the CLI's 10 with
// backoff): an overloaded API is asked 1+2 times and the turn fails in
// seconds with a retryable error; a dead endpoint fails in seconds too.
func TestRealRetriesBounded(t *testing.T) {
	// The test process's own setting must not hide kz's default.
	t.Setenv("CLAUDE_CODE_MAX_RETRIES", "")
	_ = os.Unsetenv("CLAUDE_CODE_MAX_RETRIES")

	api := newFakeAPI(t, func(*apiRequest) fakeReply { return fakeReply{Status: 529} })
	rt, _ := realSetup(t, api)
	rt.cfg.Env = withEnv(rt.cfg.Env, "CLAUDE_CODE_MAX_RETRIES", "")
	// The CLI's start-up is slow on a loaded machine; what is bounded is
	// the time from its session start (just before the first request) to
	// the end of the turn.
	var mu sync.Mutex
	var began time.Time
	mark := func(_ *clitest.Harness, ev engine.Event) {
		if ev.Type == engine.EventSessionStarted {
			mu.Lock()
			began = time.Now()
			mu.Unlock()
		}
	}
	since := func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		if began.IsZero() {
			t.Fatal("no session_started")
		}
		d := time.Since(began)
		began = time.Time{}
		return d
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{OnEvent: mark})
	start := time.Now()
	final := h.Run(t, context.Background(), "hello")
	took := since()
	t.Logf("overloaded API: failed %v after the session started (%v with start-up) and %d requests", took, time.Since(start), len(api.Requests()))
	if final.Status != string(engine.StatusError) {
		t.Errorf("status %s, want error", final.Status)
	}
	if n := len(api.Requests()); n != 3 {
		t.Errorf("the API was asked %d times, want 3 (1 + 2 retries)", n)
	}
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrOverloaded || !errs[0].Retryable {
		t.Errorf("error events %+v", errs)
	}
	if took > 10*time.Second {
		t.Errorf("an overloaded API took %v to fail", took)
	}

	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	rt2, _ := realSetup(t, api)
	rt2.cfg.Env = withEnv(withEnv(rt2.cfg.Env, "CLAUDE_CODE_MAX_RETRIES", ""), "ANTHROPIC_BASE_URL", dead)
	h2 := newHarness(t, []engine.RuntimeEntry{{Runtime: rt2}}, clitest.Options{OnEvent: mark})
	start = time.Now()
	final = h2.Run(t, context.Background(), "hello")
	took = since()
	t.Logf("dead endpoint: failed %v after the session started (%v with start-up)", took, time.Since(start))
	if final.Status != string(engine.StatusError) {
		t.Errorf("dead endpoint: status %s, want error", final.Status)
	}
	if errs := h2.Journal.OfType(engine.EventError); len(errs) != 1 || !errs[0].Retryable {
		t.Errorf("dead endpoint: error events %+v", errs)
	}
	if took > 10*time.Second {
		t.Errorf("a dead endpoint took %v to fail", took)
	}
}

// nopSnapshots keeps no undo snapshots; the tests do not undo.
type nopSnapshots struct{}

func (nopSnapshots) SaveSnapshot(context.Context, patch.Snapshot) error { return nil }

// patch-proposal: Claude is offered no write tools, is asked for kz's
// proposal format in its system prompt, and its answer goes through kz's
// patch review (proposed, approved by the person, applied).
func TestRealPatchProposalGoesToReview(t *testing.T) {
	answer := "SUMMARY: say goodbye\n\ngreet.go\n<<<<<<< SEARCH\nconst msg = \"Hello\"\n=======\nconst msg = \"Goodbye\"\n>>>>>>> REPLACE\n"
	api := newFakeAPI(t, func(*apiRequest) fakeReply { return fakeReply{Text: answer} })
	rt, ws := realSetup(t, api)
	rt.cfg.ProposalPrompt = patch.PromptText()
	greet := filepath.Join(ws, "greet.go")
	if err := os.WriteFile(greet, []byte("package main\n\nconst msg = \"Hello\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	reviewer := &patch.Reviewer{
		Applier: &patch.Applier{FS: w, Snapshots: nopSnapshots{}, JournalDir: t.TempDir(), Root: ws},
		Run:     func(context.Context, engine.Confinement, string) (string, int, error) { return "", 0, nil },
	}
	var asked []string
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Mode: engine.ModePatchProposal, Patcher: reviewer,
		Answer: func(ev engine.Event) engine.Answer {
			asked = append(asked, ev.Tool)
			if ev.Tool == engine.ToolApplyPatch {
				return engine.Answer{Decision: engine.DecisionAllow}
			}
			return engine.Answer{Decision: engine.DecisionDeny}
		}})
	final := h.Run(t, context.Background(), "propose saying goodbye")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	names := reqs[0].toolNames()
	for _, banned := range []string{"Write", "Edit", "MultiEdit", "NotebookEdit"} {
		if slices.Contains(names, banned) {
			t.Errorf("patch-proposal offered %s (tools %v)", banned, names)
		}
	}
	if !slices.Contains(names, "Read") {
		t.Errorf("patch-proposal lost Read (tools %v)", names)
	}
	if sys := reqs[0].systemText(); !strings.Contains(sys, "<<<<<<< SEARCH") || !strings.Contains(sys, "VERIFY:") {
		t.Errorf("the system prompt does not ask for kz's proposal format:\n%s", sys)
	}
	prop := h.Journal.OfType(engine.EventPatchProposed)
	if len(prop) != 1 || len(prop[0].Files) != 1 || prop[0].Files[0].Path != "greet.go" || !strings.Contains(prop[0].Files[0].Diff, "+const msg = \"Goodbye\"") {
		t.Fatalf("patch_proposed %+v", prop)
	}
	if !slices.Equal(asked, []string{engine.ToolApplyPatch}) {
		t.Errorf("the person was asked about %v, want only the proposal", asked)
	}
	if n := len(h.Journal.OfType(engine.EventPatchApplied)); n != 1 {
		t.Errorf("%d patch_applied events", n)
	}
	if b, _ := os.ReadFile(greet); string(b) != "package main\n\nconst msg = \"Goodbye\"\n" {
		t.Errorf("greet.go after review: %q", b)
	}
}

// kz runtimes asks the CLI its version.
func TestRealAvailableVersion(t *testing.T) {
	bin := realClaude(t)
	v, err := New(Config{Command: bin}).Available()
	if err != nil || v != pinnedVersion {
		t.Errorf("Available() = %q, %v; want %s", v, err, pinnedVersion)
	}
}

// A mode change restarts the CLI with the new mode's flags (the tool lists
// cannot change in a running CLI) and --resume, so Claude keeps the
// conversation: the first request in analysis-only mode carries the earlier
// answer and offers no write or shell tool.
func TestRealModeChangeResumes(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZ:remember") {
			return fakeReply{Text: "I will remember mango."}
		}
		return fakeReply{Text: "analysing"}
	})
	rt, _ := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	first := h.Run(t, context.Background(), "KZ:remember")
	pid := rt.Pid(h.Session.ID())
	if err := h.Session.SetMode(engine.ModeAnalysisOnly); err != nil {
		t.Fatal(err)
	}
	before := len(api.Requests())
	second := h.Run(t, context.Background(), "KZ:analyse")
	if second.Status != string(engine.StatusComplete) || second.NativeID != first.NativeID {
		t.Errorf("after the mode change: %+v, want Claude session %s", second, first.NativeID)
	}
	if p := rt.Pid(h.Session.ID()); p == pid || p == 0 {
		t.Errorf("the CLI was not restarted for the new mode (pid %d, was %d)", p, pid)
	}
	st := h.Journal.OfType(engine.EventSessionStarted)
	if len(st) != 2 || st[1].PermissionMode != "plan" {
		t.Errorf("session_started %+v", st)
	}
	reqs := api.Requests()
	if len(reqs) <= before {
		t.Fatal("no request after the mode change")
	}
	if !strings.Contains(reqs[before].allText(), "I will remember mango.") {
		t.Errorf("the resumed request lacks the earlier answer: %s", reqs[before].allText())
	}
	if names := reqs[before].toolNames(); slices.Contains(names, "Bash") || slices.Contains(names, "Write") {
		t.Errorf("analysis-only offered %v", names)
	}
}

// An auth failure and a rate limit from the API become classified error
// events; being retryable, they fail over along the chain when one is
// configured, and end the turn as an error when none is.
func TestRealAPIErrorsFailOver(t *testing.T) {
	for _, c := range []struct {
		status   int
		kind     engine.ErrorKind
		failover bool
	}{{401, engine.ErrAuth, true}, {429, engine.ErrRateLimit, true}, {429, engine.ErrRateLimit, false}} {
		t.Run(strconv.Itoa(c.status)+map[bool]string{true: "_failover", false: "_alone"}[c.failover], func(t *testing.T) {
			api := newFakeAPI(t, func(*apiRequest) fakeReply { return fakeReply{Status: c.status} })
			rt, _ := realSetup(t, api)
			other := &clitest.Other{Answer: "the backup answered"}
			o := clitest.Options{}
			if c.failover {
				o.Failover = []engine.ChainLink{{Runtime: "other"}}
			}
			h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: other}}, o)
			final := h.Run(t, context.Background(), "hello")
			errs := h.Journal.OfType(engine.EventError)
			if len(errs) != 1 || errs[0].ErrorKind != c.kind || !errs[0].Retryable || !strings.Contains(errs[0].Text, strconv.Itoa(c.status)) {
				t.Errorf("error events %+v", errs)
			}
			switch {
			case c.failover && (final.Status != string(engine.StatusComplete) || final.Runtime != "other" || len(h.Journal.OfType(engine.EventRuntimeSwitched)) != 1):
				t.Errorf("no failover: %+v", final)
			case !c.failover && final.Status != string(engine.StatusError):
				t.Errorf("status %s, want error", final.Status)
			}
		})
	}
}

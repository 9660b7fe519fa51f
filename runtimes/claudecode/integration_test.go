package claudecode

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/hooks"
	"github.com/kaizen-code/kz/tools/permission"
)

// These tests run the real `claude` CLI against fakeAPI. They skip when
// the CLI is missing, unless KZ_REQUIRE_CLIS is set (CI), where they fail.
// The CLI is found through KZ_CLAUDE_BIN, PATH, or where install-cli.sh
// puts it.

// realClaude returns the path of the real CLI or skips the test.
func realClaude(t testing.TB) string {
	t.Helper()
	onPath, _ := exec.LookPath("claude")
	home, _ := os.UserHomeDir()
	return clitest.RealCLI(t, clitest.Binary{Name: "claude", EnvVar: "KZ_CLAUDE_BIN", Install: "runtimes/claudecode/install-cli.sh", Paths: []string{
		onPath,
		filepath.Join(clitest.Repo, ".cache", "claude-code", "node_modules", ".bin", "claude"),
		filepath.Join(home, ".cache", "kz", "claude-code-"+pinnedVersion, "node_modules", ".bin", "claude"),
	}})
}

// pinnedVersion is the CLI version the protocol notes describe and
// install-cli.sh installs.
const pinnedVersion = "2.1.197"

// realEnv is the offline environment of protocol notes §3.
func realEnv(api *fakeAPI, home string) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + api.srv.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"ANTHROPIC_AUTH_TOKEN=",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
	}
}

// realSetup makes a workspace (a git repository), a scratch HOME and a
// runtime driving the real CLI against api.
func realSetup(t testing.TB, api *fakeAPI) (*Runtime, string) {
	t.Helper()
	bin := realClaude(t)
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	clitest.Dirs(t, filepath.Join(ws, ".git", "hooks"), home)
	cfg := Config{Name: "claude", Command: bin, Workspace: ws, Env: realEnv(api, home)}
	if os.Getenv("KZ_CLAUDE_DEBUG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rt := New(cfg)
	t.Cleanup(func() { _ = rt.Close() })
	return rt, ws
}

func textOf(evs []engine.Event, typ engine.EventType) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type == typ {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func TestRealPlainText(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		return fakeReply{Thinking: "pondering", Text: "Hello from the fake model."}
	})
	rt, _ := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	final := h.Run(t, context.Background(), "Say hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "Hello from the fake model." {
		t.Fatalf("final %+v", final)
	}
	evs := h.Journal.Events()
	if got := textOf(evs, engine.EventTextDelta); got != "Hello from the fake model." {
		t.Errorf("text deltas %q", got)
	}
	if got := textOf(evs, engine.EventReasoningDelta); got != "pondering" {
		t.Errorf("reasoning %q", got)
	}
	if got := textOf(evs, engine.EventAssistantMessage); got != "Hello from the fake model." {
		t.Errorf("assistant message %q", got)
	}
	st := h.Journal.OfType(engine.EventSessionStarted)
	if len(st) != 1 || st[0].NativeID == "" || st[0].Version != pinnedVersion {
		t.Errorf("session_started %+v", st)
	}
	n := int64(len(api.Requests()))
	if n == 0 || final.Usage.InputTokens != 100*n || final.Usage.OutputTokens != 6*n || final.CostUSD <= 0 {
		t.Errorf("usage %+v cost %v over %d requests", final.Usage, final.CostUSD, n)
	}
	if final.NativeID != st[0].NativeID || final.Cycles != 1 {
		t.Errorf("final native %q cycles %d", final.NativeID, final.Cycles)
	}
	if u := h.Journal.OfType(engine.EventUsageUpdated); len(u) != 1 || u[0].Usage == nil || *u[0].Usage != *final.Usage || u[0].CostUSD != final.CostUSD {
		t.Errorf("usage_updated %+v, final usage %+v cost %v", u, final.Usage, final.CostUSD)
	}
	first := final
	final = h.Run(t, context.Background(), "Say hello again")
	t.Logf("turn 1 cost %v usage %+v; turn 2 cost %v usage %+v", first.CostUSD, *first.Usage, final.CostUSD, *final.Usage)
	if final.Status != string(engine.StatusComplete) || final.NativeID != first.NativeID || final.CostUSD != first.CostUSD {
		t.Errorf("second turn %+v", final)
	}
}

// scriptedBash answers a prompt marker with one Bash call, and a tool
// result with a text that quotes it, so the test can see what the model saw.
func scriptedBash(cmds map[string]string) func(r *apiRequest) fakeReply {
	return func(r *apiRequest) fakeReply {
		if res, ok := r.toolResult(); ok {
			return fakeReply{Text: "saw: " + contentText(res.Content)}
		}
		txt := r.lastUserText()
		for marker, cmd := range cmds {
			if strings.Contains(txt, marker) {
				return fakeReply{Tools: []fakeTool{{ID: "toolu_" + strings.TrimPrefix(marker, "KZ:"), Name: "Bash",
					Input: map[string]string{"command": cmd, "description": "test step"}}}}
			}
		}
		return fakeReply{Text: "nothing scripted for this"}
	}
}

// lastToolResult is the tool result the model got in the latest request.
func lastToolResult(t *testing.T, api *fakeAPI) contentBlock {
	t.Helper()
	reqs := api.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if res, ok := reqs[i].toolResult(); ok {
			return res
		}
	}
	t.Fatal("the model never got a tool result")
	return contentBlock{}
}

func TestRealBashPersonAndRules(t *testing.T) {
	api := newFakeAPI(t, scriptedBash(map[string]string{
		"KZ:person-ok": "touch person.txt", "KZ:person-no": "touch denied.txt",
		"KZ:rule-no": "rm -rf build", "KZ:rule-ok": "touch rule.txt"}))
	rt, ws := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{
		Gate: clitest.Gate(t, permission.Rules{Deny: []string{"Bash(rm:*)"}, Allow: []string{"Bash(touch rule.txt)", "Edit(rule.txt)"}}),
		Answer: func(ev engine.Event) engine.Answer {
			if ev.Command == "touch person.txt" {
				return engine.Answer{Decision: engine.DecisionAllow}
			}
			return engine.Answer{Decision: engine.DecisionDeny, Feedback: "no thanks from kz"}
		}})
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(ws, name)); return err == nil }
	asked := func() int { return len(h.Journal.OfType(engine.EventPermissionRequested)) }
	decided := func(id string) engine.Event {
		for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
			if ev.ToolCallID == id {
				return ev
			}
		}
		t.Errorf("no permission_decided for %s", id)
		return engine.Event{}
	}
	// The deny rule's command would remove this directory.
	if err := os.MkdirAll(filepath.Join(ws, "build", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}

	final := h.Run(t, context.Background(), "KZ:person-ok")
	if final.Status != string(engine.StatusComplete) || !exists("person.txt") || asked() != 1 {
		t.Errorf("allowed by the person: status %s, file %v, asked %d", final.Status, exists("person.txt"), asked())
	}

	final = h.Run(t, context.Background(), "KZ:person-no")
	res := lastToolResult(t, api)
	if exists("denied.txt") || asked() != 2 || !res.IsError || !strings.Contains(contentText(res.Content), "no thanks from kz") {
		t.Errorf("denied by the person: file %v, asked %d, model saw %+v", exists("denied.txt"), asked(), res)
	}
	if final.Output != "saw: no thanks from kz" {
		t.Errorf("answer after the denial %q", final.Output)
	}

	final = h.Run(t, context.Background(), "KZ:rule-no")
	// The model's next request carries the denial as the call's result.
	res = lastToolResult(t, api)
	if asked() != 2 || !res.IsError || res.ToolUseID != "toolu_rule-no" || !strings.Contains(contentText(res.Content), "rm -rf build") {
		t.Errorf("denied by a rule: asked %d, model saw %+v", asked(), res)
	}
	if d := decided("toolu_rule-no"); d.Decision != engine.DecisionDeny || d.Stage != "deny_rule" {
		t.Errorf("denied by a rule: permission_decided %+v", d)
	}
	if !exists("build/keep") || !strings.HasPrefix(final.Output, "saw: ") {
		t.Errorf("denied by a rule: build exists %v, answer %q", exists("build/keep"), final.Output)
	}

	h.Run(t, context.Background(), "KZ:rule-ok")
	if !exists("rule.txt") || asked() != 2 {
		t.Errorf("allowed by a rule: file %v, asked %d", exists("rule.txt"), asked())
	}
	if d := decided("toolu_rule-ok"); d.Decision != engine.DecisionAllow || d.Stage != "allow" {
		t.Errorf("allowed by a rule: permission_decided %+v", d)
	}
	if res := lastToolResult(t, api); res.ToolUseID != "toolu_rule-ok" || res.IsError {
		t.Errorf("allowed by a rule: model saw %+v", res)
	}
	// Claude's result lists the denied calls again; kz logs each once.
	seen := map[string]int{}
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		seen[ev.ToolCallID]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%d decisions logged for %s", n, id)
		}
	}
}

func TestRealWriteToGitHookDeniedInYolo(t *testing.T) {
	var ws string
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if res, ok := r.toolResult(); ok {
			return fakeReply{Text: "saw: " + contentText(res.Content)}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_hook", Name: "Write", Input: map[string]string{
			"file_path": filepath.Join(ws, ".git", "hooks", "pre-commit"), "content": "#!/bin/sh\necho pwned\n"}}}}
	})
	rt, w := realSetup(t, api)
	ws = w
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{}), PermissionMode: engine.PermissionYolo,
		Answer: clitest.AllowOnce})
	final := h.Run(t, context.Background(), "install a hook")
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatal("the hook was written")
	}
	dec := h.Journal.OfType(engine.EventPermissionDecided)
	if len(dec) != 1 || dec[0].Decision != engine.DecisionDeny || dec[0].Stage != "safety" ||
		len(dec[0].Paths) != 1 || dec[0].Paths[0] != filepath.Join(ws, ".git", "hooks", "pre-commit") {
		t.Errorf("permission_decided %+v", dec)
	}
	if n := len(h.Journal.OfType(engine.EventPermissionRequested)); n != 0 {
		t.Errorf("the person was asked %d times", n)
	}
	if res := lastToolResult(t, api); !res.IsError || !strings.Contains(contentText(res.Content), ".git") {
		t.Errorf("model saw %+v", res)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("status %s", final.Status)
	}
}

func TestRealAllowForSession(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		n := strings.Count(string(mustJSON(r.Messages)), `"tool_result"`)
		cmds := []string{"touch same.txt", "touch same.txt", "touch other.txt"}
		if n < len(cmds) {
			return fakeReply{Tools: []fakeTool{{ID: "toolu_s" + string(rune('1'+n)), Name: "Bash",
				Input: map[string]string{"command": cmds[n], "description": "step"}}}}
		}
		return fakeReply{Text: "done"}
	})
	rt, ws := realSetup(t, api)
	// The CLI runs behind a tee, so the test sees what kz wrote to it.
	stdinLog := recordStdin(t, rt)
	// kz's own gate, which keeps the session grant, with a PreToolUse
	// hook that notes every command it is shown.
	seen := filepath.Join(t.TempDir(), "seen")
	hr, err := hooks.New(hooks.Options{Workspace: ws, User: hooks.Config{"PreToolUse": {{Matcher: "Bash",
		Hooks: []hooks.Command{{Command: `{ sed -n 's/.*"command":"\([^"]*\)".*/\1/p'; echo; } >> ` + seen}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := permission.New(permission.Options{Home: t.TempDir(), Hooks: hr})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: gate, Answer: func(engine.Event) engine.Answer {
		return engine.Answer{Decision: engine.DecisionAllow, Scope: engine.ScopeSession}
	}})
	final := h.Run(t, context.Background(), "KZ:session")
	// The granted command passed the gate again, so the hook saw it both
	// times, and the gate's grant allowed it without asking.
	if got := strings.Fields(strings.ReplaceAll(readFile(t, seen), " ", "_")); strings.Join(got, "|") != "touch_same.txt|touch_same.txt|touch_other.txt" {
		t.Errorf("the PreToolUse hook saw %q, want same twice and other", got)
	}
	if d := h.Journal.Decided("touch same.txt"); len(d) != 2 || d[0].Decision != engine.DecisionAllow || d[1].Decision != engine.DecisionAllow {
		t.Errorf("decisions of the granted command %+v", d)
	}
	// The grant went to Claude as a rule for exactly that command, kept
	// for its session only.
	var grants []permUpdate
	for _, line := range strings.Split(readFile(t, stdinLog), "\n") {
		var m struct {
			Response struct {
				Response permissionResult `json:"response"`
			} `json:"response"`
		}
		if json.Unmarshal([]byte(line), &m) == nil {
			grants = append(grants, m.Response.Response.UpdatedPermissions...)
		}
	}
	want := []permUpdate{{Type: "addRules", Behavior: "allow", Destination: "session", Rules: []permRule{{ToolName: "Bash", RuleContent: "touch same.txt"}}},
		{Type: "addRules", Behavior: "allow", Destination: "session", Rules: []permRule{{ToolName: "Bash", RuleContent: "touch other.txt"}}}}
	if got, w := mustJSON(grants), mustJSON(want); string(got) != string(w) {
		t.Errorf("updatedPermissions sent\n got %s\nwant %s", got, w)
	}
	// destination "session" keeps the grant in the CLI's memory: no
	// settings file of Claude's is written, in the project or in HOME.
	for _, dir := range []string{filepath.Join(ws, ".claude"), filepath.Join(filepath.Dir(ws), "home", ".claude")} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "settings") {
				b, _ := os.ReadFile(p)
				t.Errorf("Claude settings written: %s: %s", p, b)
			}
			return nil
		})
	}
	var asked []string
	for _, ev := range h.Journal.OfType(engine.EventPermissionRequested) {
		asked = append(asked, ev.Command)
	}
	if strings.Join(asked, "|") != "touch same.txt|touch other.txt" {
		t.Errorf("asked for %q, want the first same and the other", asked)
	}
	fin := h.Journal.OfType(engine.EventToolCallFinished)
	if len(fin) != 3 || final.Status != string(engine.StatusComplete) {
		t.Errorf("status %s, %d tool calls finished", final.Status, len(fin))
	}
	for _, f := range fin {
		if f.IsError {
			t.Errorf("tool call failed: %+v", f)
		}
	}
}

// recordStdin puts the runtime's CLI behind a shell tee that appends
// everything kz writes to the CLI to a file, whose path it returns.
func recordStdin(t *testing.T, rt *Runtime) string {
	t.Helper()
	dir := t.TempDir()
	log, wrapper := filepath.Join(dir, "stdin.jsonl"), filepath.Join(dir, "claude")
	script := "#!/bin/sh\ntee -a \"$KZ_TEST_STDIN_LOG\" | \"$KZ_TEST_REAL_CLAUDE\" \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rt.cfg.Env = append(rt.cfg.Env, "KZ_TEST_STDIN_LOG="+log, "KZ_TEST_REAL_CLAUDE="+rt.cfg.Command)
	rt.cfg.Command = wrapper
	return log
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func cliPid(rt *Runtime, sessionID string) int { return rt.Pid(sessionID) }

func TestRealGracefulInterruptDuringTool(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if strings.Contains(r.lastUserText(), "KZ:hello") {
			return fakeReply{Text: "hello again"}
		}
		if _, ok := r.toolResult(); ok {
			return fakeReply{Text: "unexpected continuation"}
		}
		return fakeReply{Tools: []fakeTool{{ID: "toolu_sleep", Name: "Bash", Input: map[string]string{"command": "sleep 37.25", "description": "wait"}}}}
	})
	rt, _ := realSetup(t, api)
	var mu sync.Mutex
	var sleeps []int
	var interruptedAt time.Time
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce,
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventPermissionDecided && ev.Decision == engine.DecisionAllow {
				clitest.WhenRunning(func() {
					mu.Lock()
					sleeps, interruptedAt = clitest.Procs("sleep", "37.25"), time.Now()
					mu.Unlock()
					h.Session.Interrupt(false)
				}, "sleep", "37.25")
			}
		}})
	final := h.Run(t, context.Background(), "KZ:sleep")
	if final.Status != string(engine.StatusInterrupted) {
		t.Fatalf("status %s, want interrupted", final.Status)
	}
	mu.Lock()
	if len(sleeps) == 0 {
		t.Fatal("the long tool call never ran")
	}
	if d := time.Since(interruptedAt); d > 10*time.Second {
		t.Errorf("the interrupt took %v", d)
	}
	// The very processes that ran the tool are gone.
	clitest.CheckGone(t, 3*time.Second, "the interrupt", sleeps...)
	mu.Unlock()
	if fin := h.Journal.OfType(engine.EventToolCallFinished); len(fin) != 1 || fin[0].Status != engine.ToolStatusInterrupted {
		t.Errorf("tool_call_finished %+v", fin)
	}
	pid := cliPid(rt, h.Session.ID())
	if pid == 0 {
		t.Fatal("the CLI did not stay alive after a graceful interrupt")
	}
	final = h.Run(t, context.Background(), "KZ:hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "hello again" {
		t.Errorf("next turn %+v", final)
	}
	if cliPid(rt, h.Session.ID()) != pid {
		t.Error("the next turn did not run in the same CLI process")
	}
}

func TestRealResumeAndPrimeAfterOtherRuntime(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		switch txt := r.lastUserText(); {
		case strings.Contains(txt, "KZ:remember"):
			return fakeReply{Text: "I will remember pineapple."}
		default:
			return fakeReply{Text: "recalling"}
		}
	})
	rt, _ := realSetup(t, api)
	other := &clitest.Other{Answer: "scripted answer 42"}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: other}}, clitest.Options{})
	first := h.Run(t, context.Background(), "KZ:remember the word")
	// A new CLI process must resume Claude's session from its files.
	rt.CloseSession(h.Session.ID())
	second := h.Run(t, context.Background(), "KZ:recall")
	if second.NativeID != first.NativeID {
		t.Errorf("resume gave session %q, want %q", second.NativeID, first.NativeID)
	}
	reqs := api.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(last.allText(), "I will remember pineapple.") {
		t.Errorf("the resumed request lacks the earlier answer: %s", last.allText())
	}

	if err := h.Session.SwitchRuntime("other", ""); err != nil {
		t.Fatal(err)
	}
	h.Run(t, context.Background(), "what is six times seven?")
	if err := h.Session.SwitchRuntime("claude", ""); err != nil {
		t.Fatal(err)
	}
	before := len(api.Requests())
	third := h.Run(t, context.Background(), "KZ:back")
	if third.NativeID == "" || third.NativeID == first.NativeID {
		t.Errorf("back on claude after another runtime: session %q, want a new one", third.NativeID)
	}
	reqs = api.Requests()
	if len(reqs) <= before {
		t.Fatal("the new Claude session made no request")
	}
	// The new session's very first request.
	got := reqs[before].allText()
	for _, want := range []string{"<kz-conversation>", "KZ:remember the word", "I will remember pineapple.", "what is six times seven?", "scripted answer 42", "KZ:back"} {
		if !strings.Contains(got, want) {
			t.Errorf("the new session's first request lacks %q:\n%s", want, got)
		}
	}
}

func TestRealKilledMidTurnFailsOver(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		return fakeReply{Tools: []fakeTool{{ID: "toolu_k", Name: "Bash", Input: map[string]string{"command": "sleep 37.5", "description": "wait"}}}}
	})
	rt, _ := realSetup(t, api)
	other := &clitest.Other{Answer: "the backup answered"}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: other}}, clitest.Options{Answer: clitest.AllowOnce,
		Failover: []engine.ChainLink{{Runtime: "other"}},
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventPermissionDecided {
				pid := cliPid(rt, h.Session.ID())
				clitest.WhenRunning(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }, "sleep", "37.5")
			}
		}})
	final := h.Run(t, context.Background(), "KZ:sleep")
	errs := h.Journal.OfType(engine.EventError)
	if len(errs) != 1 || errs[0].ErrorKind != engine.ErrCrashed || !errs[0].Retryable {
		t.Errorf("error events %+v", errs)
	}
	if final.Status != string(engine.StatusComplete) || final.Output != "the backup answered" || final.Runtime != "other" {
		t.Errorf("final %+v", final)
	}
	// The transcript closes the killed call as interrupted, not re-run.
	var closed bool
	for _, e := range h.Session.Transcript() {
		if e.Kind == engine.EntryToolCall && e.ToolCallID == "toolu_k" && e.Status == engine.ToolStatusInterrupted {
			closed = true
		}
	}
	if !closed {
		t.Error("the killed tool call is not closed as interrupted in the transcript")
	}
	time.Sleep(200 * time.Millisecond)
	if left := clitest.Procs("sleep", "37.5"); len(left) > 0 {
		t.Errorf("the tool's child survived the CLI: %v", left)
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// analysis-only: Claude runs in plan mode and the model is not even
// offered write or shell tools.
func TestRealAnalysisOnlyOffersNoWriteTools(t *testing.T) {
	api := newFakeAPI(t, func(*apiRequest) fakeReply { return fakeReply{Text: "analysis"} })
	rt, _ := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Mode: engine.ModeAnalysisOnly})
	final := h.Run(t, context.Background(), "analyse")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	if st := h.Journal.OfType(engine.EventSessionStarted); len(st) != 1 || st[0].PermissionMode != "plan" {
		t.Errorf("session_started %+v", st)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	var names []string
	for _, tl := range reqs[0].Tools {
		names = append(names, tl.Name)
	}
	for _, banned := range []string{"Bash", "Write", "Edit", "NotebookEdit"} {
		if slices.Contains(names, banned) {
			t.Errorf("analysis-only offered %s (tools %v)", banned, names)
		}
	}
	if !slices.Contains(names, "Read") {
		t.Errorf("analysis-only lost Read (tools %v)", names)
	}
}

package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/codex/codextest"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tools/permission"
)

// These tests run the real `codex app-server` against a fake OpenAI
// Responses API on 127.0.0.1. They skip when the CLI is missing, unless
// KZ_REQUIRE_CLIS is set (CI), where they fail. The CLI is found through
// KZ_CODEX_BIN or where install-cli.sh puts it.

const pinnedVersion = "0.169.0"

func realCodex(t testing.TB) string {
	t.Helper()
	return clitest.RealCLI(t, clitest.Binary{Name: "codex", EnvVar: "KZ_CODEX_BIN", Install: "runtimes/codex/install-cli.sh",
		Paths: []string{filepath.Join(clitest.Repo, ".cache", "codex-"+pinnedVersion, "node_modules", "@openai", "codex-*", "vendor", "*", "bin", "codex")}})
}

// ---- fake Responses API ----

// step is what the fake model answers: text, a shell command or a patch.
type step struct {
	Text  string
	Shell string
	Patch string
	// Item is any other output item, as the Responses API streams it
	// (a tool_search_call, a function_call of an MCP tool).
	Item map[string]any
}

// respAPI is a scripted OpenAI Responses API on 127.0.0.1. Its traffic's
// credential of a Responses request is the Authorization header.
type respAPI struct {
	clitest.Traffic[map[string]any]
	srv *httptest.Server
	// down makes every request fail with HTTP 500, like a dead endpoint
	// behind a proxy.
	down   bool
	script func(outputs int, body map[string]any) step
}

// newRespAPI starts a fake Responses API answering with script; it stops
// when the test ends.
func newRespAPI(t testing.TB, script func(outputs int, body map[string]any) step) *respAPI {
	a := &respAPI{script: script}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *respAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw := a.Receive(r)
	if !strings.HasSuffix(r.URL.Path, "/responses") || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	a.AddCredential(r.Header.Get("Authorization"))
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.AddBody(body)
	if a.down {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprint(w, `{"error":{"message":"the fake endpoint is down","type":"server_error","code":"server_error"}}`)
		return
	}
	outputs := 0
	input, _ := body["input"].([]any)
	// Outputs since the last user message: a resumed thread carries the
	// earlier turns' outputs too.
	for _, it := range input {
		m, _ := it.(map[string]any)
		typ, _ := m["type"].(string)
		switch {
		case strings.HasSuffix(typ, "_output"):
			outputs++
		case typ == "message" && m["role"] == "user":
			outputs = 0
		}
	}
	st := a.script(outputs, body)
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	send("response.created", map[string]any{"response": map[string]any{"id": "resp_1"}})
	var item map[string]any
	switch {
	case st.Item != nil:
		item = st.Item
	case st.Shell != "":
		args, _ := json.Marshal(map[string]any{"cmd": st.Shell, "yield_time_ms": 60000})
		item = map[string]any{"type": "function_call", "id": "fc_1", "call_id": fmt.Sprintf("call_%d", outputs), "name": shellTool(body),
			"arguments": string(args), "status": "completed"}
	case st.Patch != "":
		item = map[string]any{"type": "custom_tool_call", "id": "ctc_1", "call_id": fmt.Sprintf("call_%d", outputs), "name": "apply_patch",
			"input": st.Patch, "status": "completed"}
	default:
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_1",
			"role": "assistant", "status": "in_progress", "content": []any{}}})
		send("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": st.Text})
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}}
	}
	if st.Shell != "" || st.Patch != "" || st.Item != nil {
		send("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	send("response.completed", map[string]any{"response": map[string]any{"id": "resp_1", "status": "completed",
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 20,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120}}})
}

// shellTool picks the shell tool the CLI advertised.
func shellTool(body map[string]any) string {
	tools, _ := body["tools"].([]any)
	names := map[string]bool{}
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if n, _ := m["name"].(string); n != "" {
			names[n] = true
		}
	}
	for _, n := range []string{"exec_command", "shell_command", "shell"} {
		if names[n] {
			return n
		}
	}
	return "exec_command"
}

// lastUser returns the last user message of a request as JSON text.
func lastUser(body map[string]any) string {
	input, _ := body["input"].([]any)
	for i := len(input) - 1; i >= 0; i-- {
		m, _ := input[i].(map[string]any)
		if m["type"] == "message" && m["role"] == "user" {
			b, _ := json.Marshal(m["content"])
			return string(b)
		}
	}
	return ""
}

// lastOutput returns the text of the last tool output in a request.
func lastOutput(body map[string]any) string {
	input, _ := body["input"].([]any)
	for i := len(input) - 1; i >= 0; i-- {
		m, _ := input[i].(map[string]any)
		if typ, _ := m["type"].(string); strings.HasSuffix(typ, "_output") {
			b, _ := json.Marshal(m["output"])
			return string(b)
		}
	}
	return ""
}

// ---- setup ----

// realSetup writes the offline configuration of protocol notes §3 and
// returns a runtime driving the real CLI against api, and its workspace.
func realSetup(t testing.TB, api *respAPI) (*Runtime, string) {
	return realSetupWith(t, api, fakeProvider(api), []string{"FAKE_OPENAI_API_KEY=dummy"})
}

// fakeProvider is the config of a provider that sends FAKE_OPENAI_API_KEY
// to api.
func fakeProvider(api *respAPI) string { return codextest.FakeProvider(api.srv.URL) }

// realSetupWith is realSetup with the provider part of config.toml and
// the variables (credentials) the runtime's configuration adds.
func realSetupWith(t testing.TB, api *respAPI, provider string, extraEnv []string) (*Runtime, string) {
	bin := realCodex(t)
	removeSandboxLeftovers(t)
	dir := clitest.ScratchDir(t, "codex-")
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	codexHome := filepath.Join(home, ".codex")
	clitest.Dirs(t, ws, codexHome)
	clitest.GitInit(t, ws)
	env := append([]string{"HOME=" + home, "CODEX_HOME=" + codexHome}, extraEnv...)
	codextest.Home(t, codextest.HomeOptions{Bin: bin, Home: home, CodexHome: codexHome, Workspace: ws, Provider: provider, Extra: `
[agents]
enabled = false
`})
	rt := New(Config{Name: "codex", Command: bin, Workspace: ws, Env: env, KillGrace: time.Second})
	// Finished turns' processes stop in the background until Close.
	t.Cleanup(func() { _ = rt.Close() })
	return rt, ws
}

// removeSandboxLeftovers removes, once the test's Codex processes are
// gone, the empty .git that Codex's own sandbox leaves in a writable root
// outside the workspace when a command it confines is killed: it protects
// every writable root's .git, /tmp's among them, by mounting over an empty
// directory it makes there. A /tmp/.git made every folder below /tmp look
// like a repository rooted at /tmp, to git and to the tests and benchmarks
// that run after. Only a .git that was not there before the test and is
// still empty is removed (os.Remove does not remove a directory with
// anything in it).
func removeSandboxLeftovers(t testing.TB) {
	for _, root := range []string{"/tmp", os.TempDir()} {
		p := filepath.Join(root, ".git")
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		t.Cleanup(func() {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				_ = os.Remove(p)
			}
		})
	}
}

func TestRealTextAndResume(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "Hello from the fake model."} })
	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final := h.Run(t, ctx, "Say hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "Hello from the fake model." || final.NativeID == "" {
		t.Fatalf("final %+v", final)
	}
	thread := final.NativeID
	final = h.Run(t, ctx, "Say it again")
	if final.Status != string(engine.StatusComplete) || final.NativeID != thread {
		t.Errorf("second turn did not resume thread %s: %+v", thread, final)
	}
	reqs := api.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1]["input"])
	if !strings.Contains(string(b), "Say hello") || !strings.Contains(string(b), "Say it again") {
		t.Errorf("the resumed thread's request lacks the first turn: %s", b)
	}
}

// Every command, ls included, is sent to kz's gate; one the person allows
// runs, one a deny rule refuses never runs and the person is not asked.
func TestRealShellApprovedAndDenied(t *testing.T) {
	api := newRespAPI(t, func(outputs int, body map[string]any) step {
		switch {
		case outputs == 0 && strings.Contains(lastUser(body), "DENYME"):
			return step{Shell: "touch denied.txt"}
		case outputs == 0:
			return step{Shell: "ls"}
		case outputs == 1 && !strings.Contains(lastUser(body), "DENYME"):
			return step{Shell: "echo hi > approved.txt"}
		}
		return step{Text: "done"}
	})
	rt, ws := realSetup(t, api)
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{Deny: []string{"Bash(touch:*)"}}),
		Answer: person.Answer})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "make a file"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	// Codex asked kz even about ls, which kz's gate allows by itself.
	if d := h.Journal.Decided("ls"); len(d) != 1 || d[0].Decision != engine.DecisionAllow {
		t.Errorf("kz's decisions about ls: %+v", d)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "approved.txt")); err != nil || string(b) != "hi\n" {
		reqs := api.Requests()
		t.Errorf("approved.txt = %q, %v; the model saw %s", b, err, lastOutput(reqs[len(reqs)-1]))
	}
	if asked := person.Commands(); len(asked) != 1 || asked[0] != "echo hi > approved.txt" {
		t.Errorf("the person was asked about %q", asked)
	}
	if final := h.Run(t, ctx, "DENYME please"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied.txt")); err == nil {
		t.Error("a command denied by a rule ran")
	}
	if d := h.Journal.Decided("touch denied.txt"); len(d) != 1 || d[0].Decision != engine.DecisionDeny || d[0].Stage != string(permission.StageDenyRule) {
		t.Errorf("kz's decisions about the denied command: %+v", d)
	}
	if asked := person.Commands(); len(asked) != 1 {
		t.Errorf("the person was asked about a command a rule denies: %q", asked)
	}
	reqs := api.Requests()
	if out := lastOutput(reqs[len(reqs)-1]); !strings.Contains(out, "rejected") {
		t.Errorf("the model was told %s", out)
	}
}

func TestRealPatchDiffBeforeApprovalAndGitRefused(t *testing.T) {
	api := newRespAPI(t, func(outputs int, body map[string]any) step {
		switch {
		case outputs == 0 && strings.Contains(lastUser(body), "HOOK"):
			return step{Patch: "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+echo pwned\n*** End Patch\n"}
		case outputs == 0:
			return step{Patch: "*** Begin Patch\n*** Add File: a.txt\n+line one\n+line two\n*** End Patch\n"}
		}
		return step{Text: "patched"}
	})
	rt, ws := realSetup(t, api)
	var mu sync.Mutex
	var diffs []string
	existedWhenAsked := false
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{}),
		Answer: func(ev engine.Event) engine.Answer {
			mu.Lock()
			diffs = append(diffs, ev.Diff)
			if _, err := os.Stat(filepath.Join(ws, "a.txt")); err == nil {
				existedWhenAsked = true
			}
			mu.Unlock()
			return engine.Answer{Decision: engine.DecisionAllow}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "add a file"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	mu.Lock()
	if len(diffs) != 1 || !strings.Contains(diffs[0], "+line one\n+line two\n") {
		t.Errorf("diffs the person saw: %q", diffs)
	}
	if existedWhenAsked {
		t.Error("a.txt was written before the person approved the change")
	}
	mu.Unlock()
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "line one\nline two\n" {
		t.Errorf("a.txt = %q, %v", b, err)
	}
	if fe := h.Journal.OfType(engine.EventFileEdited); len(fe) != 1 || fe[0].Path != "a.txt" {
		t.Errorf("file_edited %+v", fe)
	}
	if final := h.Run(t, ctx, "HOOK"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a write to .git/ went through")
	}
	var git []engine.Event
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		if slices.ContainsFunc(ev.Paths, func(p string) bool { return strings.Contains(p, ".git/hooks/pre-commit") }) {
			git = append(git, ev)
		}
	}
	if len(git) != 1 || git[0].Decision != engine.DecisionDeny || git[0].Stage != string(permission.StageSafety) {
		t.Errorf("kz's decisions about the .git write: %+v", git)
	}
	mu.Lock()
	if len(diffs) != 1 {
		t.Errorf("the person was asked about the .git write: %d questions", len(diffs))
	}
	mu.Unlock()
}

func TestRealCancelLongCommand(t *testing.T) {
	api := newRespAPI(t, func(outputs int, body map[string]any) step {
		if outputs == 0 && strings.Contains(lastUser(body), "LONG") {
			return step{Shell: "sleep 37.5"}
		}
		return step{Text: "ok"}
	})
	rt, ws := realSetup(t, api)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	cancelled := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && len(clitest.Procs("sleep", "37.5")) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		cancelled <- time.Now()
		cancel()
	}()
	final := h.Run(t, ctx, "LONG")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("status %q", final.Status)
	}
	at := <-cancelled
	for len(clitest.Procs("sleep", "37.5")) > 0 && time.Since(at) < time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if p := clitest.Procs("sleep", "37.5"); len(p) > 0 {
		for _, pid := range p {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the command outlived the cancel by a second: %v", p)
	} else {
		t.Logf("the command was gone %v after the cancel", time.Since(at).Round(time.Millisecond))
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer tcancel()
	if final := h.Run(t, tctx, "next"); final.Status != string(engine.StatusComplete) || final.Output != "ok" {
		t.Errorf("the next turn %+v", final)
	}
}

// The CLI killed mid-turn is a crash: without failover the turn ends
// interrupted with a retryable error event; with failover configured the
// next runtime takes the turn. The command it ran does not survive it.
func TestRealKilledMidTurnFailsOver(t *testing.T) {
	api := newRespAPI(t, func(outputs int, body map[string]any) step {
		if outputs == 0 {
			return step{Shell: "sleep 39.5"}
		}
		return step{Text: "ok"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	go clitest.KillWhenSleeping(ws, "39.5", "app-server", 60*time.Second)
	final := h.Run(t, ctx, "run it")
	if final.Status != string(engine.StatusInterrupted) || final.Runtime != "codex" {
		t.Errorf("without failover: final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrCrashed || !e[0].Retryable {
		t.Errorf("without failover: errors %+v", e)
	}
	clitest.CheckSleepGone(t, "39.5")

	rt, ws = realSetup(t, api)
	h = clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: &clitest.Other{Answer: "from other"}}},
		clitest.Options{Answer: clitest.AllowOnce, Failover: []engine.ChainLink{{Runtime: "other"}}})
	go clitest.KillWhenSleeping(ws, "39.5", "app-server", 60*time.Second)
	final = h.Run(t, ctx, "run it")
	if final.Runtime != "other" || final.Output != "from other" {
		t.Errorf("with failover: final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrCrashed || !e[0].Retryable || e[0].Runtime != "codex" {
		t.Errorf("with failover: errors %+v", e)
	}
	clitest.CheckSleepGone(t, "39.5")
}

// A mid-session switch from the scripted runtime primes a new session:
// kz's transcript reaches the CLI's first model request.
func TestRealPrimedFromOtherRuntime(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "6"} })
	rt, ws := realSetup(t, api)
	sc, err := scripted.Parse("scripted", "inline", strings.NewReader(
		`{"type":"assistant_message","text":"4 (scripted answer)"}`+"\n"+
			`{"type":"final_result","status":"complete","output":"4 (scripted answer)"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: sc}, {Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "what is 2+2?"); final.Runtime != "scripted" {
		t.Fatalf("first turn %+v", final)
	}
	if err := h.Session.SwitchRuntime("codex", ""); err != nil {
		t.Fatal(err)
	}
	if final := h.Run(t, ctx, "and 3+3?"); final.Status != string(engine.StatusComplete) || final.Runtime != "codex" {
		t.Fatalf("final %+v", final)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	b, _ := json.Marshal(reqs[0]["input"])
	if !strings.Contains(string(b), "what is 2+2?") || !strings.Contains(string(b), "4 (scripted answer)") {
		t.Errorf("the first model request lacks kz's transcript: %s", b)
	}
}

// A dead endpoint fails in seconds even when Codex itself is configured to
// retry many times: kz stops the turn after its own bound, with a
// retryable error that fails over.
func TestRealDeadEndpointFailsFast(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "never"} })
	api.down = true
	rt, ws := realSetup(t, api)
	cfgPath := filepath.Join(filepath.Dir(ws), "home", ".codex", "config.toml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// Codex's own retry settings at their defaults, as a person has them.
	b = []byte(strings.NewReplacer("request_max_retries = 0\n", "", "stream_max_retries = 0\n", "").Replace(string(b)))
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: &clitest.Other{Answer: "from other"}}},
		clitest.Options{Failover: []engine.ChainLink{{Runtime: "other"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	final := h.Run(t, ctx, "hello?")
	took := time.Since(start)
	if final.Runtime != "other" || final.Output != "from other" {
		t.Errorf("final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || !e[0].Retryable || e[0].Runtime != "codex" {
		t.Errorf("errors %+v", e)
	}
	t.Logf("failed over after %v and %d requests", took.Round(time.Millisecond), len(api.Requests()))
	if took > 30*time.Second {
		t.Errorf("a dead endpoint took %v to fail", took)
	}
}

// A graceful interrupt (stop at the next safe point) leaves the CLI
// running, so the command must be stopped by Codex itself: kz interrupts
// the turn and cleans the background terminals, the command is reported
// finished before the turn ends, and the process is gone. Codex reports it
// killed (exit -1), or sometimes not at all (0.169, about one interrupt in
// four; waiting longer does not bring it), and then the session closes it
// with the turn.
func TestRealGracefulInterruptCleansTerminals(t *testing.T) {
	api := newRespAPI(t, func(outputs int, body map[string]any) step {
		if outputs == 0 {
			return step{Shell: "sleep 36.5"}
		}
		return step{Text: "ok"}
	})
	rt, ws := realSetup(t, api)
	var once sync.Once
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce,
		OnEvent: func(h *clitest.Harness, ev engine.Event) {
			if ev.Type == engine.EventCommandStarted {
				go once.Do(func() {
					deadline := time.Now().Add(60 * time.Second)
					for time.Now().Before(deadline) && len(clitest.Procs("sleep", "36.5")) == 0 {
						time.Sleep(20 * time.Millisecond)
					}
					h.Session.Interrupt(false)
				})
			}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	final := h.Run(t, ctx, "run it")
	if final.Status != string(engine.StatusInterrupted) {
		t.Errorf("final %+v", final)
	}
	cf := h.Journal.OfType(engine.EventCommandFinished)
	switch {
	case len(cf) != 1 || !cf[0].IsError || cf[0].ToolCallID == "":
		t.Errorf("command_finished %+v", cf)
	case cf[0].ExitCode != nil:
		// -1 when Codex killed it; 137 (SIGKILL) when its sandbox's
		// process reported the kill first, which a loaded machine shows.
		if c := *cf[0].ExitCode; c != -1 && c != 137 {
			t.Errorf("Codex reported exit code %d for the killed command, want -1 or 137: %s", c, cf[0].Output)
		}
	case cf[0].Output != engine.InterruptedNotRerun:
		t.Errorf("command_finished without exit code: %+v", cf[0])
	default:
		t.Log("Codex did not report the killed command; kz closed it")
	}
	for _, tf := range h.Journal.OfType(engine.EventToolCallFinished) {
		if tf.ToolCallID == cf[0].ToolCallID && !tf.IsError {
			t.Errorf("tool_call_finished %+v", tf)
		}
	}
	if p := clitest.Procs("sleep", "36.5"); len(p) > 0 {
		for _, pid := range p {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the command outlived the interrupted turn: %v", p)
	}
}

package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tools/permission"
)

// These tests run the real Gemini CLI (`gemini --acp`) against a fake
// Gemini API on 127.0.0.1. They skip when the CLI is missing, unless
// KZ_REQUIRE_CLIS is set (CI), where they fail. The CLI is found through
// KZ_GEMINI_BIN or where install-gemini.sh puts it.

const pinnedGemini = "0.61.0"

func realGemini(t testing.TB) string {
	t.Helper()
	return clitest.RealCLI(t, clitest.Binary{Name: "gemini", EnvVar: "KZ_GEMINI_BIN", Install: "runtimes/acp/install-gemini.sh",
		Paths: []string{filepath.Join(clitest.Repo, ".cache", "gemini-cli-"+pinnedGemini, "node_modules", ".bin", "gemini")}})
}

// ---- fake Gemini API ----

// gstep is what the fake model answers: text or one function call.
type gstep struct {
	Text string
	Call string
	Args map[string]any
}

// geminiAPI is a scripted Gemini API on 127.0.0.1. Its traffic's
// credential of a model request is x-goog-api-key, Authorization and the
// key query parameter, whichever are set, joined by spaces.
type geminiAPI struct {
	clitest.Traffic[map[string]any]
	srv *httptest.Server
	// down makes every model request fail with HTTP 500 (retried by
	// Gemini CLI).
	down   bool
	script func(calls int, lastUser string) gstep
}

// newGeminiAPI starts a fake Gemini API answering with script; it stops
// when the test ends.
func newGeminiAPI(t testing.TB, script func(calls int, lastUser string) gstep) *geminiAPI {
	a := &geminiAPI{script: script}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *geminiAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.Receive(r)
	if strings.Contains(r.URL.Path, "enerateContent") {
		a.AddCredential(strings.TrimSpace(r.Header.Get("X-Goog-Api-Key") + " " + r.Header.Get("Authorization") + " " + r.URL.Query().Get("key")))
	}
	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		_, _ = fmt.Fprint(w, `{"totalTokens":10}`)
		return
	case !strings.Contains(r.URL.Path, ":streamGenerateContent") && !strings.Contains(r.URL.Path, ":generateContent"):
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.AddBody(body)
	if a.down {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprint(w, `{"error":{"code":500,"message":"the fake endpoint is down","status":"INTERNAL"}}`)
		return
	}
	// Function responses since the last user text: earlier turns of a
	// loaded session are in the history too.
	calls, last := 0, ""
	contents, _ := body["contents"].([]any)
	for _, c := range contents {
		m, _ := c.(map[string]any)
		parts, _ := m["parts"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if _, ok := pm["functionResponse"]; ok {
				calls++
			} else if txt, ok := pm["text"].(string); ok && m["role"] == "user" {
				calls, last = 0, txt
			}
		}
	}
	st := a.script(calls, last)
	var part map[string]any
	if st.Call != "" {
		part = map[string]any{"functionCall": map[string]any{"name": st.Call, "args": st.Args}}
	} else {
		part = map[string]any{"text": st.Text}
	}
	chunk := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "index": 0, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
		"modelVersion":  "gemini-2.5-flash", "responseId": "r1",
	}
	b, _ := json.Marshal(chunk)
	if strings.Contains(r.URL.Path, ":generateContent") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}

// lastFunctionResponse returns the last function response of a request.
func lastFunctionResponse(body map[string]any) string {
	contents, _ := body["contents"].([]any)
	out := ""
	for _, c := range contents {
		m, _ := c.(map[string]any)
		parts, _ := m["parts"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if fr, ok := pm["functionResponse"]; ok {
				b, _ := json.Marshal(fr)
				out = string(b)
			}
		}
	}
	return out
}

// ---- setup ----

func realSetup(t testing.TB, api *geminiAPI) (*Runtime, string) {
	return realSetupWith(t, api, []string{"GEMINI_API_KEY=dummy"})
}

// realSetupWith is realSetup with the variables (credentials) the
// runtime's configuration adds.
func realSetupWith(t testing.TB, api *geminiAPI, keyEnv []string) (*Runtime, string) {
	bin := realGemini(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	tmp := filepath.Join(dir, "tmp")
	clitest.Dirs(t, ws, filepath.Join(home, ".gemini"), tmp)
	clitest.GitInit(t, ws)
	settings := `{
  "security": { "auth": { "selectedType": "gemini-api-key" }, "folderTrust": { "enabled": false } },
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false,
               "enableAutoUpdateNotification": false },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "model": { "name": "gemini-2.5-flash" }
}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := GeminiPreset()
	cfg.Command = bin
	cfg.Workspace = ws
	cfg.KillGrace = time.Second
	cfg.Env = append(cfg.Env, "HOME="+home, "TMPDIR="+tmp, "GOOGLE_GEMINI_BASE_URL="+api.srv.URL)
	cfg.Env = append(cfg.Env, keyEnv...)
	cfg.Snapshots = &memSnapshots{}
	// Each kz session's overlay home is kept where kz keeps its state.
	cfg.HomesDir = filepath.Join(dir, "state", "gemini-homes")
	rt := New(cfg)
	t.Cleanup(func() { _ = rt.Close() })
	return rt, ws
}

// The second turn, in a new agent process, continues the conversation:
// kz asks the agent to load its own session (session/load, offered by
// Gemini CLI) from the kz session's kept overlay home, the model sees the
// first turn and the replayed history is not taken for the new answer.
//
// Gemini CLI 0.61 names a chat file by the minute it starts and the first 8
// characters of the session id, and session/load starts a new recording of
// the loaded id before reading it: within the same minute that recording
// appends to the very file being loaded, resetting its messages to the
// bare session context, and the load fails with "No previous sessions found
// for this project" (kz then primes a new session with its transcript,
// which TestRealGeminiPrimedFromOtherRuntime covers). So the second turn
// here starts in the next minute, where Gemini's own resume works.
func TestRealGeminiTextAndLoad(t *testing.T) {
	api := newGeminiAPI(t, func(_ int, last string) gstep {
		if strings.Contains(last, "again") {
			return gstep{Text: "Second answer."}
		}
		return gstep{Text: "Hello from the fake model."}
	})
	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	final := h.Run(t, ctx, "Say hello")
	if final.Status != string(engine.StatusComplete) || final.Output != "Hello from the fake model." || final.NativeID == "" {
		t.Fatalf("final %+v", final)
	}
	sid := final.NativeID
	time.Sleep(time.Until(time.Now().UTC().Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)))
	// The agent process ends, as when kz quits: the next turn starts
	// another on the session's kept home, which loads the session.
	rt.CloseSession(h.Session.ID())
	final = h.Run(t, ctx, "Say it again")
	if final.Status != string(engine.StatusComplete) || final.Output != "Second answer." {
		t.Errorf("second turn %+v", final)
	}
	if final.NativeID != sid {
		t.Errorf("the second turn ran on session %s, not on the loaded %s", final.NativeID, sid)
	}
	reqs := api.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1]["contents"])
	if !strings.Contains(string(b), "Say hello") || !strings.Contains(string(b), "Hello from the fake model.") || !strings.Contains(string(b), "Say it again") {
		t.Errorf("the second turn's model request lacks the first turn: %s", b)
	}
	if strings.Contains(string(b), "kz-conversation") {
		t.Errorf("the loaded session was primed as well: %s", b)
	}
	if n := len(h.Journal.OfType(engine.EventAssistantMessage)); n != 2 {
		t.Errorf("%d assistant messages, want 2 (the replay counted as new?)", n)
	}
}

// Quick turns of one kz session run on one Gemini process and continue
// its own session: one initialize and one session/new (every turn names
// the same session), and no turn's model request carries kz's transcript
// re-sent as a priming prompt; each earlier user message reaches the
// model once, as the agent's own history. The session's overlay home is
// kept under the state directory, the person's alone.
func TestRealGeminiOneProcessAcrossTurns(t *testing.T) {
	api := newGeminiAPI(t, func(_ int, last string) gstep {
		// The answer does not repeat the prompt, which is counted below.
		return gstep{Text: "answer to " + strings.ToUpper(strings.TrimSpace(last))}
	})
	rt, ws := realSetup(t, api)
	logs := &clitest.LogBuffer{}
	rt.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	prompts := []string{"turn-one", "turn-two", "turn-three", "turn-four"}
	pid, native := 0, ""
	for i, p := range prompts {
		start := time.Now()
		final := h.Run(t, ctx, p)
		if final.Status != string(engine.StatusComplete) || final.Output != "answer to "+strings.ToUpper(p) {
			t.Fatalf("turn %d: %+v", i+1, final)
		}
		t.Logf("turn %d took %v", i+1, time.Since(start).Round(time.Millisecond))
		got := rt.PID(h.Session.ID())
		switch {
		case got == 0:
			t.Fatalf("turn %d: no agent process kept", i+1)
		case i == 0:
			pid, native = got, final.NativeID
		case got != pid:
			t.Errorf("turn %d ran on process %d, the first on %d", i+1, got, pid)
		case final.NativeID != native:
			t.Errorf("turn %d ran on session %s, the first on %s (a second session/new)", i+1, final.NativeID, native)
		}
		reqs := api.Requests()
		b, _ := json.Marshal(reqs[len(reqs)-1]["contents"])
		if strings.Contains(string(b), "kz-conversation") {
			t.Errorf("turn %d was primed with kz's transcript: %s", i+1, b)
		}
		for _, earlier := range prompts[:i+1] {
			if n := strings.Count(string(b), earlier); n != 1 {
				t.Errorf("turn %d: %q appears %d times in the model request, want once: %s", i+1, earlier, n, b)
			}
		}
	}
	for _, ev := range h.Journal.OfType(engine.EventSessionStarted) {
		if ev.NativeID != native {
			t.Errorf("session_started of another session: %+v", ev)
		}
	}
	if n := strings.Count(logs.String(), "acp: opened a session"); n != 1 {
		t.Errorf("kz opened %d sessions (session/new or session/load), want 1:\n%s", n, logs.String())
	}
	// Gemini records each session in a chat file of its own (named by
	// the session's id; it also records an empty one when it starts): the
	// prompts are all in one, kz's.
	chats, _ := filepath.Glob(filepath.Join(filepath.Dir(ws), "home", ".gemini", "tmp", "*", "chats", "*"))
	var prompted []string
	for _, c := range chats {
		if b, _ := os.ReadFile(c); strings.Contains(string(b), "turn-one") {
			prompted = append(prompted, filepath.Base(c))
		}
	}
	if len(prompted) != 1 || !strings.Contains(prompted[0], native[:8]) {
		t.Errorf("the chat files with the prompts: %v, want one, of session %s", prompted, native)
	}
	home := homeDir(rt.cfg.HomesDir, h.Session.ID())
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the session's overlay home %s: %v %v", home, fi, err)
	}
	start := time.Now()
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("closing the agent took %v", time.Since(start).Round(time.Millisecond))
	if !clitest.ProcessGone(pid) {
		t.Errorf("the agent %d outlived the runtime's Close", pid)
	}
	if _, err := os.Stat(home); err != nil {
		t.Errorf("the overlay home was not kept for a later kz: %v", err)
	}
}

// A command the person allows runs; one a deny rule refuses never runs,
// the person is not asked and the model is told.
func TestRealGeminiShellApprovedAndDenied(t *testing.T) {
	api := newGeminiAPI(t, func(calls int, last string) gstep {
		switch {
		case calls == 0 && strings.Contains(last, "DENYME"):
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": "touch denied.txt", "description": "d"}}
		case calls == 0:
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": "echo hi > approved.txt", "description": "d"}}
		}
		return gstep{Text: "done"}
	})
	rt, ws := realSetup(t, api)
	person := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{Deny: []string{"Bash(touch:*)"}}),
		Answer: person.Answer})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "make a file"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "approved.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("approved.txt = %q, %v", b, err)
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
	if dec := h.Journal.Decided("touch denied.txt"); len(dec) != 1 || dec[0].Decision != engine.DecisionDeny || dec[0].Stage != string(permission.StageDenyRule) {
		t.Errorf("kz's decisions about the denied command: %+v", dec)
	}
	if asked := person.Commands(); len(asked) != 1 {
		t.Errorf("the person was asked about a command a rule denies: %q", asked)
	}
	reqs := api.Requests()
	if out := lastFunctionResponse(reqs[len(reqs)-1]); !strings.Contains(out, "cancel") {
		t.Errorf("the model was told %s", out)
	}
}

func TestRealGeminiWriteThroughKzAndGitRefused(t *testing.T) {
	api := newGeminiAPI(t, func(calls int, last string) gstep {
		switch {
		case calls == 0 && strings.Contains(last, "HOOK"):
			// Gemini's own write_file refuses paths in .git ("Path not in
			// workspace") before asking, so the shell is the route that
			// reaches kz's safety check.
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": "echo pwned > .git/hooks/pre-commit", "description": "d"}}
		case calls == 0:
			return gstep{Call: "write_file", Args: map[string]any{"file_path": "new.txt", "content": "line one\nline two\n"}}
		}
		return gstep{Text: "written"}
	})
	rt, ws := realSetup(t, api)
	var mu sync.Mutex
	var diffs []string
	existedWhenAsked := false
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{}),
		Answer: func(ev engine.Event) engine.Answer {
			mu.Lock()
			diffs = append(diffs, ev.Diff)
			if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
				existedWhenAsked = true
			}
			mu.Unlock()
			return engine.Answer{Decision: engine.DecisionAllow}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "write a new file"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	mu.Lock()
	if len(diffs) != 1 || !strings.Contains(diffs[0], "+line one\n+line two\n") {
		t.Errorf("the person saw %d questions, diffs %q (want one, with the diff)", len(diffs), diffs)
	}
	if existedWhenAsked {
		t.Error("new.txt was written before the person approved it")
	}
	mu.Unlock()
	// kz wrote the new file itself (fs/write_text_file) after a snapshot,
	// so the write can be undone.
	if sn := rt.cfg.Snapshots.(*memSnapshots).all(); len(sn) != 1 || sn[0].Path != "new.txt" || sn[0].Existed {
		t.Errorf("snapshots %+v", sn)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "line one\nline two\n" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	if fe := h.Journal.OfType(engine.EventFileEdited); len(fe) != 1 || fe[0].Path != "new.txt" {
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
		if strings.Contains(ev.Command, ".git/hooks/pre-commit") {
			git = append(git, ev)
		}
	}
	if len(git) == 0 || git[0].Decision != engine.DecisionDeny || git[0].Stage != string(permission.StageSafety) {
		reqs := api.Requests()
		t.Errorf("kz's decisions about the .git write: %+v; the model was told %s", git, lastFunctionResponse(reqs[len(reqs)-1]))
	}
	mu.Lock()
	if len(diffs) != 1 {
		t.Errorf("the person was asked about the .git write: %d questions", len(diffs))
	}
	mu.Unlock()
}

func TestRealGeminiCancelLongCommand(t *testing.T) {
	api := newGeminiAPI(t, func(calls int, last string) gstep {
		if calls == 0 && strings.HasSuffix(strings.TrimSpace(last), "LONG") {
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": "sleep 38.5", "description": "d"}}
		}
		return gstep{Text: "ok"}
	})
	rt, ws := realSetup(t, api)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	cancelled := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) && len(clitest.Procs("sleep", "38.5")) == 0 {
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
	for len(clitest.Procs("sleep", "38.5")) > 0 && time.Since(at) < time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if p := clitest.Procs("sleep", "38.5"); len(p) > 0 {
		for _, pid := range p {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the command outlived the cancel by a second: %v", p)
	} else {
		t.Logf("the command was gone %v after the cancel", time.Since(at).Round(time.Millisecond))
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer tcancel()
	start := time.Now()
	if final := h.Run(t, tctx, "next"); final.Status != string(engine.StatusComplete) || final.Output != "ok" {
		t.Errorf("the next turn %+v", final)
	}
	t.Logf("next turn took %v", time.Since(start))
}

// The CLI killed mid-turn is a crash: without failover the turn ends
// interrupted with a retryable error event; with failover configured the
// next runtime takes the turn. The command it ran does not survive it
// (Gemini starts shells in their own session, outside its group).
func TestRealGeminiKilledMidTurnFailsOver(t *testing.T) {
	api := newGeminiAPI(t, func(calls int, last string) gstep {
		if calls == 0 {
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": "sleep 39.5", "description": "d"}}
		}
		return gstep{Text: "ok"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()

	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: clitest.AllowOnce})
	go clitest.KillWhenSleeping(ws, "39.5", "--acp", 90*time.Second)
	final := h.Run(t, ctx, "run it")
	if final.Status != string(engine.StatusInterrupted) || final.Runtime != "gemini" {
		t.Errorf("without failover: final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrCrashed || !e[0].Retryable {
		t.Errorf("without failover: errors %+v", e)
	}
	clitest.CheckSleepGone(t, "39.5")

	rt, ws = realSetup(t, api)
	h = clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: &clitest.Other{Answer: "from other"}}},
		clitest.Options{Answer: clitest.AllowOnce, Failover: []engine.ChainLink{{Runtime: "other"}}})
	go clitest.KillWhenSleeping(ws, "39.5", "--acp", 90*time.Second)
	final = h.Run(t, ctx, "run it")
	if final.Runtime != "other" || final.Output != "from other" {
		t.Errorf("with failover: final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrCrashed || !e[0].Retryable || e[0].Runtime != "gemini" {
		t.Errorf("with failover: errors %+v", e)
	}
	clitest.CheckSleepGone(t, "39.5")
}

// A mid-session switch from the scripted runtime primes a new session:
// kz's transcript reaches the CLI's first model request.
func TestRealGeminiPrimedFromOtherRuntime(t *testing.T) {
	api := newGeminiAPI(t, func(int, string) gstep { return gstep{Text: "6"} })
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
	if err := h.Session.SwitchRuntime("gemini", ""); err != nil {
		t.Fatal(err)
	}
	if final := h.Run(t, ctx, "and 3+3?"); final.Status != string(engine.StatusComplete) || final.Runtime != "gemini" {
		t.Fatalf("final %+v", final)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	b, _ := json.Marshal(reqs[0]["contents"])
	if !strings.Contains(string(b), "what is 2+2?") || !strings.Contains(string(b), "4 (scripted answer)") {
		t.Errorf("the first model request lacks kz's transcript: %s", b)
	}
}

// A failing endpoint becomes a retryable error that fails over in seconds.
// Gemini CLI retries a 5xx up to 10 times, 5-30 s apart, by default, and
// over ACP kz cannot see those retries; kz bounds them itself
// (Config.MaxAttempts, 2 in the preset) through an overlay Gemini home, so
// the user's settings here say nothing about retries, stay unchanged, and
// the overlay is gone after the turn.
func TestRealGeminiDeadEndpointFailsOver(t *testing.T) {
	api := newGeminiAPI(t, func(int, string) gstep { return gstep{Text: "never"} })
	api.down = true
	rt, ws := realSetup(t, api)
	if rt.cfg.MaxAttempts != 2 {
		t.Fatalf("the gemini preset bounds attempts to %d, want 2", rt.cfg.MaxAttempts)
	}
	userSettings := filepath.Join(filepath.Dir(ws), "home", ".gemini", "settings.json")
	before, err := os.ReadFile(userSettings)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(before), "maxAttempts") {
		t.Fatal("the user's settings must not bound the retries in this test")
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}, {Runtime: &clitest.Other{Answer: "from other"}}},
		clitest.Options{Failover: []engine.ChainLink{{Runtime: "other"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	final := h.Run(t, ctx, "hello?")
	took := time.Since(start)
	if final.Runtime != "other" || final.Output != "from other" {
		t.Errorf("final %+v", final)
	}
	if e := h.Journal.OfType(engine.EventError); len(e) != 1 || e[0].ErrorKind != engine.ErrOverloaded || !e[0].Retryable || e[0].Runtime != "gemini" {
		t.Errorf("errors %+v", e)
	}
	n := len(api.Requests())
	t.Logf("failed over after %v and %d model requests", took.Round(time.Millisecond), n)
	if n != rt.cfg.MaxAttempts {
		t.Errorf("the dead endpoint got %d requests, want exactly %d (kz's bound)", n, rt.cfg.MaxAttempts)
	}
	if took > 60*time.Second {
		t.Errorf("a dead endpoint took %v to fail", took)
	}
	if after, err := os.ReadFile(userSettings); err != nil || string(after) != string(before) {
		t.Errorf("the user's settings changed: %s, %v", after, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(ws), "tmp", "kz-gemini-home-*")); len(left) > 0 {
		t.Errorf("temporary overlay homes made besides the session's kept one: %v", left)
	}
}

package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/runtimes/codex/codextest"
)

// The per-runtime end-to-end scenario: the real kz binary in tmux at
// 120×40, driving one runtime against a fake model server on 127.0.0.1
// that plays the same logical script on every wire protocol
// (e2e_fakeapi_test.go). Every runtime must show the same cards in the
// same order with the same states, and a resumed session must show the
// screen the live one showed. The runtimes and their setups are in
// e2eRuntimes; the steps, shared by all, in scenarioSteps.

// TestE2EScenarioNative runs the scenario on kz's own agent loop over the
// fake Anthropic Messages API.
func TestE2EScenarioNative(t *testing.T) { runScenario(t, nativeRuntime) }

// TestE2EScenarioClaude runs the scenario on the real Claude Code CLI
// over the fake Anthropic Messages API.
func TestE2EScenarioClaude(t *testing.T) { runScenario(t, claudeRuntime) }

// TestE2EScenarioCodex runs the scenario on the real Codex app-server
// over the fake OpenAI Responses API.
func TestE2EScenarioCodex(t *testing.T) { runScenario(t, codexRuntime) }

// TestE2EScenarioGemini runs the scenario on the real Gemini CLI (ACP)
// over the fake Gemini API.
func TestE2EScenarioGemini(t *testing.T) { runScenario(t, geminiRuntime) }

// e2eRuntime is one runtime of the scenario.
type e2eRuntime struct {
	// name is the runtime's name in kz's config.
	name string
	// wholeFile says the runtime's protocol cannot carry a partial write
	// (Codex's): its review must not offer hunk rejection, and the write
	// is accepted whole.
	wholeFile bool
	// outsideTmp puts the run's directories under the user's cache
	// directory: Codex refuses to make its helper links under a
	// CODEX_HOME in the temp dir.
	outsideTmp bool
	// setup starts the runtime's fake model server for the workspace ws
	// and returns the runtime's [runtimes.NAME] section and the variables
	// kz starts with.
	setup func(t *testing.T, ws, home string) (section string, env []string)
}

// nativeRuntime is kz's own loop over the fake Anthropic API.
var nativeRuntime = e2eRuntime{name: "native", setup: func(t *testing.T, ws, _ string) (string, []string) {
	api := newAnthropicFake(t, ws)
	return fmt.Sprintf("kind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_E2E_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", api.srv.URL),
		[]string{"KZ_E2E_KEY=sk-e2e-test"}
}}

// claudeRuntime is the real Claude Code CLI over the fake Anthropic API;
// kz's credential proxy forwards to ANTHROPIC_BASE_URL.
var claudeRuntime = e2eRuntime{name: "claude", setup: func(t *testing.T, ws, _ string) (string, []string) {
	bin := e2eCLI(t, "KZ_CLAUDE_BIN", "claude", "runtimes/claudecode/install-cli.sh")
	api := newAnthropicFake(t, ws)
	return fmt.Sprintf("kind = \"claude-code\"\ncommand = %q\n", bin),
		// Tests talk only to 127.0.0.1: Claude Code's own traffic
		// (telemetry, error reports, update checks, feature flags) is
		// turned off, as the runtime's integration tests do, so that an
		// unreachable host can never hold a turn's end.
		[]string{"ANTHROPIC_API_KEY=sk-e2e-test", "ANTHROPIC_BASE_URL=" + api.srv.URL,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1"}
}}

// codexRuntime is the real Codex app-server over the fake Responses API,
// configured offline as its integration tests do (protocol notes §3): a
// provider of its own that points at the fake, and a model catalog made
// from the bundled one.
var codexRuntime = e2eRuntime{name: "codex", wholeFile: true, outsideTmp: true, setup: func(t *testing.T, ws, home string) (string, []string) {
	bin := e2eCLI(t, "KZ_CODEX_BIN", "codex", "runtimes/codex/install-cli.sh")
	api := newResponsesFake(t)
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "debug", "models", "--bundled")
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("codex debug models: %v", err)
	}
	var cat struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal(out, &cat); err != nil || len(cat.Models) == 0 {
		t.Fatalf("bundled model catalog: %v", err)
	}
	entry := cat.Models[0]
	entry["slug"], entry["display_name"] = "fake-model", "fake-model"
	catalog := filepath.Join(codexHome, "catalog.json")
	b, err := json.Marshal(map[string]any{"models": []any{entry}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(catalog, b, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false
model_catalog_json = %q

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
env_key = "FAKE_OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
%s
[projects.%q]
trust_level = "trusted"
`, catalog, api.srv.URL, codextest.Offline, ws)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("kind = \"codex\"\ncommand = %q\nmodels = [\"fake-model\"]\nenv = { CODEX_HOME = %q, FAKE_OPENAI_API_KEY = \"dummy\" }\n", bin, codexHome), nil
}}

// geminiRuntime is the real Gemini CLI over the fake Gemini API, with
// API-key auth and no telemetry or update checks in its settings; kz's
// credential proxy forwards to GOOGLE_GEMINI_BASE_URL.
var geminiRuntime = e2eRuntime{name: "gemini", setup: func(t *testing.T, _, home string) (string, []string) {
	bin := e2eCLI(t, "KZ_GEMINI_BIN", "gemini", "runtimes/acp/install-gemini.sh")
	api := newGeminiFake(t)
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
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
	return fmt.Sprintf("kind = \"acp\"\ncommand = %q\n", bin),
		[]string{"GEMINI_API_KEY=e2e-test-key", "GOOGLE_GEMINI_BASE_URL=" + api.srv.URL}
}}

// e2eCLI is the path of a real CLI from its variable (as make e2e sets
// it), or a skip; with KZ_REQUIRE_CLIS set a missing CLI fails instead.
func e2eCLI(t *testing.T, envVar, name, install string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", envVar, p, err)
		}
		return p
	}
	msg := fmt.Sprintf("the %s CLI is not given: set %s (sh %s prints its path)", name, envVar, install)
	if os.Getenv("KZ_REQUIRE_CLIS") != "" {
		t.Fatal(msg + "; KZ_REQUIRE_CLIS is set, so this fails instead of skipping")
	}
	t.Skip(msg)
	return ""
}

// otherAnswer is what the runtime switched to answers.
const otherAnswer = "Hello from the other runtime."

// scenarioRun is one run of the scenario: the pane, the workspace and the
// cards each step showed.
type scenarioRun struct {
	t     *testing.T
	p     *pane
	ws    string
	rt    e2eRuntime
	cards []screenCard
}

// scenarioStep is one step of the shared scenario: it drives the pane and
// returns the cards the step must have added, normalised.
type scenarioStep struct {
	name string
	run  func(s *scenarioRun)
}

// scenarioSteps is the scenario every runtime plays, in order.
var scenarioSteps = []scenarioStep{
	{"text", stepText},
	{"shell allow", stepAllow},
	{"shell deny", stepDeny},
	{"edit review", stepEdit},
	{"interrupt", stepInterrupt},
	{"switch", stepSwitch},
}

// wantCards is the normalised card list of the whole scenario, the same
// on every runtime: one card per call, in order.
var wantCards = []string{
	"Bash echo one >> log.txt: ok",
	"Bash echo two >> log.txt: denied",
	"write notes.txt: ok",
	"Bash sleep 30: interrupted",
}

func runScenario(t *testing.T, rt e2eRuntime) {
	if os.Getenv("KZ_E2E") != "1" {
		t.Skip("end-to-end test: set KZ_E2E=1 (make e2e) to run kz in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("KZ_E2E=1 but tmux is not installed")
	}
	tmp := t.TempDir()
	if rt.outsideTmp {
		tmp = cacheScratch(t)
	}
	bin := e2eBinary(t, tmp)
	home, ws, data := filepath.Join(tmp, "home"), filepath.Join(tmp, "ws"), filepath.Join(tmp, "data")
	config := filepath.Join(tmp, "config")
	for _, d := range []string{home, ws, data, filepath.Join(config, "kz")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(notesBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	section, env := rt.setup(t, ws, home)
	other := `{"type":"text_delta","text":"` + otherAnswer + `"}` + "\n" + `{"type":"assistant_message","text":"` + otherAnswer + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(config, "kz", "other.jsonl"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("default_runtime = %q\ndefault_mode = \"full-autonomous\"\npermission_mode = \"ask\"\n\n[runtimes.%s]\n%s\n[runtimes.other]\nkind = \"scripted\"\nscript = \"other.jsonl\"\n",
		rt.name, rt.name, section)
	if err := os.WriteFile(filepath.Join(config, "kz", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+config, "XDG_DATA_HOME="+data,
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "TERM=xterm-256color", "KZ_LOG=debug")
	start := func(p *pane, flags string) {
		p.tmux("new-session", "-d", "-s", p.name, "-x", "120", "-y", "40", fmt.Sprintf(
			"cd %q && env %s %q --data-dir %q %s; echo KZ-EXITED-$?; sleep 60", ws, shellQuote(env), bin, data, flags))
	}
	p := &pane{t: t, socket: fmt.Sprintf("kz-e2e-%s-%d", rt.name, os.Getpid()), name: "kz", timeout: 90 * time.Second,
		log: filepath.Join(tmp, "state", "kz", "kz.log")}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	start(p, "")
	p.waitFor("the status bar", rt.name)

	s := &scenarioRun{t: t, p: p, ws: ws, rt: rt}
	for _, st := range scenarioSteps {
		t.Logf("step %s", st.name)
		st.run(s)
	}
	var got []string
	for _, c := range s.cards {
		got = append(got, c.normal())
	}
	if !slices.Equal(got, wantCards) {
		t.Errorf("cards of the scenario:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCards, "\n"))
	}

	// Quit, then resume: the screen must be the live one.
	live := p.screen()
	p.keys("C-c")
	p.waitFor("kz to exit", "KZ-EXITED-0")
	sessions := sessionsOf(t, data)
	if len(sessions) != 1 {
		t.Fatalf("sessions = %+v; want one", sessions)
	}
	q := &pane{t: t, socket: p.socket, name: "resumed", timeout: p.timeout, log: p.log}
	start(q, "--resume "+sessions[0].ID)
	q.waitFor("the resumed transcript", otherAnswer)
	// The first frames can come before kz knows the window's size; the
	// screen is compared once it has had the time to settle.
	want := normalScreen(live)
	deadline := time.Now().Add(20 * time.Second)
	resumed := normalScreen(q.screen())
	for resumed != want && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		resumed = normalScreen(q.screen())
	}
	if resumed != want {
		t.Errorf("the resumed screen differs from the live one:\nlive:\n%s\nresumed:\n%s", want, resumed)
	}
	q.keys("C-c")
	q.waitFor("kz to exit", "KZ-EXITED-0")
}

// stepText: a text answer, no card.
func stepText(s *scenarioRun) {
	s.prompt(promptText)
	s.p.waitFor("the text answer", answerText)
	s.idle()
	s.expectCards(promptText)
}

// stepAllow: a shell call the person allows; it runs, log.txt gets its
// line.
func stepAllow(s *scenarioRun) {
	s.prompt(promptAllow)
	s.p.waitFor("the permission dialog", "Permission needed")
	s.p.waitFor("the command in the dialog", "echo one >> log.txt")
	time.Sleep(500 * time.Millisecond) // answer keys right away are ignored
	s.p.send("y")
	s.p.waitFor("the answer after allow", answerAllow)
	s.idle()
	s.expectCards(promptAllow, "Bash echo one >> log.txt: ok")
	s.checkFile("log.txt", "one\n")
}

// stepDeny: the same kind of call, denied: no ✓, nothing run.
func stepDeny(s *scenarioRun) {
	s.prompt(promptDeny)
	s.p.waitFor("the permission dialog", "Permission needed")
	s.p.waitFor("the command in the dialog", "echo two >> log.txt")
	time.Sleep(500 * time.Millisecond)
	s.p.send("n")
	s.p.waitFor("the answer after deny", answerDeny)
	s.idle()
	s.expectCards(promptDeny, "Bash echo two >> log.txt: denied")
	s.checkFile("log.txt", "one\n")
}

// stepEdit: a write of two hunks opens the review before anything is
// written; the person rejects the second hunk and allows the rest. Where
// the review offers no hunk rejection the test says so, allows the whole
// write and goes on, so that the later steps are still checked.
func stepEdit(s *scenarioRun) {
	s.prompt(promptEdit)
	s.p.waitFor("the review", "Permission needed")
	s.p.waitFor("the diff in the review", "+line two")
	s.checkFile("notes.txt", notesBefore) // the review comes before the write
	time.Sleep(500 * time.Millisecond)
	if !strings.Contains(s.p.screen(), "· hunk ") {
		s.t.Errorf("the write opened the plain permission dialog, not the review; screen:\n%s", s.p.screen())
		s.p.send("y")
		s.p.waitFor("the answer after the dialog", answerEdit)
		s.idle()
		s.expectCards(promptEdit, "write notes.txt: ok")
		s.checkFile("notes.txt", notesProposed)
		return
	}
	s.toHunk(2)
	want := notesAccepted
	switch sc := s.p.screen(); {
	case s.rt.wholeFile:
		// The protocol cannot carry a partial write: the review offers no
		// hunk mark, refuses one with the reason, and is accepted whole.
		if strings.Contains(sc, "x accept/reject hunk") {
			s.t.Errorf("the review offers hunk rejection for a runtime that can only take the whole file; screen:\n%s", sc)
		}
		s.p.send("x")
		s.p.waitFor("the whole-file refusal", "applies the whole file")
		s.p.pause()
		want = notesProposed
	case !strings.Contains(sc, "x accept/reject hunk"):
		s.t.Errorf("the review of the write offers no hunk rejection; screen:\n%s", sc)
		want = notesProposed
	default:
		s.p.send("x")
		s.p.waitFor("the rejected hunk", "✗ hunk rejected")
		s.p.pause()
	}
	s.p.send("y")
	s.p.waitFor("the answer after the review", answerEdit)
	s.idle()
	s.expectCards(promptEdit, "write notes.txt: ok")
	s.checkFile("notes.txt", want)
}

// stepInterrupt: a long command, allowed if asked, stopped with esc: its
// card says interrupted, and the turn too.
func stepInterrupt(s *scenarioRun) {
	s.prompt(promptSleep)
	s.p.wait("the long command", func(sc string) bool {
		return strings.Contains(sc, "Permission needed") || runningCard(sc, "sleep 30")
	})
	if strings.Contains(s.p.screen(), "Permission needed") {
		time.Sleep(500 * time.Millisecond)
		s.p.send("y")
	}
	s.p.wait("the running command", func(sc string) bool { return runningCard(sc, "sleep 30") })
	s.p.keys("Escape")
	s.p.waitFor("the interrupted turn", "turn ended: interrupted")
	s.idle()
	s.expectCards(promptSleep, "Bash sleep 30: interrupted")
}

// stepSwitch: the runtime picker's keybinding switches to the other
// runtime, which answers a text turn.
func stepSwitch(s *scenarioRun) {
	s.p.keys("C-r")
	s.p.waitFor("the runtime picker", "Switch runtime")
	sc := strings.Split(s.p.screen(), "\n")
	cur, to := -1, -1
	for i, l := range sc {
		l = strings.Trim(l, "│ ")
		switch {
		case strings.HasPrefix(l, "● "+s.rt.name+" "):
			cur = i
		case strings.HasPrefix(l, "other "):
			to = i
		}
	}
	if cur < 0 || to < 0 {
		s.t.Fatalf("the picker lacks %s or other:\n%s", s.rt.name, strings.Join(sc, "\n"))
	}
	for ; cur < to; cur++ {
		s.p.keys("Down")
	}
	for ; cur > to; cur-- {
		s.p.keys("Up")
	}
	s.p.keys("Enter")
	s.p.waitFor("the runtime divider", "→ other")
	s.prompt("and now you")
	s.p.waitFor("the other runtime's answer", otherAnswer)
	s.idle()
	s.expectCards("and now you")
}

// toHunk moves the review to hunk n of 2 with ]: how many presses that
// takes depends on where a fresh review starts, so it presses until the
// status line names the hunk.
func (s *scenarioRun) toHunk(n int) {
	s.t.Helper()
	target := fmt.Sprintf("hunk %d/2", n)
	for range 4 {
		if strings.Contains(s.p.screen(), target) {
			return
		}
		s.p.send("]")
		s.p.pause()
	}
	s.p.waitFor("the review at "+target, target)
}

// prompt types a prompt and sends it.
func (s *scenarioRun) prompt(text string) {
	s.p.send(text)
	s.p.keys("Enter")
	s.p.waitFor("the prompt in the transcript", "› "+text)
}

// idle waits for the end of the turn.
func (s *scenarioRun) idle() {
	s.p.waitGone("the end of the turn", "running")
}

// expectCards checks that the cards shown under the prompt are exactly
// want, in order, and adds them to the run's list.
func (s *scenarioRun) expectCards(prompt string, want ...string) {
	s.t.Helper()
	sc := s.p.screen()
	got := cardsAfter(sc, prompt)
	var norm []string
	for _, c := range got {
		if c.kind() == "read" {
			// Claude Code reads a file before it may write it; no other
			// runtime needs to, so reads are left out of the comparison.
			continue
		}
		norm = append(norm, c.normal())
		s.cards = append(s.cards, c)
	}
	if !slices.Equal(norm, want) {
		s.t.Errorf("cards after %q: %q, want %q; screen:\n%s", prompt, norm, want, sc)
	}
}

// checkFile checks a workspace file's exact content.
func (s *scenarioRun) checkFile(name, want string) {
	s.t.Helper()
	got, err := os.ReadFile(filepath.Join(s.ws, name))
	if err != nil || string(got) != want {
		s.t.Errorf("%s is %q (%v), want %q; screen:\n%s", name, got, err, want, s.p.screen())
	}
}

// screenCard is a card header as the screen shows it.
type screenCard struct {
	icon, verb, arg string
	// denied says the card's gutter shows a denial: a ✗ is a denial
	// then, and a failure otherwise.
	denied bool
}

// cardHeader matches a card's first line: the status icon (a spinner
// frame while it runs), the verb, what it works on, and maybe its meta
// (duration, exit code, diff stat) after two spaces or more.
var cardHeader = regexp.MustCompile(`^(\S) (Bash|Read|Write|Edit|Patch|Delete|Move) (.*?)(?:\s{2,}\S.*)?$`)

// cardsAfter lists the cards on screen below the last line of prompt.
func cardsAfter(screen, prompt string) []screenCard {
	lines := strings.Split(screen, "\n")
	from := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "› "+prompt) {
			from = i
		}
	}
	var out []screenCard
	if from < 0 {
		return nil
	}
	for _, l := range lines[from+1:] {
		l = strings.TrimRight(l, " ")
		if m := cardHeader.FindStringSubmatch(l); m != nil {
			out = append(out, screenCard{icon: m[1], verb: m[2], arg: strings.TrimSpace(m[3])})
			continue
		}
		// The card's permission answer is the first line of its gutter.
		if n := len(out); n > 0 && strings.HasPrefix(l, "│ ✗ denied") {
			out[n-1].denied = true
		}
	}
	return out
}

// kind is the card's kind of call: the shell, a read, or a write (Write,
// Edit and Patch are the same kind: Codex's file changes are patches).
func (c screenCard) kind() string {
	switch c.verb {
	case "Bash":
		return "Bash"
	case "Read":
		return "read"
	}
	return "write"
}

// state is the card's state from its icon.
func (c screenCard) state() string {
	switch c.icon {
	case "✓":
		return "ok"
	case "✗":
		if c.denied {
			return "denied"
		}
		return "failed"
	case "⊘":
		return "interrupted"
	case "•":
		return "done"
	}
	return "running"
}

// normal is the card as the runtimes must agree on it.
func (c screenCard) normal() string {
	arg := c.arg
	if c.kind() == "write" {
		arg = filepath.Base(arg)
	}
	return fmt.Sprintf("%s %s: %s", c.kind(), arg, c.state())
}

// runningCard says whether the screen shows the card of command running.
func runningCard(screen, command string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if m := cardHeader.FindStringSubmatch(strings.TrimRight(l, " ")); m != nil && m[2] == "Bash" && strings.HasPrefix(m[3], command) {
			if (screenCard{icon: m[1]}).state() == "running" {
				return true
			}
		}
	}
	return false
}

// statusClock matches what the status bar shows that changes with time
// alone: durations and clock times.
var statusClock = regexp.MustCompile(`\d+(\.\d+)?(ms|s|m|h)\b|\d{1,2}:\d{2}(:\d{2})?`)

// normalScreen is a screen with the trailing blanks of its lines dropped
// and the status bar's time-dependent figures masked: a resumed session
// starts a new clock, which is the only thing allowed to differ.
func normalScreen(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	if n := len(lines); n > 0 {
		lines[n-1] = statusClock.ReplaceAllString(lines[n-1], "<t>")
	}
	return strings.Join(lines, "\n")
}

// cacheScratch is a scratch directory under the user's cache directory,
// removed when the test ends.
func cacheScratch(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	base = filepath.Join(base, "kz", "test")
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// shellQuote quotes each variable assignment for sh.
func shellQuote(env []string) string {
	q := make([]string, len(env))
	for i, e := range env {
		q[i] = "'" + strings.ReplaceAll(e, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

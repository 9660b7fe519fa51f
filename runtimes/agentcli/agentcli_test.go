package agentcli

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
)

func TestRenderHistoryBounded(t *testing.T) {
	var h []engine.TranscriptEntry
	for i := 0; i < 200; i++ {
		h = append(h, engine.TranscriptEntry{Kind: engine.EntryUser, Text: strings.Repeat("x", 1000)})
	}
	out := RenderHistory(h, 10_000)
	if len(out) > 10_100 || !strings.HasPrefix(out, "[") || !strings.Contains(out, "earlier entries omitted") {
		t.Errorf("rendered %d bytes: %.80q", len(out), out)
	}
	if PrimePrompt(nil, "p", 100) != "p" {
		t.Error("an empty history must leave the prompt alone")
	}
}

// Every agent CLI gets the base variables and Pass, what it adds itself,
// and its configured entries; no other secret-looking name.
func TestEnv(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy:3128")
	t.Setenv("XDG_CONFIG_HOME", "/x")
	t.Setenv("KZ_TEST_OWN_HOME", "/own")
	t.Setenv("KZ_TEST_API_KEY", "sk")
	t.Setenv("KZ_TEST_OTHER_TOKEN", "tok")
	env := Env(childenv.Spec{Pass: []string{"KZ_TEST_OWN_HOME"}}, []string{"KZ_TEST_API_KEY", "SET=1"})
	for _, want := range []string{"HTTPS_PROXY=http://proxy:3128", "XDG_CONFIG_HOME=/x", "KZ_TEST_OWN_HOME=/own", "KZ_TEST_API_KEY=sk", "SET=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("%s missing from %q", want, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "KZ_TEST_OTHER_TOKEN=") {
			t.Errorf("a secret passed: %s", kv)
		}
	}
	if len(Pass) == 0 || slices.ContainsFunc(Pass, childenv.Secret) {
		t.Errorf("Pass = %q", Pass)
	}
}

// A notice reaches a primed agent CLI as a note, and what the model was
// told because of it (a Stop hook's feedback) as the user-side line it
// was, so the agent knows why the earlier reply went on.
func TestRenderHistoryCarriesNotices(t *testing.T) {
	h := []engine.TranscriptEntry{
		{Kind: engine.EntryUser, Text: "fix it"},
		{Kind: engine.EntryAssistant, Text: "All done."},
		{Kind: engine.EntryNotice, Status: engine.StageHook, Text: "the Stop hook `check` blocked the end of the turn", Output: "Stop hook feedback: run the tests first"},
		{Kind: engine.EntryAssistant, Text: "Tests pass."},
		{Kind: engine.EntryNotice, Status: engine.StageHook, Text: "PostToolUse hooks said: formatted"},
	}
	out := RenderHistory(h, 10_000)
	for _, want := range []string{"[note hook] the Stop hook `check` blocked", "[user, from the hook] Stop hook feedback: run the tests first", "[note hook] PostToolUse hooks said: formatted"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "All done.") > strings.Index(out, "run the tests first") || strings.Index(out, "run the tests first") > strings.Index(out, "Tests pass.") {
		t.Errorf("the feedback is out of place:\n%s", out)
	}
}

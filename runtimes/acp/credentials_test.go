package acp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/runtimes/credproxy"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// realKey is the provider key of these tests: distinctive, so that a
// leak anywhere is found by a plain substring search.
const realKey = "AIza-REALKEY-kz15-gemini-must-never-leak-4242"

// leakProbes are commands an agent's shell could use to find the key;
// each is run through Gemini's run_shell_command after kz approves it.
var leakProbes = []struct{ name, cmd string }{
	{"printenv", "printenv"},
	{"env", "env"},
	{"own environ", `cat /proc/$$/environ | tr '\0' '\n'`},
	// Gemini refuses command substitution, so the parent is read with read.
	{"every ancestor's environ", `p=$$; while [ "$p" -gt 1 ]; do echo "== $p"; tr '\0' '\n' < /proc/$p/environ; read -r _ _ _ p _ < /proc/$p/stat; done 2>&1`},
	{"the CLI's home", `ls -laR ~/.gemini "$GEMINI_CLI_HOME" 2>&1 | head -c 20000; cat ~/.gemini/*.json 2>&1 | head -c 20000`},
}

// TestRealGeminiKeyNeverReachesTools is the class "children never see
// credentials" for Gemini CLI: with the key in GEMINI_API_KEY (sent as
// x-goog-api-key), with Gemini told to send it as a bearer token, and with
// both Gemini keys set, the fake model runs every leak probe and kz
// approves each. No key is in any function response or anything else the
// API receives but the credential the proxy sets, in kz's events, or in
// any file of the CLI; the CLI holds placeholders, and the turn completes
// through the proxy.
func TestRealGeminiKeyNeverReachesTools(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      []string
		wantCred string
	}{
		{"x-goog-api-key", []string{"GEMINI_API_KEY=" + realKey}, realKey},
		// Gemini then sends the key both ways; each gets the real key.
		{"bearer mechanism", []string{"GEMINI_API_KEY=" + realKey, "GEMINI_API_KEY_AUTH_MECHANISM=bearer"}, realKey + " Bearer " + realKey},
		{"both Gemini keys", []string{"GEMINI_API_KEY=" + realKey, "GOOGLE_API_KEY=" + realKey + "-google"}, realKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newGeminiAPI(t, func(calls int, _ string) gstep {
				if calls < len(leakProbes) {
					return gstep{Call: "run_shell_command", Args: map[string]any{"command": leakProbes[calls].cmd, "description": "probe"}}
				}
				return gstep{Text: "done"}
			})
			rt, ws := realSetupWith(t, api, tc.env)
			h := clitest.ProbeTurn(t, ws, rt, "Show me your environment")
			reqs := api.ProbeRequests(t, len(leakProbes))
			for i, p := range leakProbes {
				out := lastFunctionResponse(reqs[i+1])
				switch {
				case strings.Contains(out, realKey):
					t.Errorf("probe %s returned a key to the model:\n%s", p.name, out)
				case !strings.Contains(out, `"output"`) || strings.Contains(out, "canceled by the user"):
					t.Errorf("probe %s did not run: %s", p.name, out)
				case p.name == "every ancestor's environ" && !strings.Contains(out, "GEMINI_API_KEY="+credproxy.PlaceholderPrefix):
					t.Errorf("Gemini's environment does not hold a placeholder: %s", out)
				}
			}
			for _, r := range api.Received() {
				head, _, body := clitest.SplitReceived(r)
				if strings.Contains(body, realKey) || strings.Contains(head, realKey) {
					t.Errorf("the API received a key outside the credential header: %s\n%.300s", head, body)
				}
			}
			api.CheckCredentials(t, tc.wantCred)
			clitest.CheckKeyKept(t, realKey, h.Journal.Events(), filepath.Dir(ws))
		})
	}
}

// TestGeminiCredentialsSpec: the Gemini API and Vertex AI modes proxy
// both keys to the endpoint Gemini would use.
func TestGeminiCredentialsSpec(t *testing.T) {
	for _, tc := range []struct {
		env           []string
		baseVar, want string
	}{
		{nil, "GOOGLE_GEMINI_BASE_URL", geminiUpstream},
		{[]string{"GOOGLE_GENAI_USE_VERTEXAI=true"}, "GOOGLE_VERTEX_BASE_URL", vertexUpstream},
		{[]string{"GOOGLE_GENAI_USE_VERTEXAI=true", "GOOGLE_CLOUD_LOCATION=us"}, "GOOGLE_VERTEX_BASE_URL", vertexUSUpstream},
		{[]string{"GOOGLE_GENAI_USE_VERTEXAI=true", "GOOGLE_CLOUD_LOCATION=eu"}, "GOOGLE_VERTEX_BASE_URL", vertexEUUpstream},
		{[]string{"GOOGLE_GENAI_USE_VERTEXAI=false"}, "GOOGLE_GEMINI_BASE_URL", geminiUpstream},
	} {
		sp := geminiCredentials(tc.env)
		if sp.BaseURLVar != tc.baseVar || sp.DefaultUpstream != tc.want || len(sp.KeyVars) != 2 {
			t.Errorf("env %q: spec %+v", tc.env, sp)
		}
	}
}

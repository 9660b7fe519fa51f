package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// kzProcess runs kz as its own process (this test binary with KZ_MAIN=1),
// so that everything an SDK might print to the terminal shows up in the
// captured stderr.
func (sb *sandbox) kzProcess(env []string, args ...string) (string, string, int) {
	sb.t.Helper()
	return sb.kzProcessIn(append(sb.environ(), env...), args...)
}

// kzProcessIn is kzProcess with environ as the whole environment.
func (sb *sandbox) kzProcessIn(environ []string, args ...string) (string, string, int) {
	sb.t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = sb.workspace
	cmd.Env = environ
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		sb.t.Fatalf("run kz: %v", err)
	}
	return out.String(), errb.String(), code
}

// TestNativeRuntimeNamedNativeFromTheCommandLine is `kz -p "..." --runtime
// native --model M` as a person types it, in its own process, against a fake
// of each wire format at the configured base URL. The key comes from the
// process environment even though the project has a .env naming the same
// variable, the non-default model M is the one requested, the [[models]]
// entry of the user config prices the turn, and nothing but the answer
// reaches the terminal (no SDK log line).
func TestNativeRuntimeNamedNativeFromTheCommandLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, provider, api, path string
	}{
		{"anthropic", "anthropic", "", "/v1/messages"},
		{"openai-chat", "openai", "", "/v1/chat/completions"},
		{"openai-responses", "openai", "responses", "/v1/responses"},
		{"gemini", "gemini", "", "/v1beta/models/my-tuned-model:streamGenerateContent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nativeFromTheCommandLine(t, tc.provider, tc.api, tc.path)
		})
	}
}

func nativeFromTheCommandLine(t *testing.T, provider, api, path string) {
	sb := newProcessSandbox(t)
	fake := llmtest.New(t, llm.Provider(provider),
		llmtest.Reply{Text: "Reading it.", Reasoning: "check the notes", Calls: []llmtest.Call{{ID: "c1", Name: "read_file", Args: `{"path":"notes.txt"}`}}, Usage: engine.Usage{InputTokens: 1000, OutputTokens: 100}},
		llmtest.Reply{Text: "The notes say hi.", Usage: engine.Usage{InputTokens: 2000, OutputTokens: 50}},
		llmtest.Reply{Text: "Second answer.", Usage: engine.Usage{InputTokens: 10, OutputTokens: 1}})
	base := fake.URL
	if provider != "gemini" {
		base += "/v1" // the OpenAI and Anthropic SDKs append their paths to it
	}
	if provider == "anthropic" {
		base = fake.URL
	}
	apiLine := ""
	if api != "" {
		apiLine = fmt.Sprintf("api = %q\n", api)
	}
	sb.userConfig(fmt.Sprintf(`[runtimes.native]
kind = "native"
provider = %q
base_url = %q
api_key_env = "KZ_CLI_KEY"
models = ["some-default", "my-tuned-model"]
%s
[[models]]
id = "my-tuned-model"
context_window = 64000
max_output = 4000
input_per_mtok = 1.0
output_per_mtok = 10.0
`, provider, base, apiLine))
	for name, body := range map[string]string{".env": "KZ_CLI_KEY=sk-from-project-dotenv\nOPENAI_API_KEY=sk-dotenv\n", "notes.txt": "hi\n"} {
		if err := os.WriteFile(filepath.Join(sb.workspace, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"KZ_CLI_KEY=sk-from-environment"}

	out, errOut, code := sb.kzProcess(env, "-p", "what do the notes say?", "--runtime", "native", "--model", "my-tuned-model")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if out != "Reading it.The notes say hi.\n" {
		t.Errorf("stdout %q", out)
	}
	// kz names the session on stderr; anything else there is noise.
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "kz: session ") {
		t.Errorf("kz printed to the terminal's error stream (SDK logs or a catalog warning for a configured model): %q", errOut)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Path != path || (provider != "gemini" && r.Body["model"] != "my-tuned-model") {
			t.Errorf("request %s model %v, want %s and my-tuned-model", r.Path, r.Body["model"], path)
		}
		key := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key") + r.Header.Get("X-Goog-Api-Key")
		if !strings.Contains(key, "sk-from-environment") || strings.Contains(key, "dotenv") {
			t.Errorf("key headers %q: the key must come from the process environment only", key)
		}
	}
	if !reqs[1].Contains(`hi\n`) {
		t.Errorf("the tool result did not reach the model: %s", reqs[1].Raw)
	}

	// The next turn's price comes from the [[models]] entry.
	out, errOut, code = sb.kzProcess(env, "-p", "again", "--runtime", "native", "--model", "my-tuned-model", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var final engine.Event
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &final); err != nil {
		t.Fatalf("json output %q: %v", out, err)
	}
	if want := (10*1.0 + 1*10.0) / 1e6; final.Output != "Second answer." || math.Abs(final.CostUSD-want) > 1e-12 {
		t.Errorf("final %q cost %v, want %v", final.Output, final.CostUSD, want)
	}
}

// TestUnknownModelWarnsOnTheCommandLine: a model the catalog does not know
// runs with conservative defaults, and the person is told so on stderr.
func TestUnknownModelWarnsOnTheCommandLine(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	fake := llmtest.New(t, llm.ProviderOpenAI, llmtest.Reply{Text: "ok", Usage: engine.Usage{InputTokens: 5, OutputTokens: 1}})
	sb.userConfig(fmt.Sprintf("[runtimes.native]\nkind = \"native\"\nprovider = \"openai\"\nbase_url = %q\nmodels = [\"some-new-model\"]\n", fake.URL))
	out, errOut, code := sb.kzProcess(nil, "-p", "hello", "--runtime", "native", "--model", "some-new-model")
	if code != 0 || out != "ok\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, `kz: warning: model "some-new-model" is not in kz's catalog`) || !strings.Contains(errOut, "[[models]]") {
		t.Errorf("no unknown-model warning on stderr: %q", errOut)
	}
}

// TestRuntimesExplainWhyANativeRuntimeIsUnavailable: kz runtimes names the
// missing variable (a project .env does not count) and an unreachable base
// URL, and shows a working one as available with its model.
func TestRuntimesExplainWhyANativeRuntimeIsUnavailable(t *testing.T) {
	sb := newSandbox(t)
	fake := llmtest.New(t, llm.ProviderAnthropic)
	t.Setenv("KZ_RT_PRESENT", "sk-present")
	sb.userConfig(fmt.Sprintf(`[runtimes.nokey]
kind = "native"
provider = "anthropic"
api_key_env = "KZ_RT_ABSENT"
models = ["claude-sonnet-4-5"]

[runtimes.dead]
kind = "native"
provider = "openai"
base_url = "http://127.0.0.1:1/v1"
api_key_env = "KZ_RT_PRESENT"
models = ["gpt-4o"]

[runtimes.live]
kind = "native"
provider = "anthropic"
base_url = %q
api_key_env = "KZ_RT_PRESENT"
models = ["claude-haiku-4-5"]
`, fake.URL))
	if err := os.WriteFile(filepath.Join(sb.workspace, ".env"), []byte("KZ_RT_ABSENT=sk-dotenv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sb.kz("runtimes", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		Name      string   `json:"name"`
		Available bool     `json:"available"`
		Why       string   `json:"why"`
		Models    []string `json:"models"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, r := range rows {
		if r.Available {
			got[r.Name] = "available " + strings.Join(r.Models, ",")
		} else {
			got[r.Name] = r.Why
		}
	}
	if !strings.Contains(got["nokey"], "set the environment variable KZ_RT_ABSENT") {
		t.Errorf("nokey: %q", got["nokey"])
	}
	if !strings.Contains(got["dead"], "http://127.0.0.1:1/v1 is unreachable") {
		t.Errorf("dead: %q", got["dead"])
	}
	if got["live"] != "available claude-haiku-4-5" {
		t.Errorf("live: %q", got["live"])
	}
	if len(fake.Requests()) != 0 {
		t.Error("kz runtimes sent a request to the API")
	}
	// The table says the same in words.
	out, _, _ = sb.kz("runtimes")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "dead" && f[1] != "no" {
			t.Errorf("table line %q", line)
		}
	}
}

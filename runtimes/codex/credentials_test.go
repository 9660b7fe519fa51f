package codex

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/credproxy"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// realKey is the provider key of these tests: distinctive, so that a
// leak anywhere is found by a plain substring search.
const realKey = "sk-proj-REALKEY-kz15-codex-must-never-leak-4242"

// leakProbes are commands an agent's shell could use to find the key;
// each is run through Codex's shell tool after kz approves it.
var leakProbes = []struct{ name, cmd string }{
	{"printenv", "printenv"},
	{"env", "env"},
	{"own environ", `cat /proc/$$/environ | tr '\0' '\n'`},
	{"parent's environ", `cat /proc/$PPID/environ | tr '\0' '\n'`},
	{"every ancestor's environ", `p=$$; while [ "$p" -gt 1 ]; do echo "== $p"; cat /proc/$p/environ | tr '\0' '\n'; p=$(awk '{print $4}' /proc/$p/stat); done 2>&1`},
	{"the CLI's home", `ls -la ~ ~/.codex; cat ~/.codex/config.toml ~/.codex/auth.json 2>&1 | head -c 20000`},
}

// TestRealCodexKeyNeverReachesTools is the class "children never see
// credentials" for Codex, for both ways kz hands it a key: a provider of
// Codex's config whose env_key variable kz's configuration sets, and a key
// for the built-in provider in kz's environment (CODEX_API_KEY, with
// OPENAI_BASE_URL naming the endpoint), which kz sends as a provider of
// its own. The fake model runs every leak probe and kz approves each; the
// key must not be in any tool output, in anything the API receives but the
// Authorization header the proxy sets, in kz's events or in any file of
// the CLI, and the turn completes through the proxy.
func TestRealCodexKeyNeverReachesTools(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider func(api *respAPI) string
		env      func(api *respAPI) []string
		// keyVar is the variable of Codex's environment that must hold
		// the placeholder.
		keyVar string
	}{
		{"configured provider", fakeProvider, func(*respAPI) []string { return []string{"FAKE_OPENAI_API_KEY=" + realKey} }, "FAKE_OPENAI_API_KEY"},
		{"built-in provider", func(*respAPI) string { return "" },
			func(api *respAPI) []string {
				return []string{"CODEX_API_KEY=" + realKey, "OPENAI_BASE_URL=" + api.srv.URL + "/v1"}
			}, "OPENAI_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newRespAPI(t, func(outputs int, body map[string]any) step {
				if outputs < len(leakProbes) {
					return step{Shell: leakProbes[outputs].cmd}
				}
				return step{Text: "done"}
			})
			rt, ws := realSetupWith(t, api, tc.provider(api), tc.env(api))
			h := clitest.ProbeTurn(t, ws, rt, "Show me your environment")
			reqs := api.ProbeRequests(t, len(leakProbes))
			for i, p := range leakProbes {
				out := lastOutput(reqs[i+1])
				switch {
				case strings.Contains(out, realKey):
					t.Errorf("probe %s returned the key to the model:\n%s", p.name, out)
				case !strings.Contains(out, "exited with code 0"):
					t.Errorf("probe %s did not run: %s", p.name, out)
				case p.name == "parent's environ" && !strings.Contains(out, tc.keyVar+"="+credproxy.PlaceholderPrefix):
					t.Errorf("Codex's environment does not hold a placeholder in %s: %s", tc.keyVar, out)
				}
			}
			for _, r := range api.Received() {
				// The key may only be in the Authorization header the
				// proxy set, never in a body.
				head, _, body := clitest.SplitReceived(r)
				if strings.Contains(body, realKey) {
					t.Errorf("a request body holds the key: %s\n%.300s", head, body)
				}
			}
			api.CheckCredentials(t, "Bearer "+realKey)
			clitest.CheckKeyKept(t, realKey, h.Journal.Events(), filepath.Dir(ws))
		})
	}
}

// TestShieldCodexChoices is the class "which key Codex gets how", without
// the CLI: a configured provider's env_key is proxied with its base_url
// overridden; a key for the built-in provider becomes kz's provider unless
// Codex has its own login; keys Codex would not use are dropped; a
// provider kz cannot point at a proxy gets no key.
func TestShieldCodexChoices(t *testing.T) {
	write := func(t *testing.T, home, config string, login bool) {
		t.Helper()
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		if login {
			if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte(`{}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	custom := "model_provider = \"corp\"\n[model_providers.corp]\nbase_url = \"https://gw.example/v1\"\nenv_key = \"CORP_KEY\"\n"
	cases := []struct {
		name     string
		config   string
		login    bool
		args     []string
		env      []string
		proxied  string // the variable that must hold a placeholder, or ""
		upstream string
		wantArgs []string // -c overrides that must be present (prefixes)
		gone     []string // variables that must not be in the child's env
	}{
		{"configured provider", custom, false, nil, []string{"CORP_KEY=" + realKey, "OPENAI_API_KEY=" + realKey},
			"CORP_KEY", "https://gw.example/v1", []string{"model_providers.corp.base_url="}, []string{"OPENAI_API_KEY"}},
		{"provider named by a profile", "profile = \"p\"\n[profiles.p]\nmodel_provider = \"corp\"\n" + custom[len("model_provider = \"corp\"\n"):], false, nil,
			[]string{"CORP_KEY=" + realKey}, "CORP_KEY", "https://gw.example/v1", []string{"model_providers.corp.base_url="}, nil},
		{"provider named by a -c argument", "[model_providers.corp]\nbase_url = \"https://gw.example/v1\"\nenv_key = \"CORP_KEY\"\n", false,
			[]string{"-c", `model_provider="corp"`}, []string{"CORP_KEY=" + realKey}, "CORP_KEY", "https://gw.example/v1", []string{"model_providers.corp.base_url="}, nil},
		{"provider whose env_key is OPENAI_API_KEY", "model_provider = \"gw\"\n[model_providers.gw]\nbase_url = \"http://127.0.0.1:4000/v1\"\nenv_key = \"OPENAI_API_KEY\"\n", false, nil,
			[]string{"OPENAI_API_KEY=" + realKey, "CODEX_API_KEY=" + realKey}, "OPENAI_API_KEY", "http://127.0.0.1:4000/v1", []string{"model_providers.gw.base_url="}, []string{"CODEX_API_KEY"}},
		{"built-in provider with CODEX_API_KEY", "", false, nil, []string{"CODEX_API_KEY=" + realKey},
			"OPENAI_API_KEY", defaultUpstream, []string{"model_providers.kz-openai.base_url=", "model_provider=\"kz-openai\"", "model_providers.kz-openai.env_key=\"OPENAI_API_KEY\""}, []string{"CODEX_API_KEY"}},
		{"built-in provider at OPENAI_BASE_URL", "", false, nil, []string{"OPENAI_API_KEY=" + realKey, "OPENAI_BASE_URL=https://oai.example/v1"},
			"OPENAI_API_KEY", "https://oai.example/v1", []string{"model_provider=\"kz-openai\""}, nil},
		{"built-in provider at openai_base_url", "openai_base_url = \"https://cfg.example/v1\"\n", false, nil, []string{"OPENAI_API_KEY=" + realKey},
			"OPENAI_API_KEY", "https://cfg.example/v1", []string{"model_provider=\"kz-openai\""}, nil},
		{"Codex's own login wins", "", true, nil, []string{"OPENAI_API_KEY=" + realKey, "CODEX_API_KEY=" + realKey},
			"", "", nil, []string{"OPENAI_API_KEY", "CODEX_API_KEY"}},
		{"no key at all", "", false, nil, []string{"HOME=/h"}, "", "", nil, nil},
		{"configured provider without a key set", custom, false, nil, []string{"OPENAI_API_KEY=" + realKey}, "", "", nil, []string{"OPENAI_API_KEY"}},
		{"provider without base_url", "model_provider = \"x\"\n[model_providers.x]\nenv_key = \"X_KEY\"\n", false, nil, []string{"X_KEY=" + realKey},
			"", "", nil, []string{"X_KEY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), ".codex")
			write(t, home, tc.config, tc.login)
			env := append([]string{"CODEX_HOME=" + home}, tc.env...)
			sh, err := shield(env, tc.args, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if sh.proxy != nil {
				defer func() { _ = sh.proxy.Close() }()
			}
			if strings.Contains(strings.Join(append(slices.Clone(sh.env), sh.args...), "\n"), realKey) {
				t.Fatalf("the child would get the key: env %q args %q", sh.env, sh.args)
			}
			if tc.proxied == "" {
				if sh.proxy != nil || len(sh.args) > 0 {
					t.Errorf("proxied although it should not: %q", sh.args)
				}
			} else {
				if sh.proxy == nil {
					t.Fatal("not proxied")
				}
				if got := childenv.Lookup(sh.env, tc.proxied); got != sh.proxy.Placeholders()[0] {
					t.Errorf("%s=%q, want the placeholder", tc.proxied, got)
				}
				if sh.proxy.Upstream() != tc.upstream {
					t.Errorf("upstream %q, want %q", sh.proxy.Upstream(), tc.upstream)
				}
				joined := strings.Join(sh.args, " ")
				for _, w := range tc.wantArgs {
					if !strings.Contains(joined, w) {
						t.Errorf("args %q lack %q", sh.args, w)
					}
				}
				if !strings.Contains(joined, sh.proxy.URL()) {
					t.Errorf("args %q do not point Codex at the proxy %s", sh.args, sh.proxy.URL())
				}
			}
			for _, g := range tc.gone {
				if childenv.Lookup(sh.env, g) != "" && childenv.Lookup(sh.env, g) != childenv.Lookup(sh.env, tc.proxied) {
					t.Errorf("%s is still in the child's env", g)
				}
			}
		})
	}
}

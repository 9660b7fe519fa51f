package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/credproxy"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// realKey is the provider key of these tests: distinctive, so that a
// leak anywhere is found by a plain substring search.
const realKey = "sk-ant-REALKEY-kz15-claude-must-never-leak-4242"

// leakProbe is a command an agent's shell could use to find the
// provider key. seesPlaceholder says its output shows the CLI's own
// environment, where the placeholder must stand instead of the key.
type leakProbe struct {
	name, cmd       string
	seesPlaceholder bool
}

// leakProbes are run through Claude's Bash tool, each approved by kz.
// Without the proxy every probe but the home's returned the key (Claude
// 2.1.197 drops only CLAUDE_CODE_OAUTH_TOKEN from its Bash tool's
// environment, and its own environment is readable through /proc). Now
// the CLI holds a placeholder, which the parent's and the ancestors'
// probes must find.
var leakProbes = []leakProbe{
	{"printenv", "printenv", false},
	{"env", "env", false},
	{"own environ", `cat /proc/self/environ | tr '\0' '\n'`, false},
	{"parent's environ", `cat /proc/$PPID/environ | tr '\0' '\n'`, true},
	{"every ancestor's environ", `p=$$; while [ "$p" -gt 1 ]; do echo "== $p"; cat /proc/$p/environ | tr '\0' '\n'; p=$(awk '{print $4}' /proc/$p/stat); done 2>&1`, true},
	{"the CLI's home", `ls -la ~; cat ~/.claude.json ~/.claude/*.json ~/.claude/.credentials.json 2>&1 | head -c 20000`, false},
}

// probeScript makes the fake model run every probe, one per request, then
// answer "done".
func probeScript(probes []leakProbe, tool string, input func(cmd string) any) func(r *apiRequest) fakeReply {
	return func(r *apiRequest) fakeReply {
		n := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		if n < len(probes) {
			return fakeReply{Tools: []fakeTool{{ID: "toolu_probe" + string(rune('a'+n)), Name: tool, Input: input(probes[n].cmd)}}}
		}
		return fakeReply{Text: "done"}
	}
}

// TestRealClaudeKeyNeverReachesTools is the class "children never see
// credentials" for Claude Code: for each variable kz may hold the
// Anthropic credential in, the fake model runs every leak probe through
// the Bash tool and kz approves each. The key must not be in any tool
// result, in anything the API receives but the credential header the
// proxy sets, in kz's events (what the store keeps) or in the CLI's own
// files; the CLI's environment holds the placeholder instead, and the
// turn completes through the proxy.
func TestRealClaudeKeyNeverReachesTools(t *testing.T) {
	type tcase struct {
		keyVar   string
		confined bool
	}
	var cases []tcase
	for _, k := range credSpec.KeyVars {
		cases = append(cases, tcase{keyVar: k})
	}
	// Under the sandbox too: the ancestors the probes can see end at the
	// sandbox's first process.
	cases = append(cases, tcase{keyVar: "ANTHROPIC_API_KEY", confined: true})
	for _, tc := range cases {
		keyVar := tc.keyVar
		name := keyVar
		if tc.confined {
			name += " confined"
		}
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, probeScript(leakProbes, "Bash", func(cmd string) any {
				return map[string]string{"command": cmd, "description": "probe"}
			}))
			bin := realClaude(t)
			dir := t.TempDir()
			ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
			for _, d := range []string{filepath.Join(ws, ".git"), home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			env := childenv.Strip(realEnv(api, home), credSpec.KeyVars...)
			env = append(env, keyVar+"="+realKey)
			cfg := Config{Name: "claude", Command: bin, Workspace: ws, Env: env}
			if tc.confined {
				cfg.Confiner = clitest.Confiner(t, ws)
			}
			rt := New(cfg)
			t.Cleanup(func() { _ = rt.Close() })
			h := clitest.ProbeTurn(t, ws, rt, "Show me your environment")
			reqs := api.ProbeRequests(t, len(leakProbes))
			for i, p := range leakProbes {
				res, ok := reqs[i+1].toolResult()
				out := contentText(res.Content)
				switch {
				case !ok || res.IsError:
					t.Errorf("probe %s: no result or an error: %q", p.name, out)
				case strings.Contains(out, realKey):
					t.Errorf("probe %s returned the key to the model:\n%s", p.name, out)
				case p.seesPlaceholder && !strings.Contains(out, keyVar+"="+credproxy.PlaceholderPrefix):
					t.Errorf("probe %s does not show %s holding a placeholder:\n%s", p.name, keyVar, out)
				}
			}
			for _, r := range api.Received() {
				if strings.Contains(r, realKey) && !strings.HasPrefix(r, "POST /v1/messages") {
					t.Errorf("the API received the key outside a Messages request:\n%.400s", r)
				}
				if _, _, body := clitest.SplitReceived(r); strings.Contains(body, realKey) {
					t.Errorf("a request body holds the key:\n%.400s", body)
				}
			}
			wantCred := realKey
			if keyVar != "ANTHROPIC_API_KEY" {
				wantCred = "Bearer " + realKey
			}
			api.CheckCredentials(t, wantCred)
			clitest.CheckKeyKept(t, realKey, h.Journal.Events(), dir)
		})
	}
}

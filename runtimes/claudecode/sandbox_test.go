package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// TestRealClaudeConfined is the class of clitest.ConfinedProbes for the
// real CLI under kz's sandbox: every probe is approved by kz and runs
// through Claude's Bash tool; the turn still completes through the
// credential proxy.
func TestRealClaudeConfined(t *testing.T) {
	probes := clitest.ConfinedProbes(clitest.OutsideDir(t))
	bin := realClaude(t)
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ws, ".git", "hooks"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := clitest.Confiner(t, ws)
	api := newFakeAPI(t, probeScript(asLeakProbes(probes), "Bash", func(cmd string) any {
		return map[string]string{"command": cmd, "description": "probe"}
	}))
	rt := New(Config{Name: "claude", Command: bin, Workspace: ws, Env: realEnv(api, home), Confiner: conf})
	t.Cleanup(func() { _ = rt.Close() })
	clitest.ProbeTurn(t, ws, rt, "Try to escape")
	reqs := api.ProbeRequests(t, len(probes))
	for i, p := range probes {
		res, _ := reqs[i+1].toolResult()
		out := contentText(res.Content)
		t.Run(p.Name, func(t *testing.T) { p.Check(t, ws, out) })
	}
}

// asLeakProbes turns the confined probes into the commands probeScript
// has the fake model run.
func asLeakProbes(ps []clitest.ConfinedProbe) []leakProbe {
	out := make([]leakProbe, len(ps))
	for i, p := range ps {
		out[i] = leakProbe{name: p.Name, cmd: p.Cmd}
	}
	return out
}

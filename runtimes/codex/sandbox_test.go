package codex

import (
	"testing"

	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// TestRealCodexConfined is the class of clitest.ConfinedProbes for Codex
// under kz's sandbox: each probe is approved by kz and run by Codex's
// shell tool (Codex may re-run a command outside its own sandbox; kz's
// holds either way). The turn completes through the credential proxy.
func TestRealCodexConfined(t *testing.T) {
	probes := clitest.ConfinedProbes(clitest.OutsideDir(t))
	api := newRespAPI(t, func(outputs int, body map[string]any) step {
		if outputs < len(probes) {
			return step{Shell: probes[outputs].Cmd}
		}
		return step{Text: "done"}
	})
	rt, ws := realSetupWith(t, api, fakeProvider(api), []string{"FAKE_OPENAI_API_KEY=" + realKey})
	rt.cfg.Confiner = clitest.Confiner(t, ws)
	clitest.ProbeTurn(t, ws, rt, "Try to escape")
	reqs := api.ProbeRequests(t, len(probes))
	for i, p := range probes {
		out := lastOutput(reqs[i+1])
		t.Run(p.Name, func(t *testing.T) { p.Check(t, ws, out) })
	}
}

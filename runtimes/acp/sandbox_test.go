package acp

import (
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// TestRealGeminiConfined is the class of clitest.ConfinedProbes for
// Gemini CLI under kz's sandbox: each probe is approved by kz and run by
// run_shell_command. Gemini keeps its sessions (its home is writable) and
// the turn completes through the credential proxy.
func TestRealGeminiConfined(t *testing.T) {
	probes := clitest.ConfinedProbes(clitest.OutsideDir(t))
	api := newGeminiAPI(t, func(calls int, _ string) gstep {
		if calls < len(probes) {
			return gstep{Call: "run_shell_command", Args: map[string]any{"command": probes[calls].Cmd, "description": "probe"}}
		}
		return gstep{Text: "done"}
	})
	rt, ws := realSetupWith(t, api, []string{"GEMINI_API_KEY=" + realKey})
	rt.cfg.Confiner = clitest.Confiner(t, ws)
	// The agent outlives the turn and must end before its sandbox.
	t.Cleanup(func() { _ = rt.Close() })
	clitest.ProbeTurn(t, ws, rt, "Try to escape")
	reqs := api.ProbeRequests(t, len(probes))
	for i, p := range probes {
		out := lastFunctionResponse(reqs[i+1])
		t.Run(p.Name, func(t *testing.T) { p.Check(t, ws, out) })
	}
	// Gemini recorded the session in its real home, through the overlay.
	chats, _ := filepath.Glob(filepath.Join(filepath.Dir(ws), "home", ".gemini", "tmp", "*", "chats", "*"))
	if len(chats) == 0 {
		t.Error("Gemini could not keep its session in its home")
	}
}

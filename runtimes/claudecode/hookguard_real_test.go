package claudecode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// The person's own Claude hooks (in the Claude home's settings.json) do
// not run under kz: hookGuard sees them and passes disableAllHooks. The
// same home run by Claude Code alone runs them, so the hooks are real.
// Without a hook anywhere the flag is left out (TestHookGuard), which
// spares Claude Code 35-40 ms at each start.
func TestRealUserClaudeHooksDoNotRunUnderKz(t *testing.T) {
	api := newFakeAPI(t, func(*apiRequest) fakeReply { return fakeReply{Text: "Hello from the fake model."} })
	rt, ws := realSetup(t, api)
	home := filepath.Join(filepath.Dir(ws), "home")
	marks := filepath.Join(filepath.Dir(ws), "marks")
	clitest.Dirs(t, marks, filepath.Join(home, ".claude"))
	hook := func(name string) string {
		return `[{"hooks":[{"type":"command","command":"touch ` + filepath.Join(marks, name) + `"}]}]`
	}
	settings := `{"hooks":{"SessionStart":` + hook("session-start") + `,"UserPromptSubmit":` + hook("prompt") +
		`,"Stop":` + hook("stop") + `}}`
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := hookGuard(buildEnv(rt.cfg.Env), ws); got == nil {
		t.Fatal("hookGuard found no hook")
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "Say hello"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	_ = rt.Close()
	if ents, _ := os.ReadDir(marks); len(ents) > 0 {
		t.Fatalf("a Claude hook ran under kz: %v", ents)
	}
	// Claude Code alone, same home and workspace: the hooks run.
	cmd := exec.CommandContext(ctx, realClaude(t), "-p", "Say hello")
	cmd.Dir, cmd.Env = ws, append(os.Environ(), realEnv(api, home)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude alone: %v\n%s", err, out)
	}
	for _, name := range []string{"session-start", "prompt", "stop"} {
		if _, err := os.Stat(filepath.Join(marks, name)); err != nil {
			t.Errorf("the %s hook did not run under Claude Code alone either: the test proves nothing (%v)", name, err)
		}
	}
}

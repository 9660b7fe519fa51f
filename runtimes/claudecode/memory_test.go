package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// With the pinned CLI run on the person's settings only, Claude Code reads
// no project CLAUDE.md itself, and kz appends every memory file to its
// system prompt: each reaches the model exactly once.
func TestRealMemoryFilesReachTheModelOnce(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply { return fakeReply{Text: "ok"} })
	rt, ws := realSetup(t, api)
	for name, body := range map[string]string{
		"AGENTS.md": "KZMEM-AGENTS: run make test before finishing.\n",
		"CLAUDE.md": "KZMEM-CLAUDE: never edit generated files.\n",
		"GEMINI.md": "KZMEM-GEMINI: answer briefly.\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func(ctx context.Context, dir string) engine.TurnContext {
		res := memory.Load(ctx, memory.Options{Workspace: dir})
		return engine.TurnContext{Memory: res.Files}
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Context: load})
	if final := h.Run(t, context.Background(), "hello"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	var main *apiRequest
	for _, r := range api.Requests() {
		if strings.Contains(r.allText(), "hello") {
			main = r
		}
	}
	if main == nil {
		t.Fatal("no request carried the prompt")
	}
	all := main.systemText() + main.allText()
	for marker, want := range map[string]int{"KZMEM-AGENTS": 1, "KZMEM-GEMINI": 1, "KZMEM-CLAUDE": 1} {
		if got := strings.Count(all, marker); got != want {
			t.Errorf("%s appears %d times in the model request, want %d:\nsystem: %s\nmessages: %s", marker, got, want, main.systemText(), main.allText())
		}
	}
	if !strings.Contains(main.systemText(), "KZMEM-AGENTS") {
		t.Errorf("AGENTS.md is not in the system prompt: %s", main.systemText())
	}
	// Claude Code reads no project settings under kz, and with them no
	// project CLAUDE.md: kz puts it in the system prompt.
	if !strings.Contains(main.systemText(), "KZMEM-CLAUDE") {
		t.Errorf("CLAUDE.md is not in the system prompt: %s", main.systemText())
	}
	st := h.Journal.OfType(engine.EventSessionStarted)
	if len(st) != 1 || len(st[0].Memory) != 3 {
		t.Errorf("session_started memory: %+v", st)
	}
}

// TestEnvironmentNeverReachesClaude backs IgnoresEnvironment: Claude's
// command line, which carries kz's memory files, is the same with or
// without the turn's environment, so that the session may leave the
// environment (and its git status) out of Claude's turns.
func TestEnvironmentNeverReachesClaude(t *testing.T) {
	rt := New(Config{Name: "claude", Command: "claude"})
	mem := []engine.MemoryFile{{Path: "/ws/.kz/memory.md", Name: "memory.md", Scope: engine.MemoryProject, Content: "be brief"}}
	env := engine.Environment{OS: "linux/amd64", Date: "2026-11-27", Workspace: "/ws", GitBranch: "main", GitStatus: "3 modified"}
	for _, mode := range []engine.Mode{engine.ModeFullAutonomous, engine.ModePatchProposal, engine.ModeAnalysisOnly} {
		without := rt.modeArgs(&engine.Turn{Mode: mode, Context: engine.TurnContext{Memory: mem}})
		with := rt.modeArgs(&engine.Turn{Mode: mode, Context: engine.TurnContext{Memory: mem, Env: env}})
		if strings.Join(with, "\x00") != strings.Join(without, "\x00") {
			t.Errorf("%s: the environment changes Claude's arguments:\n%q\n%q", mode, with, without)
		}
		if !strings.Contains(strings.Join(with, " "), "be brief") {
			t.Errorf("%s: the memory is missing from %q", mode, with)
		}
	}
	if !rt.IgnoresEnvironment() {
		t.Error("claude must declare that it ignores the environment")
	}
}

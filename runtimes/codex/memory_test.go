package codex

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// With the pinned CLI in a project it does not trust (as kz runs it),
// Codex reads no AGENTS.md itself, and kz gives it every memory file as
// developer instructions: each file reaches the model exactly once.
func TestRealMemoryFilesReachTheModelOnce(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "ok"} })
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
		return engine.TurnContext{Memory: memory.Load(ctx, memory.Options{Workspace: dir}).Files}
	}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Context: load})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "hello"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	b, _ := json.Marshal(reqs[len(reqs)-1])
	all := string(b)
	for _, marker := range []string{"KZMEM-AGENTS", "KZMEM-CLAUDE", "KZMEM-GEMINI"} {
		if got := strings.Count(all, marker); got != 1 {
			t.Errorf("%s appears %d times in the model request, want 1:\n%s", marker, got, all)
		}
	}
}

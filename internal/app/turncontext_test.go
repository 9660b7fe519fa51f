package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// TestTurnContextAndEnvironmentSplit: the session's Context loads the
// memory files and nothing of the environment, and its Environment the
// environment with the git status run in the session's sandbox, so that
// the session can leave the second out of a turn on an agent CLI.
func TestTurnContextAndEnvironmentSplit(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", "-b", "main", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, body := range map[string]string{"AGENTS.md": "be brief\n", "new.txt": "x\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", t.TempDir())
	// The git status is left out when it takes longer than
	// gitStatusTimeout, which bwrap's set-up alone can exceed on a loaded
	// machine under -race: the test is about which loader runs git, so
	// git runs without a sandbox here (the sandbox has its own tests).
	sb, err := sandbox.New(sandbox.Policy{Workspace: ws, TempRoot: t.TempDir(), Mechanism: sandbox.KindNone})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	a := &App{Env: &Env{Workspace: ws, Paths: config.Paths{UserConfig: filepath.Join(t.TempDir(), "kz", "config.toml")}}, sandbox: sb}
	ctx := context.Background()

	tc := a.turnContext(ctx, ws)
	if len(tc.Memory) != 1 || filepath.Base(tc.Memory[0].Path) != "AGENTS.md" || tc.Memory[0].Content != "be brief\n" {
		t.Errorf("memory %+v", tc.Memory)
	}
	if tc.Env.GitStatus != "" || tc.Env.Workspace != "" {
		t.Errorf("Context loaded the environment: %+v", tc.Env)
	}
	env := a.turnEnvironment(ctx, ws)
	if env.Workspace != ws || env.GitBranch != "main" || env.GitStatus != "2 untracked" {
		t.Errorf("environment %+v", env)
	}
}

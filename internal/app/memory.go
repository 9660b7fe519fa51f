package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// gitStatusTimeout bounds the git status of a turn's environment: a huge
// repository (or a busy machine) must not hold the turn up; past it the
// status is left out of the environment.
const gitStatusTimeout = 250 * time.Millisecond

// turnContext loads the memory files a turn of this app runs under: the
// workspace's (and those of the user's kz config directory). It is the
// session's Config.Context; the environment is turnEnvironment, which the
// session loads beside it, and only for a turn whose runtimes show it.
//
// The memory files are cached across the session's turns by what the load
// looked at (memory.Cache), so that a turn in an unchanged workspace reads
// no memory file.
func (a *App) turnContext(ctx context.Context, workspace string) engine.TurnContext {
	home, _ := os.UserHomeDir()
	res := a.memory.Load(ctx, memory.Options{Workspace: workspace, UserDir: a.Env.MemoryDir(), Home: home})
	return engine.TurnContext{Memory: res.Files, Problems: res.Problems}
}

// turnEnvironment describes the workspace for a turn: the OS, shell,
// date, git branch and the git status, which runs in the session's
// sandbox. It is the session's Config.Environment. The git status is
// cached by the repository's index and HEAD and the session's count of
// workspace changes (memory.StatusCache), so that a turn in an unchanged
// workspace runs no git.
func (a *App) turnEnvironment(ctx context.Context, workspace string) engine.Environment {
	var status memory.StatusFunc
	if a.sandbox != nil {
		var changes func() uint64
		if a.Session != nil {
			changes = a.Session.WorkspaceChanges
		}
		status = a.gitStatus.Wrap(sandboxedGitStatus(a.sandbox, workspace), changes)
	}
	return memory.Probe(ctx, workspace, time.Now(), status)
}

// memoryBook is the TUI's view of the project memory: /memory lists the
// files a turn would get now, and "#" lines go to the project's memory
// file.
type memoryBook struct{ a *App }

func (b memoryBook) MemoryFiles(ctx context.Context) ([]engine.MemoryFile, []string) {
	home, _ := os.UserHomeDir()
	res := memory.Load(ctx, memory.Options{Workspace: b.a.Env.Workspace, UserDir: b.a.Env.MemoryDir(), Home: home})
	return res.Files, res.Problems
}

func (b memoryBook) Remember(line string) (string, error) {
	return memory.Append(b.a.Env.Workspace, line)
}

// reasoningSetter gives /reasoning's setting to every native and
// completion runtime of the session.
type reasoningSetter struct{ a *App }

func (r reasoningSetter) SetReasoning(setting string) error {
	n, err := runtimes.SetReasoning(r.a.Runtimes, setting)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no runtime of this session takes a reasoning setting (native and completion runtimes do)")
	}
	return nil
}

// cycleLevel is a --reasoning setting as a step of the TUI's /reasoning
// cycle (off, low, medium, high), so that the cycle goes on from what the
// command line set rather than from the default: a level is itself ("none"
// is off), a budget is the level whose budget it reaches. "" (nothing
// given, or nothing kz understands) leaves the cycle at its start.
func cycleLevel(setting string) string {
	if strings.TrimSpace(setting) == "" {
		return ""
	}
	r, err := llm.ParseReasoning(setting)
	if err != nil {
		return ""
	}
	if l := r.Level(); l != "" {
		return string(l)
	}
	return string(llm.ReasoningOff)
}

// MemoryDir is the user's kz config directory, where the memory files for
// every project live.
func (e *Env) MemoryDir() string { return filepath.Dir(e.Paths.UserConfig) }

// sandboxedGitStatus runs git status in the session's sandbox, read-only
// and without network, like any command kz runs without asking: a
// repository's config can make git start programs (core.fsmonitor is
// switched off as well). Without a sandbox kz does not run git for the
// environment, and the status is left out.
func sandboxedGitStatus(sb *sandbox.Sandbox, workspace string) memory.StatusFunc {
	return func(ctx context.Context, _ string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, gitStatusTimeout)
		defer cancel()
		cmd, err := sb.Command(ctx, engine.Confinement{Profile: engine.ProfileReadOnly}, sandbox.Spec{
			Argv: []string{"git", "-c", "core.fsmonitor=false", "--no-optional-locks", "status", "--porcelain"},
			Dir:  workspace,
		})
		if err != nil {
			return nil, fmt.Errorf("git status: %w", err)
		}
		// The last MiB is enough to count by: a tree with more changes
		// than that is summarised from its tail.
		out := proc.NewTail(1 << 20)
		cmd.Stdout = out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("git status: %w", err)
		}
		return []byte(out.String()), nil
	}
}

package memory

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// StatusFunc returns the output of `git status --porcelain` in the
// repository at dir. The caller decides how git runs (kz runs it in the
// session's read-only sandbox, without network: a repository's config can
// name programs git starts).
type StatusFunc func(ctx context.Context, dir string) ([]byte, error)

// Probe describes the environment of a workspace: the OS, the person's
// shell, today's date, the workspace, the git branch (read from .git/HEAD,
// nothing run) and, when status is not nil, a summary of the working
// tree.
func Probe(ctx context.Context, workspace string, now time.Time, status StatusFunc) engine.Environment {
	env := engine.Environment{OS: runtime.GOOS + "/" + runtime.GOARCH, Date: now.Format("2006-01-02"), Workspace: workspace}
	if sh := os.Getenv("SHELL"); sh != "" {
		env.Shell = filepath.Base(sh)
	}
	top, ok := findRepo(workspace)
	if !ok {
		return env
	}
	env.GitBranch = Branch(top)
	if status != nil {
		if out, err := status(ctx, top); err == nil {
			env.GitStatus = StatusSummary(out)
		}
	}
	return env
}

// Branch reads the checked-out branch of the repository at top from its
// HEAD file ("detached at <short sha>" for a detached HEAD), following the
// gitdir: line of a worktree's .git file. It returns "" when HEAD cannot
// be read.
func Branch(top string) string {
	gitDir := GitDir(top)
	if gitDir == "" {
		return ""
	}
	b, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
	}
	if len(head) >= 7 {
		return "detached at " + head[:7]
	}
	return ""
}

// readSmall reads up to 4 KiB of a regular file.
func readSmall(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, 4<<10))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return b, nil
}

// StatusSummary summarises `git status --porcelain` output: "clean", or
// the counts of changed, staged and untracked paths.
func StatusSummary(porcelain []byte) string {
	var staged, changed, untracked int
	for line := range bytes.SplitSeq(porcelain, []byte("\n")) {
		if len(line) < 2 {
			continue
		}
		x, y := line[0], line[1]
		switch {
		case x == '?' && y == '?':
			untracked++
		default:
			if x != ' ' && x != '!' {
				staged++
			}
			if y != ' ' && y != '!' {
				changed++
			}
		}
	}
	if staged+changed+untracked == 0 {
		return "clean"
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{staged, "staged"}, {changed, "modified"}, {untracked, "untracked"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

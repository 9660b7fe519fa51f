package memory

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkTurnContext is what loading a turn's context costs in an
// unchanged workspace: the memory files (a root AGENTS.md importing two
// files, a CLAUDE.md two directories down) and the environment with a
// real `git status --porcelain` over a repository of 200 files, loaded
// afresh as every turn did, and through the caches.
func BenchmarkTurnContext(b *testing.B) {
	top, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{"AGENTS.md": "rules @docs/a.md @docs/b.md", "docs/a.md": "a", "docs/b.md": "b", "x/y/CLAUDE.md": "deep"}
	for i := range 200 {
		files[fmt.Sprintf("src/f%03d.go", i)] = "package src\n"
	}
	var paths []string
	for p := range files {
		paths = append(paths, filepath.Join(top, p))
	}
	tree(b, top, files)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=k", "-c", "user.email=k@z", "commit", "-qm", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", top}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	aged(b, append(paths, filepath.Join(top, ".git", "index"), filepath.Join(top, ".git", "HEAD"))...)
	ws := filepath.Join(top, "x", "y")
	o := Options{Workspace: ws}
	gitStatus := func(ctx context.Context, dir string) ([]byte, error) {
		return exec.CommandContext(ctx, "git", "-C", dir, "-c", "core.fsmonitor=false", "--no-optional-locks", "status", "--porcelain").Output()
	}
	ctx := context.Background()
	now := time.Now()
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			if r := Load(ctx, o); len(r.Files) != 4 {
				b.Fatalf("%d files", len(r.Files))
			}
			if env := Probe(ctx, ws, now, gitStatus); env.GitStatus != "clean" {
				b.Fatalf("status %q", env.GitStatus)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		var mc Cache
		var sc StatusCache
		status := sc.Wrap(gitStatus, func() uint64 { return 0 })
		for b.Loop() {
			if r := mc.Load(ctx, o); len(r.Files) != 4 {
				b.Fatalf("%d files", len(r.Files))
			}
			if env := Probe(ctx, ws, now, status); env.GitStatus != "clean" {
				b.Fatalf("status %q", env.GitStatus)
			}
		}
	})
}

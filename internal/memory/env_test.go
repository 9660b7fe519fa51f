package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

func TestBranchFromHeadWorktreeAndDetached(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{".git/HEAD": "ref: refs/heads/feature/x\n"})
	if b := Branch(top); b != "feature/x" {
		t.Fatalf("branch = %q", b)
	}
	tree(t, top, map[string]string{".git/HEAD": "0123456789abcdef0123456789abcdef01234567\n"})
	if b := Branch(top); b != "detached at 0123456" {
		t.Fatalf("detached = %q", b)
	}
	wt := t.TempDir()
	tree(t, top, map[string]string{".git/worktrees/w/HEAD": "ref: refs/heads/i19\n"})
	tree(t, wt, map[string]string{".git": "gitdir: " + filepath.Join(top, ".git", "worktrees", "w") + "\n"})
	if b := Branch(wt); b != "i19" {
		t.Fatalf("worktree branch = %q", b)
	}
	if b := Branch(t.TempDir()); b != "" {
		t.Fatalf("no repository: branch = %q", b)
	}
}

func TestStatusSummary(t *testing.T) {
	cases := map[string]string{
		"":                                  "clean",
		" M a.go\n":                         "1 modified",
		"M  a.go\nMM b.go\n?? c\n?? d/\n":   "2 staged, 1 modified, 2 untracked",
		"A  new.go\n D gone.go\n!! ignored": "1 staged, 1 modified",
	}
	for in, want := range cases {
		if got := StatusSummary([]byte(in)); got != want {
			t.Errorf("StatusSummary(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProbe(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	t.Setenv("SHELL", "/usr/bin/zsh")
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	var asked string
	env := Probe(context.Background(), filepath.Join(top), now, func(_ context.Context, dir string) ([]byte, error) {
		asked = dir
		return []byte(" M x\n"), nil
	})
	if env.Shell != "zsh" || env.Date != "2026-11-27" || env.GitBranch != "main" || env.GitStatus != "1 modified" ||
		env.Workspace != top || asked != top || !strings.Contains(env.OS, "/") {
		t.Fatalf("env = %+v (status asked in %q)", env, asked)
	}
	env = Probe(context.Background(), top, now, func(context.Context, string) ([]byte, error) { return nil, errors.New("no git") })
	if env.GitStatus != "" || env.GitBranch != "main" {
		t.Fatalf("a failed status must leave only the status out: %+v", env)
	}
}

func TestRenderAndCLIFilters(t *testing.T) {
	tc := engine.TurnContext{
		Env: engine.Environment{OS: "linux/amd64", Date: "2026-11-27", Workspace: "/w", GitBranch: "main", GitStatus: "clean"},
		Memory: []engine.MemoryFile{
			{Path: "/home/u/.config/kz/AGENTS.md", Name: "AGENTS.md", Scope: engine.MemoryUser, Content: "user\n"},
			{Path: "/w/AGENTS.md", Name: "AGENTS.md", Scope: engine.MemoryProject, Content: "agents"},
			{Path: "/w/notes.md", Name: "AGENTS.md", Scope: engine.MemoryProject, ImportedFrom: "/w/AGENTS.md", Content: "notes"},
			{Path: "/w/CLAUDE.md", Name: "CLAUDE.md", Scope: engine.MemoryProject, Content: "claude"},
			{Path: "/w/c.md", Name: "CLAUDE.md", Scope: engine.MemoryProject, ImportedFrom: "/w/CLAUDE.md", Content: "c"},
			{Path: "/w/.kz/CLAUDE.md", Name: "CLAUDE.md", Scope: engine.MemoryProject, Content: "kz claude"},
		},
	}
	want := "<environment>\nOS: linux/amd64\nDate: 2026-11-27\nWorkspace: /w\nGit branch: main\nGit status: clean\n" +
		"Mode: analysis-only\n</environment>\n\nThe person's memory files follow: instructions for working in this project. " +
		"Follow them; a later file refines an earlier one.\n" +
		"<memory path=\"/home/u/.config/kz/AGENTS.md\">\nuser\n</memory>\n" +
		"<memory path=\"/w/AGENTS.md\">\nagents\n</memory>\n" +
		"<memory path=\"/w/notes.md\">\nnotes\n</memory>\n"
	onlyAgents := func(f engine.MemoryFile) bool { return f.Name == "AGENTS.md" }
	if got := Render(tc, engine.ModeAnalysisOnly, onlyAgents); got != want {
		t.Fatalf("Render =\n%s\nwant\n%s", got, want)
	}
	kept := func(keep func(engine.MemoryFile) bool) []string {
		var out []string
		for _, f := range tc.Memory {
			if keep(f) {
				out = append(out, f.Path)
			}
		}
		return out
	}
	claude := kept(ReadBy("CLAUDE.md", true))
	if strings.Join(claude, " ") != "/home/u/.config/kz/AGENTS.md /w/AGENTS.md /w/notes.md /w/.kz/CLAUDE.md" {
		t.Fatalf("claude gets %v", claude)
	}
	codex := kept(ReadBy("AGENTS.md", false))
	if strings.Join(codex, " ") != "/home/u/.config/kz/AGENTS.md /w/notes.md /w/CLAUDE.md /w/c.md /w/.kz/CLAUDE.md" {
		t.Fatalf("codex gets %v", codex)
	}
	if got := Render(engine.TurnContext{}, "", nil); got != "" {
		t.Fatalf("empty context rendered %q", got)
	}
}

func TestAppend(t *testing.T) {
	top := repo(t)
	ws := filepath.Join(top, "sub")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Append(ws, "  use tabs  ")
	if err != nil || p != filepath.Join(top, "AGENTS.md") {
		t.Fatalf("Append = %q, %v", p, err)
	}
	if _, err := Append(ws, "run make test"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "- use tabs\n- run make test\n" {
		t.Fatalf("AGENTS.md = %q", b)
	}
	for _, bad := range []string{"", "  ", "two\nlines", "nul\x00"} {
		if _, err := Append(ws, bad); err == nil {
			t.Errorf("Append(%q) succeeded", bad)
		}
	}
	entries, _ := os.ReadDir(top)
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}

func TestAppendUsesTheExistingFileItsModeAndLinks(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{"docs/memory.md": "# Rules\nno newline at end"})
	if err := os.Chmod(filepath.Join(top, "docs/memory.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/memory.md", filepath.Join(top, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	p, err := Append(top, "x")
	if err != nil || p != filepath.Join(top, "docs", "memory.md") {
		t.Fatalf("Append = %q, %v", p, err)
	}
	b, _ := os.ReadFile(filepath.Join(top, "CLAUDE.md"))
	if string(b) != "# Rules\nno newline at end\n- x\n" {
		t.Fatalf("content = %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(top, "CLAUDE.md")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600 kept", fi.Mode().Perm())
	}
	outside := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := repo(t)
	if err := os.Symlink(outside, filepath.Join(other, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Append(other, "y"); err == nil {
		t.Fatal("appended through a link out of the repository")
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Fatalf("outside file changed: %q", b)
	}
}

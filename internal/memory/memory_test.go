package memory

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/testfs"
)

// tree writes files (path → content) under dir.
func tree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	testfs.Write(t, dir, files)
}

// repo makes a temp repository (a .git directory with a HEAD) and
// returns its resolved path.
func repo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tree(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	// Old enough for a cache to trust (see racyWindow).
	aged(t, filepath.Join(dir, ".git", "HEAD"))
	return dir
}

func paths(r Result, base string) []string {
	var out []string
	for _, f := range r.Files {
		rel, _ := filepath.Rel(base, f.Path)
		out = append(out, rel)
	}
	return out
}

func TestLoadOrderFromUserDirThroughRootDownToWorkspace(t *testing.T) {
	top := repo(t)
	user := t.TempDir()
	tree(t, user, map[string]string{"AGENTS.md": "user rules"})
	tree(t, top, map[string]string{
		"AGENTS.md": "root agents", "CLAUDE.md": "root claude", ".kz/GEMINI.md": "root kz gemini",
		"a/GEMINI.md": "a gemini", "a/b/AGENTS.md": "b agents", "a/b/c/AGENTS.md": "below the workspace",
		"other/AGENTS.md": "a sibling",
	})
	ws := filepath.Join(top, "a", "b")
	r := Load(context.Background(), Options{Workspace: ws, UserDir: user})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if r.Files[0].Scope != engine.MemoryUser || r.Files[0].Content != "user rules" {
		t.Fatalf("first file = %+v, want the user's", r.Files[0])
	}
	got := paths(Result{Files: r.Files[1:]}, top)
	want := []string{"AGENTS.md", "CLAUDE.md", ".kz/GEMINI.md", "a/GEMINI.md", "a/b/AGENTS.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("project files = %v, want %v", got, want)
	}
	for _, f := range r.Files[1:] {
		if f.Scope != engine.MemoryProject || f.Tokens != EstimateTokens(f.Content) || f.Name != filepath.Base(f.Path) {
			t.Errorf("file %+v: wrong scope, name or tokens", f)
		}
	}
}

func TestLoadWithoutRepositoryReadsOnlyTheWorkspace(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	tree(t, dir, map[string]string{"AGENTS.md": "up", "ws/AGENTS.md": "here"})
	if top := RepoRoot(filepath.Join(dir, "ws")); top != filepath.Join(dir, "ws") {
		t.Skipf("the temp dir is inside the repository %s", top)
	}
	r := Load(context.Background(), Options{Workspace: filepath.Join(dir, "ws")})
	if got := paths(r, dir); !slices.Equal(got, []string{"ws/AGENTS.md"}) {
		t.Fatalf("files = %v", got)
	}
}

func TestImportsAreReadAfterTheirFileRelativeToIt(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{
		"AGENTS.md":             "see @docs/style.md and @docs/missing.md",
		"docs/style.md":         "style; also @deep/one.md",
		"docs/deep/one.md":      "one",
		"CLAUDE.md":             "```\n@docs/not-an-import.md\n```\nand `@docs/code.md` and mail a@docs/x.md",
		"docs/code.md":          "never",
		"docs/not-an-import.md": "never",
	})
	r := Load(context.Background(), Options{Workspace: top})
	got := paths(r, top)
	want := []string{"AGENTS.md", "docs/style.md", "docs/deep/one.md", "CLAUDE.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
	if r.Files[1].ImportedFrom != filepath.Join(top, "AGENTS.md") || r.Files[1].Name != "AGENTS.md" {
		t.Fatalf("import = %+v", r.Files[1])
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "docs/missing.md") {
		t.Fatalf("problems = %v, want the missing import named", r.Problems)
	}
}

func TestImportCyclesAndDuplicatesReadEachFileOnce(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{
		"AGENTS.md": "@a.md @AGENTS.md", "a.md": "@b.md", "b.md": "@a.md @./AGENTS.md", "CLAUDE.md": "@a.md",
	})
	r := Load(context.Background(), Options{Workspace: top})
	if got := paths(r, top); !slices.Equal(got, []string{"AGENTS.md", "a.md", "b.md", "CLAUDE.md"}) {
		t.Fatalf("files = %v", got)
	}
}

func TestImportDepthIsBounded(t *testing.T) {
	top := repo(t)
	files := map[string]string{"AGENTS.md": "@f1.md"}
	for i := 1; i <= 8; i++ {
		files["f"+string(rune('0'+i))+".md"] = "@f" + string(rune('0'+i+1)) + ".md"
	}
	tree(t, top, files)
	r := Load(context.Background(), Options{Workspace: top})
	if len(r.Files) != 1+MaxImportDepth {
		t.Fatalf("read %d files, want %d (the file and %d levels)", len(r.Files), 1+MaxImportDepth, MaxImportDepth)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "deeper") {
		t.Fatalf("problems = %v", r.Problems)
	}
}

func TestImportsAndLinksCannotLeaveTheProject(t *testing.T) {
	top := repo(t)
	outside := t.TempDir()
	tree(t, outside, map[string]string{"secret.md": "SECRET"})
	tree(t, top, map[string]string{
		"AGENTS.md": "@../../../../../../etc/passwd @" + filepath.Join(outside, "secret.md") +
			" @link.md @sub/escape.md @~/x.md",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(top, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(top, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(top, "sub", "out")); err != nil {
		t.Fatal(err)
	}
	tree(t, top, map[string]string{"sub/escape.md": "@out/secret.md"})
	// A memory file that is itself a link out of the project.
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(top, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	r := Load(context.Background(), Options{Workspace: top})
	for _, f := range r.Files {
		if strings.Contains(f.Content, "SECRET") || strings.Contains(f.Content, "root:") {
			t.Fatalf("%s leaked content from outside the project", f.Path)
		}
	}
	if got := paths(r, top); !slices.Equal(got, []string{"AGENTS.md", "sub/escape.md"}) {
		t.Fatalf("files = %v", got)
	}
	if len(r.Problems) != 6 {
		t.Fatalf("problems = %q, want one for each of the six escapes", r.Problems)
	}
}

func TestImportsMayNameTheUserConfigDirectory(t *testing.T) {
	top := repo(t)
	home := t.TempDir()
	user := filepath.Join(home, ".config", "kz")
	tree(t, user, map[string]string{"shared.md": "shared rules"})
	tree(t, top, map[string]string{"AGENTS.md": "@~/.config/kz/shared.md"})
	r := Load(context.Background(), Options{Workspace: top, UserDir: user, Home: home})
	if len(r.Files) != 2 || r.Files[1].Content != "shared rules" || r.Files[1].Scope != engine.MemoryUser {
		t.Fatalf("files = %+v, problems %v", r.Files, r.Problems)
	}
}

func TestHugeFileIsCutWithANote(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{"AGENTS.md": strings.Repeat("x", MaxFileBytes*3)})
	r := Load(context.Background(), Options{Workspace: top})
	f := r.Files[0]
	if !f.Truncated || !strings.Contains(f.Content, "was cut at") || len(f.Content) > MaxFileBytes+200 {
		t.Fatalf("truncated=%v len=%d", f.Truncated, len(f.Content))
	}
	if f.Tokens < MaxFileBytes/4 {
		t.Fatalf("tokens = %d", f.Tokens)
	}
}

func TestSpecialFilesAreRefusedWithoutBlocking(t *testing.T) {
	top := repo(t)
	if err := syscall.Mkfifo(filepath.Join(top, "AGENTS.md"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := os.Mkdir(filepath.Join(top, "CLAUDE.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := Load(context.Background(), Options{Workspace: top})
	if len(r.Files) != 0 || len(r.Problems) != 2 {
		t.Fatalf("files %v, problems %v", r.Files, r.Problems)
	}
}

func TestInvalidUTF8IsRepaired(t *testing.T) {
	top := repo(t)
	tree(t, top, map[string]string{"AGENTS.md": "ok \xff\xfe end"})
	r := Load(context.Background(), Options{Workspace: top})
	if r.Files[0].Content != "ok \uFFFD end" {
		t.Fatalf("content = %q", r.Files[0].Content)
	}
}

func TestImportsParsing(t *testing.T) {
	cases := map[string][]string{
		"@a.md":                           {"a.md"},
		"see @a.md, @b/c.md; (@d.md)":     {"a.md", "b/c.md"},
		"mail me@x.org":                   nil,
		"`@code.md` @real.md":             {"real.md"},
		"@my\\ file.md":                   {"my file.md"},
		"```\n@fenced.md\n```\n@after.md": {"after.md"},
		"~~~go\n@x\n~~~":                  nil,
		"@":                               nil,
		"\t@tab.md":                       {"tab.md"},
	}
	for in, want := range cases {
		if got := Imports(in); !slices.Equal(got, want) {
			t.Errorf("Imports(%q) = %q, want %q", in, got, want)
		}
	}
}

// A .git with no HEAD (an empty directory, as a sandbox's mount point
// left behind, or a .git file naming nothing) is no repository, as git
// sees it too: the memory files above it are not read, the environment
// shows no branch, and a remembered line goes to the workspace's file.
func TestAnEmptyGitIsNoRepository(t *testing.T) {
	for name, dotgit := range map[string]func(dir string){
		"empty directory": func(dir string) {
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"file naming nothing": func(dir string) { tree(t, dir, map[string]string{".git": "not a gitdir line\n"}) },
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			ws := filepath.Join(dir, "ws")
			tree(t, dir, map[string]string{"AGENTS.md": "up", "ws/AGENTS.md": "here"})
			if top := RepoRoot(ws); top != ws {
				t.Skipf("the temp dir is inside the repository %s", top)
			}
			dotgit(dir)
			if top := RepoRoot(ws); top != ws {
				t.Fatalf("RepoRoot = %s, want the workspace", top)
			}
			if got := paths(Load(context.Background(), Options{Workspace: ws}), dir); !slices.Equal(got, []string{"ws/AGENTS.md"}) {
				t.Fatalf("files = %v", got)
			}
			ran := false
			env := Probe(context.Background(), ws, time.Now(), func(context.Context, string) ([]byte, error) { ran = true; return nil, nil })
			if env.GitBranch != "" || ran {
				t.Fatalf("environment %+v, status ran %v", env, ran)
			}
			if _, err := Append(ws, "remember this"); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); string(b) != "up" {
				t.Fatalf("the line went above the workspace: %q", b)
			}
			// Given a HEAD, it is the repository.
			if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
				tree(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
				if top := RepoRoot(ws); top != dir {
					t.Fatalf("with a HEAD, RepoRoot = %s, want %s", top, dir)
				}
			}
		})
	}
}

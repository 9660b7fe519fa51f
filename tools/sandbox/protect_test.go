//go:build linux

package sandbox

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitDirLayout makes dir look like a git directory (what git needs to
// recognise one, and what looksLikeGitDir checks).
func gitDirLayout(t testing.TB, dir string) {
	t.Helper()
	for _, d := range []string{"objects", "refs/heads", "hooks", "info"} {
		mkdir(t, filepath.Join(dir, d))
	}
	writeFile(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(dir, "config"), "[core]\n\trepositoryformatversion = 0\n")
}

// testWorkspaceWriteKeepsProtectedPathsReadOnly: under workspace-write
// the workspace is writable but every protected path stays read-only,
// however it is written (redirection, append, truncation, rm, mv, a new
// file inside): .git at the top and nested, the git directory a .git file
// names, a bare repository, .kz, agent configuration, shell startup
// files, the home's rc files, and hard-linked files whose inode lives
// outside.
func testWorkspaceWriteKeepsProtectedPathsReadOnly(t *testing.T, rt route) {
	f := newRouteFixture(t, rt)
	ws := f.ws
	gitDirLayout(t, filepath.Join(ws, ".git"))
	gitDirLayout(t, filepath.Join(ws, "vendor/lib/.git"))
	// A linked worktree: its .git file names a git directory elsewhere in
	// the workspace, under a name that does not look like one.
	writeFile(t, filepath.Join(ws, "wt/.git"), "gitdir: ../store/wt-admin\n")
	writeFile(t, filepath.Join(ws, "store/wt-admin/HEAD"), "ref: refs/heads/x\n")
	writeFile(t, filepath.Join(ws, "store/wt-admin/config.worktree"), "[core]\n")
	writeFile(t, filepath.Join(ws, "store/wt-admin/commondir"), "../../.git\n")
	gitDirLayout(t, filepath.Join(ws, "fixtures/bare.git"))
	for _, p := range []string{".kz/config.toml", ".claude/settings.json", "pkg/.claude/settings.json", ".mcp.json",
		".vscode/settings.json", ".bashrc", "sub/.envrc", ".codex/config.toml", ".gemini/settings.json"} {
		writeFile(t, filepath.Join(ws, p), "original")
	}
	writeFile(t, filepath.Join(f.home, ".bashrc"), "original")
	// Hard links to files outside the workspace, one alone and a
	// directory of many (kept read-only as a whole).
	outsideDir := filepath.Dir(ws) // the same file system, outside the workspace
	writeFile(t, filepath.Join(outsideDir, "victim"), "original")
	if err := os.Link(filepath.Join(outsideDir, "victim"), filepath.Join(ws, "src/innocent.txt")); err != nil {
		mkdir(t, filepath.Join(ws, "src"))
		if err := os.Link(filepath.Join(outsideDir, "victim"), filepath.Join(ws, "src/innocent.txt")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range manyLinks + 4 {
		p := filepath.Join(outsideDir, fmt.Sprintf("store%d", i))
		writeFile(t, p, "original")
		mkdir(t, filepath.Join(ws, "node_modules/.pnpm/pkg"))
		if err := os.Link(p, filepath.Join(ws, fmt.Sprintf("node_modules/.pnpm/pkg/f%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink with a protected name that leads to a directory inside.
	writeFile(t, filepath.Join(ws, "realagent/settings.json"), "original")
	if err := os.Symlink("realagent", filepath.Join(ws, ".cursor")); err != nil {
		t.Fatal(err)
	}

	targets := []struct{ name, path string }{
		{"top .git/config", ".git/config"},
		{"nested .git/config", "vendor/lib/.git/config"},
		{".git file", "wt/.git"},
		{"gitdir of a .git file", "store/wt-admin/config.worktree"},
		{"bare repository config", "fixtures/bare.git/config"},
		{".kz", ".kz/config.toml"},
		{".claude", ".claude/settings.json"},
		{"nested .claude", "pkg/.claude/settings.json"},
		{".mcp.json", ".mcp.json"},
		{".vscode", ".vscode/settings.json"},
		{".codex", ".codex/config.toml"},
		{".gemini", ".gemini/settings.json"},
		{"rc file in workspace", ".bashrc"},
		{".envrc", "sub/.envrc"},
		{"home .bashrc", filepath.Join(f.home, ".bashrc")},
		{"hard link", "src/innocent.txt"},
		{"directory of hard links", "node_modules/.pnpm/pkg/f3"},
		{"symlinked agent dir", ".cursor/settings.json"},
		{"symlink target", "realagent/settings.json"},
	}
	// Every way of writing, one after the other in one command per
	// target: any that gets through shows in the file.
	writes := []string{`echo pwned > %s`, `echo pwned >> %s`, `sed -i s/original/pwned/ %s`, `: > %s`,
		`mv %[1]s %[1]s.moved`, `rm -f %s`, `chmod 000 %s`}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			var script []string
			for _, w := range writes {
				script = append(script, fmt.Sprintf(w, shellQuote(tg.path)))
			}
			r := f.run(t, wsWrite, strings.Join(script, "; "))
			if r.setupErr != nil {
				t.Fatalf("setup: %v\n%s", r.setupErr, r.out)
			}
			p := tg.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(ws, p)
			}
			got, err := os.ReadFile(p)
			if err != nil || strings.Contains(string(got), "pwned") || len(got) == 0 {
				t.Errorf("%s changed (%v): %q\n%s", tg.path, err, got, r.out)
			}
		})
	}
	// New files inside protected directories, including the hooks git
	// would run.
	for _, p := range []string{".git/hooks/pre-commit", ".git/newfile", "vendor/lib/.git/hooks/post-checkout",
		"fixtures/bare.git/hooks/post-update", ".kz/commands/x.md", ".claude/agents/evil.md", "store/wt-admin/hooks/x",
		"node_modules/.pnpm/pkg/new"} {
		r := f.run(t, wsWrite, "mkdir -p "+shellQuote(filepath.Dir(p))+"; echo pwned > "+shellQuote(p))
		if exists(filepath.Join(ws, p)) {
			t.Errorf("created %s:\n%s", p, r.out)
		}
	}
	for _, p := range []string{"victim", "store3"} {
		if got := readFile(t, filepath.Join(outsideDir, p)); got != "original" {
			t.Errorf("outside inode %s changed through its hard link: %q", p, got)
		}
	}
	// The rest of the workspace is writable: new files, directories,
	// edits, removals.
	r := f.run(t, wsWrite, "echo ok > new.txt && mkdir -p a/b && echo ok > a/b/c && rm -f new.txt && echo ok > kept && cat kept")
	if r.code != 0 || r.out != "ok\n" {
		t.Errorf("ordinary writes failed: %+v", r)
	}
}

// testNewRepositoryProtectedFromTheNextCommand: a .git a command creates
// is protected from the next command on, as the search sees it.
func testNewRepositoryProtectedFromTheNextCommand(t *testing.T, rt route) {
	f := newRouteFixture(t, rt)
	for i, dir := range []string{"newrepo", "deep/down/newrepo", "newrepo2"} {
		r := f.run(t, wsWrite, "git init -q "+shellQuote(dir)+" && echo made")
		if r.code != 0 {
			t.Fatalf("git init: %+v", r)
		}
		cfg := filepath.Join(f.ws, dir, ".git/config")
		before := readFile(t, cfg)
		r = f.run(t, wsWrite, "echo '[core] fsmonitor = evil' >> "+shellQuote(cfg)+"; echo status=$?")
		if got := readFile(t, cfg); got != before {
			t.Errorf("%d: %s writable in the next command:\n%s", i, cfg, r.out)
		}
	}
}

// testGitCarveOut: with Git set a command may write the repository (git
// add and commit work) but not what makes git run code: config, hooks,
// info, in the top repository, a submodule's and a nested one.
func testGitCarveOut(t *testing.T, rt route) {
	f := newRouteFixture(t, rt)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = f.ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(f.ws, "a.txt"), "one\n")
	gitDirLayout(t, filepath.Join(f.ws, ".git/modules/sub"))
	gitDirLayout(t, filepath.Join(f.ws, "nested/.git"))
	ident := "git -c user.name=kz -c user.email=kz@example.com "
	r := f.run(t, wsWriteGt, ident+"add a.txt && "+ident+"commit -qm first && git log --oneline | wc -l")
	if r.code != 0 || strings.TrimSpace(r.out) != "1" {
		t.Fatalf("git commit under the Git carve-out: %+v", r)
	}
	// Without Git, the same commit is refused.
	writeFile(t, filepath.Join(f.ws, "b.txt"), "two\n")
	r = f.run(t, wsWrite, ident+"add b.txt && "+ident+"commit -qm second")
	if r.code == 0 {
		t.Errorf("git commit without the carve-out succeeded: %+v", r)
	}
	// A repository that reads config.worktree: a new one would be read
	// like config, so none may be created.
	git("config", "extensions.worktreeConfig", "true")
	for _, p := range []string{".git/config", ".git/config.worktree", ".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/info/exclude",
		".git/info/attributes", ".git/modules/sub/config", ".git/modules/sub/hooks/pre-commit", "nested/.git/config",
		"nested/.git/hooks/post-merge"} {
		abs := filepath.Join(f.ws, p)
		before, _ := os.ReadFile(abs)
		r := f.run(t, wsWriteGt, "echo '[core] hooksPath = /x' >> "+shellQuote(p)+"; echo status=$?")
		after, _ := os.ReadFile(abs)
		if string(after) != string(before) {
			t.Errorf("%s writable under the Git carve-out:\n%s", p, r.out)
		}
	}
	r = f.run(t, wsWriteGt, "git config core.fsmonitor evil; echo status=$?")
	if strings.Contains(readFile(t, filepath.Join(f.ws, ".git/config")), "evil") {
		t.Errorf("git config wrote .git/config: %s", r.out)
	}
}

// testGitCarveOutLinkedWorktree: a workspace that is a linked worktree
// keeps its repository outside; with Git a commit works there, and the
// repository's config and hooks stay read-only.
func testGitCarveOutLinkedWorktree(t *testing.T, rt route) {
	requireKind(t, KindBubblewrap)
	main := varTmpDir(t, "mainrepo")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(main, "init", "-q", "-b", "main")
	run(main, "-c", "user.name=kz", "-c", "user.email=kz@example.com", "commit", "-q", "--allow-empty", "-m", "root")
	wt := filepath.Join(varTmpDir(t, "wt"), "tree")
	run(main, "worktree", "add", "-q", "-b", "feature", wt)
	sb, err := New(Policy{Workspace: wt, Home: varTmpDir(t, "home")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	f := &fixture{ws: wt, sb: sb, route: rt}
	writeFile(t, filepath.Join(wt, "f.txt"), "x\n")
	ident := "git -c user.name=kz -c user.email=kz@example.com "
	r := f.run(t, wsWriteGt, ident+"add f.txt && "+ident+"commit -qm feat && git log --oneline | wc -l")
	if r.code != 0 || strings.TrimSpace(r.out) != "2" {
		t.Fatalf("commit in a linked worktree: %+v", r)
	}
	before := readFile(t, filepath.Join(main, ".git/config"))
	r = f.run(t, wsWriteGt, "echo evil >> "+shellQuote(filepath.Join(main, ".git/config"))+"; echo x > "+shellQuote(filepath.Join(main, ".git/hooks/pre-commit")))
	if readFile(t, filepath.Join(main, ".git/config")) != before || exists(filepath.Join(main, ".git/hooks/pre-commit")) {
		t.Errorf("the main repository's config or hooks were written:\n%s", r.out)
	}
	// Without Git, the repository outside stays read-only.
	r = f.run(t, wsWrite, ident+"commit -q --allow-empty -m again")
	if r.code == 0 {
		t.Errorf("commit without the carve-out: %+v", r)
	}
}

// TestForgottenScansStillProtect: after ForgetScans (kz shutting down
// calls it early) the scan caches are gone and their inotify descriptors
// closed, and a command started afterwards searches again: a repository
// made behind the sandbox's back, where no watch of the forgotten cache
// would report it, is still protected.
func TestForgottenScansStillProtect(t *testing.T) {
	forRoutes(t, func(t *testing.T, rt route) {
		f := newRouteFixture(t, rt)
		if r := f.run(t, wsWrite, "echo ok"); r.code != 0 {
			t.Fatalf("first command: %+v", r)
		}
		f.sb.mu.Lock()
		old := maps.Clone(f.sb.trees)
		f.sb.mu.Unlock()
		if len(old) == 0 {
			t.Fatal("the first command left no scan cache")
		}
		f.sb.ForgetScans()
		f.sb.mu.Lock()
		left := len(f.sb.trees)
		f.sb.mu.Unlock()
		if left != 0 {
			t.Fatalf("%d scan caches left after ForgetScans", left)
		}
		for root, tr := range old {
			if tr.inotify != -1 {
				t.Errorf("the inotify descriptor of %s is still open", root)
			}
		}
		gitDirLayout(t, filepath.Join(f.ws, "later/.git"))
		cfg := filepath.Join(f.ws, "later/.git/config")
		before := readFile(t, cfg)
		r := f.run(t, wsWrite, "echo '[core] fsmonitor = evil' >> "+shellQuote(cfg)+"; echo status=$?")
		if got := readFile(t, cfg); got != before {
			t.Errorf("%s writable after ForgetScans:\n%s", cfg, r.out)
		}
		f.sb.ForgetScans()
		f.sb.ForgetScans()
	})
}

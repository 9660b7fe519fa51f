//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kaizen-code/kz/internal/childenv"
)

// Prewarm searches the workspace ahead: the first command that confines
// a write then reads no directory of it, and finds the same protections.
func TestPrewarmSearchesTheWorkspaceAhead(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	for i := range 20 {
		writeFile(t, f.ws+"/src/pkg"+strconv.Itoa(i)+"/main.go", "package main\n")
	}
	mkdir(t, f.ws+"/.git/hooks")
	f.sb.Prewarm()
	f.sb.Prewarm()
	<-f.sb.warmDone
	f.sb.mu.Lock()
	tr := f.sb.trees[f.ws]
	f.sb.mu.Unlock()
	if tr == nil || tr.reads == 0 {
		t.Fatalf("no search of the workspace: %+v", tr)
	}
	reads := tr.reads
	spec := Spec{Argv: []string{"/bin/sh", "-c", "echo x > .git/hooks/pre-commit 2>/dev/null || echo refused"}, Dir: f.ws,
		Env: childenv.Build(os.Environ(), childenv.Spec{})}
	cmd, err := f.sb.Command(context.Background(), wsWriteGt, spec)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if serr := f.sb.SetupError(cmd); serr != nil {
		t.Fatal(serr)
	}
	if err != nil || string(out) != "refused\n" {
		t.Errorf("output %q, %v: the search's protections did not hold", out, err)
	}
	if tr.reads != reads {
		t.Errorf("the command read %d directories again after the prewarm", tr.reads-reads)
	}
}

// Close ends a Prewarm under way and leaves nothing running (TestMain
// checks for goroutines); a Prewarm after Close searches nothing.
func TestCloseEndsThePrewarm(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	for i := range 300 {
		writeFile(t, f.ws+"/d"+strconv.Itoa(i)+"/f.txt", "x")
	}
	f.sb.Prewarm()
	if err := f.sb.Close(); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, KindBubblewrap)
	if err := g.sb.Close(); err != nil {
		t.Fatal(err)
	}
	g.sb.Prewarm()
	g.sb.mu.Lock()
	defer g.sb.mu.Unlock()
	if len(g.sb.trees) != 0 {
		t.Error("a Prewarm after Close searched")
	}
}

// Under Policy.NoWatch (kz -p), Prewarm reads only what an earlier kz
// saved of the search: no directory is read or checked ahead. The first
// command's search then checks every directory (an lstat each), reads
// only what changed since, and still protects what appeared after the
// prewarm (a nested repository) and before it.
func TestPrewarmReadsTheSavedSearchOnly(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	for i := range 20 {
		writeFile(t, filepath.Join(f.ws, "src", "pkg"+strconv.Itoa(i), "main.go"), "package main\n")
	}
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	age(t, f.ws)
	f.sb = f.oneShot(t)
	if r := f.run(t, wsWrite, "true"); r.code != 0 || r.setupErr != nil {
		t.Fatalf("first command: %d %v %s", r.code, r.setupErr, r.out)
	}
	if err := f.sb.Close(); err != nil {
		t.Fatal(err)
	}

	f.sb = f.oneShot(t)
	t.Cleanup(func() { _ = f.sb.Close() })
	f.sb.Prewarm()
	f.sb.warmMu.Lock()
	done := f.sb.warmDone
	f.sb.warmMu.Unlock()
	if done == nil {
		t.Fatal("the prewarm did not start")
	}
	<-done
	f.sb.mu.Lock()
	tr := f.sb.trees[f.ws]
	f.sb.mu.Unlock()
	if tr == nil || len(tr.dirs) < 20 {
		t.Fatalf("the prewarm did not read the saved search: %+v", tr)
	}
	if tr.reads != 0 || tr.checks != 0 || tr.inotify >= 0 {
		t.Fatalf("the prewarm searched (%d read, %d checked, inotify %d): a one-shot kz's command checks every directory itself",
			tr.reads, tr.checks, tr.inotify)
	}
	gitDirLayout(t, filepath.Join(f.ws, "vendor", "dep", ".git"))
	r := f.run(t, wsWrite, "echo x > vendor/dep/.git/config; echo x > .git/config; echo y > src/pkg3/other.go")
	if r.setupErr != nil {
		t.Fatalf("setup: %v", r.setupErr)
	}
	for p, want := range map[string]string{
		filepath.Join(f.ws, "vendor/dep/.git/config"): "[core]\n\trepositoryformatversion = 0\n",
		filepath.Join(f.ws, ".git/config"):            "[core]\n\trepositoryformatversion = 0\n",
		filepath.Join(f.ws, "src/pkg3/other.go"):      "y\n",
	} {
		if got := readFile(t, p); got != want {
			t.Errorf("%s = %q, want %q (output %s)", p, got, want, r.out)
		}
	}
	if tr.checks < 20 {
		t.Errorf("the command's search checked %d directories, want every one of the saved search's", tr.checks)
	}
	// The workspace's root, which gained vendor, and the directories
	// of the new repository.
	if tr.reads == 0 || tr.reads > 10 {
		t.Errorf("the command's search read %d directories, want only those the new repository added or changed", tr.reads)
	}
}

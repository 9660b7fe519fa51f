//go:build linux

package sandbox

import (
	"context"
	"os"
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

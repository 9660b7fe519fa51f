//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
)

// BenchmarkSandboxOverhead times `bash -c true` under each profile of
// bubblewrap (a bwrap per command, and the session's sandbox server of
// the profile) and of Landlock, in a workspace shaped like a small
// repository, next to the same command unsandboxed. Each iteration also
// runs the unsandboxed command, outside the timer, so that besides ns/op
// it reports the medians of both and the median of their pairwise
// difference (overhead-median-ms), which holds when the machine's speed
// drifts during the run.
//
// The server's start is not in the loop: the first command, which starts
// it, is reported apart (server-start-ms), and so is the second
// (second-ms), which starts another server when the first bwrap created
// mount points in the workspace (a missing .git/info that the Git
// carve-out covers) and so changed the plan.
func BenchmarkSandboxOverhead(b *testing.B) {
	env := childenv.Build(os.Environ(), childenv.Spec{})
	bare := func() time.Duration {
		start := time.Now()
		cmd := exec.Command("/bin/bash", "-c", "true")
		cmd.Env = env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	b.Run("unsandboxed", func(b *testing.B) {
		var ds []time.Duration
		for b.Loop() {
			ds = append(ds, bare())
		}
		b.ReportMetric(ms(median(ds)), "median-ms")
	})
	spec := Spec{Argv: []string{"/bin/bash", "-c", "true"}, Env: env}
	ctx := context.Background()
	// perCommand runs spec with Command; onServer with Cmd, which must
	// run it on a server.
	perCommand := func(b *testing.B, f *fixture, c engine.Confinement) {
		cmd, err := f.sb.Command(ctx, c, spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if err := f.sb.SetupError(cmd); err != nil {
			b.Fatal(err)
		}
	}
	onServer := func(b *testing.B, f *fixture, c engine.Confinement) {
		cmd, err := f.sb.Cmd(ctx, c, spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if err := cmd.SetupError(); err != nil {
			b.Fatal(err)
		}
		if cmd.srv == nil {
			b.Fatal("the command did not run on a server")
		}
	}
	for _, m := range []struct {
		name   string
		kind   Kind
		run    func(*testing.B, *fixture, engine.Confinement)
		server bool
	}{{"bubblewrap", KindBubblewrap, perCommand, false}, {"bubblewrap-server", KindBubblewrap, onServer, true},
		{"landlock", KindLandlock, perCommand, false}} {
		for _, c := range []struct {
			name string
			conf engine.Confinement
		}{{"read-only", readOnly}, {"workspace-write", wsWrite}, {"workspace-write-git", wsWriteGt}} {
			b.Run(m.name+"/"+c.name, func(b *testing.B) {
				f := newFixture(b, m.kind)
				benchRepo(b, f.ws)
				timed := func() time.Duration {
					start := time.Now()
					m.run(b, f, c.conf)
					return time.Since(start)
				}
				var first, second time.Duration
				if m.server {
					first, second = timed(), timed()
				}
				var in, base, diff []time.Duration
				for b.Loop() {
					b.StopTimer()
					bd := bare()
					b.StartTimer()
					d := timed()
					in, base, diff = append(in, d), append(base, bd), append(diff, d-bd)
				}
				b.ReportMetric(ms(median(in)), "median-ms")
				b.ReportMetric(ms(median(base)), "unsandboxed-median-ms")
				b.ReportMetric(ms(median(diff)), "overhead-median-ms")
				if m.server {
					// After the loop: b.Loop deletes the metrics
					// reported before it.
					b.ReportMetric(ms(first), "server-start-ms")
					b.ReportMetric(ms(second), "second-ms")
				}
			})
		}
	}
}

// BenchmarkSandboxPrepare times Command alone (the search of the
// workspace and the arguments), without starting anything.
func BenchmarkSandboxPrepare(b *testing.B) {
	for _, c := range []struct {
		name string
		conf engine.Confinement
	}{{"read-only", readOnly}, {"workspace-write-git", wsWriteGt}} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, KindBubblewrap)
			benchRepo(b, f.ws)
			spec := Spec{Argv: []string{"/bin/bash", "-c", "true"}, Env: childenv.Build(os.Environ(), childenv.Spec{})}
			for b.Loop() {
				cmd, err := f.sb.Command(context.Background(), c.conf, spec)
				if err != nil {
					b.Fatal(err)
				}
				f.sb.pending[cmd].close()
				delete(f.sb.pending, cmd)
			}
		})
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchRepo fills dir like a small project: a git repository with 40
// directories of 10 files each, a nested repository, an agent config and
// a dotenv file.
func benchRepo(b *testing.B, dir string) {
	b.Helper()
	for i := range 40 {
		for j := range 10 {
			writeFile(b, dir+"/src/pkg"+strconv.Itoa(i)+"/file"+strconv.Itoa(j)+".go", "package x\n")
		}
	}
	for _, d := range []string{".git/objects", ".git/refs", ".git/hooks", "vendor/lib/.git/objects", "vendor/lib/.git/refs"} {
		mkdir(b, dir+"/"+d)
	}
	writeFile(b, dir+"/.git/HEAD", "ref: refs/heads/main\n")
	writeFile(b, dir+"/.git/config", "[core]\n")
	writeFile(b, dir+"/vendor/lib/.git/HEAD", "ref: refs/heads/main\n")
	writeFile(b, dir+"/vendor/lib/.git/config", "[core]\n")
	writeFile(b, dir+"/.claude/settings.json", "{}")
	writeFile(b, dir+"/.env", "SECRET=1")
}

// BenchmarkSearchLargeTree is the first search of a writable directory of
// 10,000 files in 1,100 directories (a session's first confined command
// there, such as an agent CLI's start): a new tree each op, inotify
// watches included, their release not.
func BenchmarkSearchLargeTree(b *testing.B) {
	dir := largeTree(b)
	var trees []*tree
	for b.Loop() {
		t := newTree(dir)
		trees = append(trees, t)
		f, err := t.search(context.Background(), maxDirs)
		if err != nil || f.dirs != 1011 {
			b.Fatalf("%d dirs, %v", f.dirs, err)
		}
	}
	b.StopTimer()
	for _, t := range trees {
		t.close()
	}
}

// BenchmarkSearchLargeTreeSaved is the first search of the directory of
// BenchmarkSearchLargeTree by a later kz process, which finds the search
// an earlier one saved (searchsave_linux.go): reading the saved file and
// an lstat of each directory, with an inotify watch added to each
// (watched, the TUI) or not (unwatched, kz -p: Policy.NoWatch); the
// watches' release is not in it.
func BenchmarkSearchLargeTreeSaved(b *testing.B) {
	dir := largeTree(b)
	// The directories' times are set back, out of the racy window, as
	// they are for any directory not changed in the last moments.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
	saveDir := filepath.Join(b.TempDir(), "sandbox")
	for _, watched := range []bool{true, false} {
		name := "unwatched"
		if watched {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) {
			s := &Sandbox{saveDir: saveDir, pol: Policy{NoWatch: !watched}}
			first := newTree(dir)
			if _, err := first.search(context.Background(), maxDirs); err != nil {
				b.Fatal(err)
			}
			s.saveTree(first)
			first.close()
			var trees []*tree
			for b.Loop() {
				t := s.newTree(dir)
				trees = append(trees, t)
				f, err := t.search(context.Background(), maxDirs)
				if err != nil || f.dirs != 1011 || t.reads != 0 {
					b.Fatalf("%d dirs, %d read, %v", f.dirs, t.reads, err)
				}
			}
			b.StopTimer()
			for _, t := range trees {
				t.close()
			}
		})
	}
}

// largeTree makes the directory of BenchmarkSearchLargeTree: 10,000
// files of 1 KB in 1,000 directories, and a .git.
func largeTree(b *testing.B) string {
	dir := b.TempDir()
	body := strings.Repeat("x", 1000)
	for d := range 1000 {
		sub := dir + "/pkg" + strconv.Itoa(d/100) + "/mod" + strconv.Itoa(d)
		for f := range 10 {
			writeFile(b, sub+"/file"+strconv.Itoa(f)+".go", body)
		}
	}
	mkdir(b, dir+"/.git/objects")
	return dir
}

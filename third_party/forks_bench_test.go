package thirdparty

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// BenchmarkForks measures what each fork in this directory saves at start:
// kz is built as go.mod says and once more without each fork's `replace`
// line (so with the upstream module from the module proxy), and every
// round runs each build once, in turn and in a rotating order, so that the
// machine's drift hits every build alike. It reports per build the median
// and the minimum, and per fork the median of its paired differences (the
// build without the fork minus the build with it), in ms:
//
//	make bench-forks
//
// which is KZ_BENCH_FORKS=1 go test -run '^$' -bench Forks -benchtime 20x
// ./third_party/ for 20 rounds. Without KZ_BENCH_FORKS it is skipped, so
// that `make bench` does not build kz three times. The first run downloads
// the upstream modules. A fork carried for start-up time must save at
// least 5 % of one of the two medians it measures (README.md); the rule
// was 3 ms when a start cost about 40 ms.
func BenchmarkForks(b *testing.B) {
	if os.Getenv("KZ_BENCH_FORKS") == "" {
		b.Skip("builds kz three times: run it with make bench-forks")
	}
	bins := buildVariants(b)
	b.Run("version", func(b *testing.B) {
		env := benchEnv(b)
		compare(b, bins, func(bin string) (time.Duration, error) {
			cmd := exec.Command(bin, "version")
			cmd.Env = env
			start := time.Now()
			err := cmd.Run()
			return time.Since(start), err
		})
	})
	b.Run("first-frame", func(b *testing.B) {
		env := benchEnv(b)
		dir := b.TempDir()
		data := filepath.Join(dir, "data")
		compare(b, bins, func(bin string) (time.Duration, error) {
			return firstFrame(bin, dir, env, "--demo", "--data-dir", data)
		})
	})
}

// forks are the modules this directory replaces, by the name the figures
// use.
var forks = []struct{ name, module string }{
	{"chroma", "github.com/alecthomas/chroma/v2"},
	{"glamour", "charm.land/glamour/v2"},
	{"genai", "google.golang.org/genai"},
	{"goldmark", "github.com/yuin/goldmark"},
	{"readability", "codeberg.org/readeck/go-readability/v2"},
}

// variant is one build of kz: "forks" as go.mod says, "no-X" without fork X.
type variant struct{ name, bin string }

// buildVariants builds kz with the release flags of `make build`, once
// with every fork and once without each, from copies of go.mod and go.sum
// (the module's own files are never changed).
func buildVariants(b *testing.B) []variant {
	b.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	build := func(name string, drop ...string) variant {
		mod := filepath.Join(dir, name+".mod")
		copyFile(b, filepath.Join(root, "go.mod"), mod)
		copyFile(b, filepath.Join(root, "go.sum"), filepath.Join(dir, name+".sum"))
		for _, m := range drop {
			run(b, root, "go", "mod", "edit", "-modfile="+mod, "-dropreplace="+m)
		}
		bin := filepath.Join(dir, "kz-"+name)
		// -mod=mod lets go add the upstream modules' sums to the copy.
		run(b, root, "go", "build", "-mod=mod", "-modfile="+mod, "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
		return variant{name, bin}
	}
	vs := []variant{build("forks")}
	for _, f := range forks {
		vs = append(vs, build("no-"+f.name, f.module))
	}
	return vs
}

// compare runs every variant once untimed, then once per round in a
// rotating order, and reports the figures described at BenchmarkForks.
func compare(b *testing.B, vs []variant, measure func(bin string) (time.Duration, error)) {
	times := make(map[string][]float64, len(vs))
	for _, v := range vs {
		if _, err := measure(v.bin); err != nil {
			b.Fatalf("%s: %v", v.name, err)
		}
	}
	round := 0
	for b.Loop() {
		for i := range vs {
			v := vs[(round+i)%len(vs)]
			d, err := measure(v.bin)
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			times[v.name] = append(times[v.name], float64(d.Microseconds())/1000)
		}
		round++
	}
	for _, v := range vs {
		b.ReportMetric(median(times[v.name]), v.name+"-median-ms")
		b.ReportMetric(slices.Min(times[v.name]), v.name+"-min-ms")
	}
	for _, f := range forks {
		with, without := times["forks"], times["no-"+f.name]
		diffs := make([]float64, len(with))
		for i := range with {
			diffs[i] = without[i] - with[i]
		}
		b.ReportMetric(median(diffs), f.name+"-saves-ms")
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// firstFrame starts kz with args in dir on a 120×40 pty and returns the
// time until the input prompt is on the screen; kz is then killed. The
// root package's process benchmarks read the first frame the same way.
func firstFrame(bin, dir string, env []string, args ...string) (time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = ptmx.Close()
	}()
	seen := make(chan time.Duration, 1)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if strings.Contains(ansi.Strip(out.String()), "Ask kz") {
				seen <- time.Since(start)
				// Keep draining so kz never blocks on a full pty.
				_, _ = io.Copy(io.Discard, ptmx)
				return
			}
			if err != nil {
				close(seen)
				return
			}
		}
	}()
	select {
	case d, ok := <-seen:
		if !ok {
			return 0, errors.New("kz exited before its first frame")
		}
		return d, nil
	case <-time.After(10 * time.Second):
		return 0, errors.New("no first frame within 10 s")
	}
}

// benchEnv is the environment of a measured kz: its own data, config and
// temporary directories, a plain xterm and no tmux, so that nothing outside
// kz is asked about the terminal.
func benchEnv(b *testing.B) []string {
	dir := b.TempDir()
	env := []string{"TERM=xterm-256color", "HOME=" + dir, "TMPDIR=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "LANG", "LC_ALL":
			env = append(env, kv)
		}
	}
	return env
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

func run(b *testing.B, dir, name string, args ...string) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

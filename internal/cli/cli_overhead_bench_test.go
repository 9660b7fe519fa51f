package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/runtimes/codex/codextest"
)

// BenchmarkCLIOverhead is the figure of issue 21 item 3: what kz adds in
// wall time over running an agent CLI alone on the same task. Each round
// runs, whole-process and in alternating order,
//
//	claude -p PROMPT                    and  kz -p PROMPT --runtime claude
//	codex exec PROMPT                   and  kz -p PROMPT --runtime codex
//	codex exec PROMPT (npm launcher)    and  kz -p PROMPT --runtime codex-npm
//
// for a text turn and a turn with one shell call, against the same fake
// model server on 127.0.0.1 (fakeapis_bench_test.go), in an empty git
// repository and in one of 10,000 files in 1,000 directories (…/repo),
// where what kz does per file (the sandbox's search of the workspace, the
// checkpoint of its state at the turn's start and end) shows. A figure is the time
// from exec to the exit of the process with its stdout read to the end:
// for the CLI alone its start, its requests to the fake and its exit; for
// kz also kz's own start, configuration, store, credential proxy, the
// CLI's protocol (Claude Code's stream-json, Codex's app-server), the
// gate's decision on the shell call and its sandbox, persisting every
// event, and kz's exit. Reported per case: min, median and max in ms of
// each, and the ratio of the medians (target: kz ≤ 1.05× the CLI, or ≤
// 20 ms more, whichever is larger).
//
// Each case runs in a folder of its own outside the system's temporary
// directory (projectDir), where a person's project is: kz's sandbox gives
// every command and CLI a private /tmp, and a workspace or home below
// /tmp leaves their mount points in it, which kz removes when it exits.
//
// For Claude Code and native Codex each round also runs the CLI "gated"
// (cli_gated_bench_test.go): driven as kz drives it (Claude Code with its
// PreToolUse hook and its permission prompt on stdio, Codex as its
// app-server with every command sent for approval), but with the
// benchmark as the host, answering every call at once, and no kz. That is
// the least any host that decides every tool call pays the CLI;
// gated-min-ms and gated-median-ms are its times, and kz-over-gated-ms is
// kz's median minus its median: what kz itself adds (its process,
// sandbox, store, checkpoints) to the protocol's own cost. With
// KZ_BASE_BIN naming another build, its runs alternate with the others,
// reported as base-kz-min-ms, base-kz-median-ms and kz-over-base-ms.
//
//	make bench-process   (which runs it with -benchtime 10x)
//
// The real CLIs come from KZ_CLAUDE_BIN and KZ_CODEX_BIN (the Makefile
// installs them); a case whose CLI is missing is skipped. codex-npm is
// Codex as `npm install -g` installs it, its Node launcher (bin/codex.js)
// on PATH, from KZ_CODEX_LAUNCHER: `codex exec` pays for Node's start
// there, and kz starts the native binary the launcher would run
// (runtimes/codex/launcher.go).
func BenchmarkCLIOverhead(b *testing.B) {
	b.Logf("load average: %s", loadAverage())
	bin := releaseBinary(b)
	cloneBenchRepo := benchRepo(b)
	for _, cli := range []struct {
		name  string
		setup func(b *testing.B, dir string) (alone []string, kzSection string, env []string)
		// gated, when set, runs the CLI as kz drives it, the benchmark
		// being the host (claudeGated).
		gated func(bin, prompt, dir string, env []string) (time.Duration, error)
	}{
		{"claude", claudeSetup, claudeGated},
		{"codex", codexSetup, codexGated},
		{"codex-npm", codexNpmSetup, nil},
	} {
		for _, turn := range []struct{ name, prompt string }{
			{"text", "Say hello."},
			{"shell", "Please " + shellMarker + " and report."},
			{"text/repo", "Say hello."},
			{"shell/repo", "Please " + shellMarker + " and report."},
		} {
			b.Run(cli.name+"/"+turn.name, func(b *testing.B) {
				dir := projectDir(b)
				ws := filepath.Join(dir, "ws")
				mkdirs(b, filepath.Join(dir, "home"), filepath.Join(dir, "config", "kz"))
				if strings.HasSuffix(turn.name, "/repo") {
					cloneBenchRepo(b, ws)
				} else {
					mkdirs(b, ws)
					if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
						b.Fatalf("git init: %v\n%s", err, out)
					}
				}
				alone, section, env := cli.setup(b, dir)
				cfg := fmt.Sprintf("default_runtime = %q\n\n[runtimes.%s]\n%s", cli.name, cli.name, section)
				writeBenchFile(b, filepath.Join(dir, "config", "kz", "config.toml"), cfg)
				env = append(append(env, benchHome(dir)...), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
				run := func(args []string) (time.Duration, error) {
					cmd := exec.Command(args[0], args[1:]...)
					cmd.Dir, cmd.Env = ws, env
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					start := time.Now()
					err := cmd.Run()
					took := time.Since(start)
					if err == nil && !strings.Contains(out.String(), benchAnswer) {
						err = fmt.Errorf("no answer in the output")
					}
					if err != nil {
						return 0, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out.String())
					}
					return took, nil
				}
				viaKz := []string{bin, "-p", turn.prompt, "--runtime", cli.name, "--permission-mode", "yolo"}
				alone = slices.Clone(alone)
				alone[slices.Index(alone, promptArg)] = turn.prompt
				runners := []func() (time.Duration, error){
					func() (time.Duration, error) { return run(alone) },
					func() (time.Duration, error) { return run(viaKz) },
				}
				if cli.gated != nil {
					runners = append(runners, func() (time.Duration, error) { return cli.gated(alone[0], turn.prompt, ws, env) })
				}
				base := -1
				if other := os.Getenv("KZ_BASE_BIN"); other != "" {
					base = len(runners)
					viaBase := append([]string{other}, viaKz[1:]...)
					runners = append(runners, func() (time.Duration, error) { return run(viaBase) })
				}
				// One untimed run of each warms the page cache and
				// makes kz's store.
				for _, r := range runners {
					if _, err := r(); err != nil {
						b.Fatal(err)
					}
				}
				times := make([][]time.Duration, len(runners))
				round := 0
				for b.Loop() {
					for i := range runners {
						k := (round + i) % len(runners)
						d, err := runners[k]()
						if err != nil {
							b.Fatal(err)
						}
						times[k] = append(times[k], d)
					}
					round++
				}
				reportOverhead(b, cli.name, times[0], times[1])
				if cli.gated != nil {
					reportGated(b, times[2], times[1])
				}
				if base >= 0 {
					reportBase(b, times[base], times[1])
				}
			})
		}
	}
}

// projectDir makes a folder for one benchmark case outside the system's
// temporary directory, below the user's cache directory (or TMPDIR's
// folder when that is already outside /tmp), removed when the case ends.
func projectDir(b *testing.B) string {
	b.Helper()
	parent := os.TempDir()
	if parent == "/tmp" || strings.HasPrefix(parent, "/tmp/") {
		cache, err := os.UserCacheDir()
		if err != nil {
			b.Fatalf("a folder outside /tmp: %v", err)
		}
		parent = filepath.Join(cache, "kz-bench")
		if err := os.MkdirAll(parent, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp(parent, "cli-overhead-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// benchRepo makes, at its first call, a git repository of 10,000 files
// of about 1 KB in 1,000 directories in a temporary directory of b, and
// returns a function that clones it to a path.
func benchRepo(b *testing.B) func(b *testing.B, ws string) {
	dir := b.TempDir()
	made := sync.OnceValue(func() error {
		body := strings.Repeat("// a line of a source file in the benchmark's repository\n", 18)
		for d := range 1000 {
			sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d/100), fmt.Sprintf("mod%03d", d))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
			for f := range 10 {
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%d.go", f)), []byte(body), 0o644); err != nil {
					return err
				}
			}
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "bench"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git %s: %w\n%s", args[0], err, out)
			}
		}
		return nil
	})
	return func(b *testing.B, ws string) {
		b.Helper()
		if err := made(); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command("git", "clone", "-q", dir, ws).CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v\n%s", err, out)
		}
	}
}

// benchHome is the environment of a process run in a benchmark's folder
// dir: its home, config, state and cache directories and its TMPDIR
// there, and this process's PATH. The data directory is the caller's.
func benchHome(dir string) []string {
	return []string{"HOME=" + filepath.Join(dir, "home"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"TMPDIR=" + dir, "PATH=" + os.Getenv("PATH")}
}

// promptArg stands for the prompt in a CLI's command line.
const promptArg = "{prompt}"

// reportOverhead reports min, median and max of the CLI alone and of kz,
// and the ratio of their medians.
func reportOverhead(b *testing.B, name string, alone, kz []time.Duration) {
	if len(alone) == 0 || len(kz) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	stats := func(ts []time.Duration) (lo, med, hi float64) {
		s := slices.Clone(ts)
		slices.Sort(s)
		return ms(s[0]), ms(s[len(s)/2]), ms(s[len(s)-1])
	}
	aLo, aMed, aHi := stats(alone)
	kLo, kMed, kHi := stats(kz)
	b.ReportMetric(aLo, "alone-min-ms")
	b.ReportMetric(aMed, "alone-median-ms")
	b.ReportMetric(aHi, "alone-max-ms")
	b.ReportMetric(kLo, "kz-min-ms")
	b.ReportMetric(kMed, "kz-median-ms")
	b.ReportMetric(kHi, "kz-max-ms")
	b.ReportMetric(kMed/aMed, "ratio")
	b.Logf("%s alone: min %.1f median %.1f max %.1f ms; via kz: min %.1f median %.1f max %.1f ms; kz/alone %.3f (+%.1f ms), %d rounds",
		name, aLo, aMed, aHi, kLo, kMed, kHi, kMed/aMed, kMed-aMed, len(alone))
}

// reportBase reports the runs of another build (KZ_BASE_BIN) beside
// this one's: base-kz-min-ms, base-kz-median-ms, and kz-over-base-ms, this
// build's median minus the other's.
func reportBase(b *testing.B, base, kz []time.Duration) {
	reportBeside(b, base, kz, "base-kz", "kz-over-base-ms")
}

// reportGated reports the gated runs (claudeGated) beside kz's: their
// min and median, and kz's median over theirs, which is kz's own share.
func reportGated(b *testing.B, gated, kz []time.Duration) {
	reportBeside(b, gated, kz, "gated", "kz-over-gated-ms")
}

// reportBeside reports the min and median of other's runs, as
// name-min-ms and name-median-ms, and kz's median minus theirs as over.
func reportBeside(b *testing.B, other, kz []time.Duration, name, over string) {
	if len(other) == 0 || len(kz) == 0 {
		return
	}
	o, k := slices.Clone(other), slices.Clone(kz)
	slices.Sort(o)
	slices.Sort(k)
	b.ReportMetric(ms(o[0]), name+"-min-ms")
	b.ReportMetric(ms(o[len(o)/2]), name+"-median-ms")
	b.ReportMetric(ms(k[len(k)/2])-ms(o[len(o)/2]), over)
}

// claudeSetup starts the fake Messages API and returns claude -p's
// command line, kz's section for the CLI and the environment both run
// with: the offline settings of the protocol notes (§3).
func claudeSetup(b *testing.B, dir string) ([]string, string, []string) {
	bin := os.Getenv("KZ_CLAUDE_BIN")
	if bin == "" {
		b.Skip("KZ_CLAUDE_BIN is not set: make bench-process installs Claude Code")
	}
	url := anthropicFake(b)
	env := []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-bench",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0",
		"CLAUDE_CONFIG_DIR=" + filepath.Join(dir, "home", ".claude")}
	// --allowedTools takes every word after it: the prompt comes first.
	alone := []string{bin, "-p", promptArg, "--allowedTools", "Bash"}
	return alone, fmt.Sprintf("kind = \"claude-code\"\ncommand = %q\n", bin), env
}

// codexSetup starts the fake Responses API, writes CODEX_HOME (a provider
// pointing at the fake and a model catalog made from the bundled one, by
// the helper the Codex integration tests use) and returns codex exec's
// command line, kz's section and the environment.
func codexSetup(b *testing.B, dir string) ([]string, string, []string) {
	bin := os.Getenv("KZ_CODEX_BIN")
	if bin == "" {
		b.Skip("KZ_CODEX_BIN is not set: make bench-process installs Codex")
	}
	return codexWith(b, dir, bin)
}

// codexNpmSetup is codexSetup with Codex's npm launcher as the CLI, for
// `codex exec` alone and for kz alike.
func codexNpmSetup(b *testing.B, dir string) ([]string, string, []string) {
	bin := os.Getenv("KZ_CODEX_LAUNCHER")
	if bin == "" {
		b.Skip("KZ_CODEX_LAUNCHER is not set: make bench-process installs Codex with npm")
	}
	return codexWith(b, dir, bin)
}

func codexWith(b *testing.B, dir, bin string) ([]string, string, []string) {
	url := responsesFake(b)
	home := filepath.Join(dir, "home")
	codexHome := filepath.Join(home, ".codex")
	codextest.Home(b, codextest.HomeOptions{Bin: bin, Home: home, CodexHome: codexHome, Workspace: filepath.Join(dir, "ws"),
		Provider: codextest.FakeProvider(url), Sandbox: "workspace-write"})
	env := []string{"CODEX_HOME=" + codexHome, codextest.KeyEnv + "=dummy"}
	alone := []string{bin, "exec", promptArg}
	section := fmt.Sprintf("kind = \"codex\"\ncommand = %q\nmodels = [%q]\nenv = { CODEX_HOME = %q, %s = \"dummy\" }\n", bin, codextest.Model, codexHome, codextest.KeyEnv)
	return alone, section, env
}

func mkdirs(b *testing.B, dirs ...string) {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
}

func writeBenchFile(b *testing.B, path, content string) {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
}

// loadAverage is /proc/loadavg's first three figures, or "unknown".
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

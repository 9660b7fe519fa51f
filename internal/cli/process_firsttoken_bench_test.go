package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// BenchmarkProcessFirstToken is how soon kz's own loop shows the model's
// first words in a repository of 10,000 files (benchRepo), whole-process:
// `kz -p PROMPT --output-format stream-json` against a fake Anthropic API
// on 127.0.0.1 that answers at once, timed from exec to the first
// text_delta line on kz's stdout (first-ms), and to kz's exit with its
// output read to the end (exit-ms). Both include kz's start, its config,
// store and sandbox, the turn's start (memory, environment, the
// checkpoint of the workspace's state) and the request; exit-ms also the
// turn's end (another checkpoint) and kz's exit.
//
// Two cases: "seen", the workspace's checkpoint baseline already in the
// store (one run before the timed ones), so the turn's start stats every
// file; "new", a fresh data directory every run, so the turn's start
// reads every file once, as the first turn in a repository does. With
// KZ_BASE_BIN another build's runs alternate with these, reported with
// the prefix "base-". Metrics: min and median of each, in ms.
func BenchmarkProcessFirstToken(b *testing.B) {
	b.Logf("load average: %s", loadAverage())
	builds := benchBuilds(releaseBinary(b))
	cloneBenchRepo := benchRepo(b)
	for _, fresh := range []bool{false, true} {
		name := "seen"
		if fresh {
			name = "new"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			ws := filepath.Join(dir, "ws")
			cloneBenchRepo(b, ws)
			fake := llmtest.New(b, llm.ProviderAnthropic)
			cfg := fmt.Sprintf("[runtimes.fake]\nkind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_FAKE_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", fake.URL)
			mkdirs(b, filepath.Join(dir, "home"), filepath.Join(dir, "config", "kz"))
			writeBenchFile(b, filepath.Join(dir, "config", "kz", "config.toml"), cfg)
			env := append(benchHome(dir), "KZ_FAKE_KEY=sk-bench")
			runs := 0
			run := func(build kzBuild) (first, exit time.Duration) {
				runs++
				data := filepath.Join(dir, "data-"+build.prefix)
				if fresh {
					data = filepath.Join(dir, fmt.Sprintf("data-%s%d", build.prefix, runs))
				}
				fake.Push(llmtest.Reply{Text: "Hello from the fake model.", Usage: engine.Usage{InputTokens: 10, OutputTokens: 6}})
				first, exit, err := firstToken(build.bin, ws, slices.Concat(env, []string{"XDG_DATA_HOME=" + data}))
				if err != nil {
					b.Fatalf("%s: %v", build.bin, err)
				}
				return first, exit
			}
			if !fresh {
				for _, build := range builds {
					run(build)
				}
			}
			firsts, exits := map[string][]float64{}, map[string][]float64{}
			for b.Loop() {
				for _, build := range builds {
					f, e := run(build)
					firsts[build.prefix] = append(firsts[build.prefix], ms(f))
					exits[build.prefix] = append(exits[build.prefix], ms(e))
				}
			}
			for _, build := range builds {
				b.ReportMetric(pct(firsts[build.prefix], 0), build.prefix+"first-min-ms")
				b.ReportMetric(pct(firsts[build.prefix], 50), build.prefix+"first-median-ms")
				b.ReportMetric(pct(exits[build.prefix], 0), build.prefix+"exit-min-ms")
				b.ReportMetric(pct(exits[build.prefix], 50), build.prefix+"exit-median-ms")
			}
		})
	}
}

// firstToken runs one `kz -p` in ws and returns the time from its exec to
// its first text_delta line, and to its exit.
func firstToken(bin, ws string, env []string) (first, exit time.Duration, err error) {
	cmd := exec.Command(bin, "-p", "Say hello.", "--runtime", "fake", "--model", "claude-sonnet-4-5", "--output-format", "stream-json")
	cmd.Dir, cmd.Env = ws, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if first == 0 && strings.Contains(sc.Text(), `"type":"text_delta"`) {
			first = time.Since(start)
		}
	}
	err = cmd.Wait()
	exit = time.Since(start)
	if err == nil && first == 0 {
		err = fmt.Errorf("no text_delta in the output")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return first, exit, nil
}

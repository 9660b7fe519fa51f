package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkProcessTextLag types a prompt into `kz --runtime scripted`
// on a 200×50 pty whose script sends textLagWords words as deltas
// textLagPause apart, as a model does that pauses between pieces (the
// first one a pause after the turn starts), then the final message. A
// word's lag runs from when it is due (the prompt's Enter plus its
// pauses: the scripted runtime keeps that schedule) to when it is on the
// screen: kz's start of the turn, the scripted runtime, the engine, the
// TUI's pacing and frame, Bubble Tea's diffing, the pty and the
// benchmark's own read. kz runs in an empty workspace, the script and
// the data directories beside it (benchWorkspace). Metrics: lag-p50-ms, lag-p90-ms
// and lag-max-ms over all words of all runs; with KZ_BASE_BIN, the same
// for another build, run by run alternately, prefixed "base-".
func BenchmarkProcessTextLag(b *testing.B) {
	builds := benchBuilds(releaseBinary(b))
	env := benchEnv(b)
	dir := b.TempDir()
	script := writeLagScript(b, dir)
	ws := benchWorkspace(b, dir)
	lags := map[string][]float64{}
	for b.Loop() {
		for _, build := range builds {
			got, err := textLags(build.bin, ws, env, script, filepath.Join(dir, "data-"+build.prefix))
			if err != nil {
				b.Fatalf("%s: %v", build.bin, err)
			}
			lags[build.prefix] = append(lags[build.prefix], got...)
		}
	}
	for _, build := range builds {
		l := lags[build.prefix]
		b.ReportMetric(pct(l, 50), build.prefix+"lag-p50-ms")
		b.ReportMetric(pct(l, 90), build.prefix+"lag-p90-ms")
		b.ReportMetric(pct(l, 100), build.prefix+"lag-max-ms")
	}
}

const (
	textLagWords = 8
	textLagPause = 300 * time.Millisecond
)

// lagWord is the i-th word the script sends: unlike any other text on
// the screen.
func lagWord(i int) string { return fmt.Sprintf("QZW%dXJ", i) }

func writeLagScript(b *testing.B, dir string) string {
	lines := []any{map[string]any{"type": "session_started"}, map[string]any{"cycle": true}}
	var all []string
	for i := range textLagWords {
		lines = append(lines, map[string]any{"type": "text_delta", "text": lagWord(i) + " ", "delay_ms": textLagPause.Milliseconds()})
		all = append(all, lagWord(i))
	}
	lines = append(lines,
		map[string]any{"type": "assistant_message", "text": strings.Join(all, " ")},
		map[string]any{"end_turn": true})
	return writeJSONLines(b, filepath.Join(dir, "lag.jsonl"), lines)
}

// textLags runs one turn of the lag script and returns each word's lag
// in milliseconds.
func textLags(bin, dir string, env []string, script, data string) ([]float64, error) {
	s, err := startPTY(bin, dir, env, "", "--runtime", "scripted", "--script", script, "--data-dir", data)
	if err != nil {
		return nil, err
	}
	defer s.kill()
	if err := s.waitFor("Ask kz", 20*time.Second); err != nil {
		return nil, err
	}
	s.settle(200*time.Millisecond, 10*time.Second)
	if err := s.write("go\r"); err != nil {
		return nil, err
	}
	start := time.Now()
	var lags []float64
	for i := range textLagWords {
		if err := s.waitFor(lagWord(i), 10*time.Second); err != nil {
			return nil, err
		}
		s.mu.Lock()
		seen := s.last
		s.mu.Unlock()
		due := start.Add(time.Duration(i+1) * textLagPause)
		lags = append(lags, ms(seen.Sub(due)))
	}
	s.settle(200*time.Millisecond, 10*time.Second)
	if _, err := s.quit(); err != nil {
		return nil, err
	}
	return lags, nil
}

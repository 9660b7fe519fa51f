package cli

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkProcessKeyAfterRest is what the TUI's trim at rest costs the
// person's next key: kz --demo on a 200×50 pty, left alone until it has
// come to rest and trimmed (restSettle after its first frame), then one
// key typed into the prompt. The key's latency runs from the write of
// the key to the pty until the screen settles (the last byte of the
// output burst that follows, the burst ending after pageQuiet of
// silence); first-key-ms is up to the first byte of the echo. A second
// key, typed once the screen is quiet, shows the same without the pages
// the first one mapped back. rest-rss-MB is kz's resident memory at rest,
// before the key; key-rss-MB after the two keys. Medians over the runs,
// one kz process each.
func BenchmarkProcessKeyAfterRest(b *testing.B) {
	bin := releaseBinary(b)
	evictFromPageCache(b, bin)
	env := benchEnv(b)
	dir := b.TempDir()
	var first, settled, second, restRSS, keyRSS []float64
	for b.Loop() {
		s, err := startPTY(bin, dir, env, "", "--demo", "--data-dir", filepath.Join(dir, "data"))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.waitFor("Ask kz", 30*time.Second); err != nil {
			s.kill()
			b.Fatal(err)
		}
		time.Sleep(restSettle)
		m, err := readResident(s.cmd.Process.Pid)
		if err != nil {
			s.kill()
			b.Fatal(err)
		}
		restRSS = append(restRSS, m.rss)
		for i, key := range []string{"h", "i"} {
			t0 := time.Now()
			if err := s.write(key); err != nil {
				s.kill()
				b.Fatal(err)
			}
			f, last := s.settleAfter(t0, pageQuiet, 30*time.Second)
			if i == 0 {
				first, settled = append(first, ms(f.Sub(t0))), append(settled, ms(last.Sub(t0)))
			} else {
				second = append(second, ms(last.Sub(t0)))
			}
		}
		if m, err = readResident(s.cmd.Process.Pid); err != nil {
			s.kill()
			b.Fatal(err)
		}
		keyRSS = append(keyRSS, m.rss)
		s.kill()
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(med(first), "first-key-ms")
	b.ReportMetric(med(settled), "key-settle-ms")
	b.ReportMetric(med(second), "second-key-settle-ms")
	b.ReportMetric(med(restRSS), "rest-rss-MB")
	b.ReportMetric(med(keyRSS), "key-rss-MB")
}

// restSettle is how long after its first frame the benchmark waits for
// kz to come to rest and trim: the TUI's rest delay (500 ms) and the
// trim itself, with room for a loaded machine.
const restSettle = 1500 * time.Millisecond

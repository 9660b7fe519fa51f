//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// countingBwrap puts first in PATH a bwrap that logs each call to a file
// and then runs the real one; it returns the log.
func countingBwrap(t *testing.T) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "calls")
	fakeBwrap(t, "echo \"$1\" >> "+log+"\nexec /usr/bin/bwrap \"$@\"\n")
	return log
}

func bwrapCalls(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestProbeCache: a working bubblewrap is probed once and then taken
// from the cache, without running bwrap, while the key holds; a changed
// bwrap (another mtime or size), another boot, or a cache file that is
// corrupt, not private or a symlink is probed again and the file
// rewritten with the right answer.
func TestProbeCache(t *testing.T) {
	requireKind(t, KindBubblewrap)
	log := countingBwrap(t)
	cache := filepath.Join(t.TempDir(), "kz", probeCacheName)

	first := probeCached(cache)
	if first.Kind != KindBubblewrap || !first.Full || first.BwrapVersion == "" || !first.disableUserns {
		t.Fatalf("first probe: %+v", first)
	}
	probed := bwrapCalls(t, log)
	if probed == 0 {
		t.Fatal("the first probe ran no bwrap")
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v", fi, err)
	}

	hit := probeCached(cache)
	if n := bwrapCalls(t, log); n != probed {
		t.Errorf("a cache hit ran bwrap %d more times", n-probed)
	}
	if hit != first {
		t.Errorf("cache hit %+v, want the probe's %+v", hit, first)
	}

	probeAgain := func(t *testing.T) {
		t.Helper()
		before := bwrapCalls(t, log)
		st := probeCached(cache)
		if bwrapCalls(t, log) == before {
			t.Error("probed nothing: the cache was trusted")
		}
		if st != first {
			t.Errorf("status %+v, want %+v", st, first)
		}
		if e, ok := readProbeCache(cache); !ok || e.Key.Format != probeCacheFormat {
			t.Errorf("the cache was not rewritten: %+v %v", e, ok)
		}
		if n := bwrapCalls(t, log); probeCached(cache) != first || bwrapCalls(t, log) != n {
			t.Error("the rewritten cache is not used")
		}
	}
	t.Run("bwrap changed", func(t *testing.T) {
		key, _ := currentProbeKey()
		later := time.Unix(0, key.MTime).Add(time.Minute)
		if err := os.Chtimes(key.Bwrap, later, later); err != nil {
			t.Fatal(err)
		}
		probeAgain(t)
	})
	t.Run("another boot", func(t *testing.T) {
		e, _ := readProbeCache(cache)
		e.Key.BootID = "00000000-0000-0000-0000-000000000000"
		if err := writeProbeCache(cache, e); err != nil {
			t.Fatal(err)
		}
		probeAgain(t)
	})
	t.Run("another format", func(t *testing.T) {
		e, _ := readProbeCache(cache)
		e.Key.Format = probeCacheFormat + 1
		if err := writeProbeCache(cache, e); err != nil {
			t.Fatal(err)
		}
		probeAgain(t)
	})
	t.Run("corrupt", func(t *testing.T) {
		if err := os.WriteFile(cache, []byte(`{"key":{"format":1,`), 0o600); err != nil {
			t.Fatal(err)
		}
		probeAgain(t)
	})
	t.Run("writable by others", func(t *testing.T) {
		if err := os.Chmod(cache, 0o622); err != nil {
			t.Fatal(err)
		}
		probeAgain(t)
		if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("rewritten with mode %v (%v)", fi.Mode(), err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		good, err := os.ReadFile(cache)
		if err != nil {
			t.Fatal(err)
		}
		elsewhere := filepath.Join(t.TempDir(), "planted.json")
		if err := os.WriteFile(elsewhere, good, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(cache); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, cache); err != nil {
			t.Fatal(err)
		}
		probeAgain(t)
		if fi, err := os.Lstat(cache); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the symlink was not replaced by a file: %v %v", fi, err)
		}
	})
}

// TestProbeCacheKeepsOnlyWorking: an answer weaker than bubblewrap
// (bwrap present but unable to create namespaces) is never cached, so
// the next start probes again; no cache path means no file.
func TestProbeCacheKeepsOnlyWorking(t *testing.T) {
	fakeBwrap(t, "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1")
	cache := filepath.Join(t.TempDir(), "kz", probeCacheName)
	st := probeCached(cache)
	if st.Kind == KindBubblewrap {
		t.Fatalf("a failing bwrap was taken: %+v", st)
	}
	if _, err := os.Lstat(cache); !os.IsNotExist(err) {
		t.Errorf("a failed probe was cached: %v", err)
	}
	if st := probeCached(""); st.Kind == KindBubblewrap {
		t.Errorf("without a cache: %+v", st)
	}
}

// TestStaleProbeCacheFailsSafe: a cached "bubblewrap works" that no
// longer holds (bwrap now fails to set up its namespaces, with the same
// key) makes commands fail with a setup error, as a bwrap that breaks
// during a session does: the command never runs, confined or not, and
// the cache is removed so that the next kz probes again.
func TestStaleProbeCacheFailsSafe(t *testing.T) {
	requireKind(t, KindBubblewrap)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cache := defaultProbeCache()
	fakeBwrap(t, "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1")
	key, ok := currentProbeKey()
	if !ok {
		t.Fatal("no probe key")
	}
	if err := writeProbeCache(cache, probeCacheEntry{Key: key, Version: "0.11.0", DisableUserns: true}); err != nil {
		t.Fatal(err)
	}
	st := probeCached(cache)
	if st.Kind != KindBubblewrap || st.Bwrap != key.Bwrap {
		t.Fatalf("the cache was not used: %+v", st)
	}
	ws := realDir(t, t.TempDir())
	sb, err := newWith(st, Policy{Workspace: ws, Home: varTmpDir(t, "home"), TempRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	marker := filepath.Join(ws, "ran")
	cmd, err := sb.Command(context.Background(), engine.Confinement{Profile: engine.ProfileWorkspaceWrite},
		Spec{Argv: []string{"/bin/sh", "-c", "echo ran > " + marker}})
	if err != nil {
		t.Fatal(err)
	}
	runErr := cmd.Run()
	setupErr := sb.SetupError(cmd)
	if runErr == nil || setupErr == nil || !strings.Contains(setupErr.Error(), "could not set up the sandbox") {
		t.Errorf("run %v, setup %v: want a setup error", runErr, setupErr)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the command ran: %v", err)
	}
	if _, err := os.Lstat(cache); !os.IsNotExist(err) {
		t.Errorf("the stale cache was kept: %v", err)
	}
}

// TestProbeCacheFileIsJSON pins the cache's layout to what the key says,
// so that a change to probeKey is a change of probeCacheFormat.
func TestProbeCacheFileIsJSON(t *testing.T) {
	cache := filepath.Join(t.TempDir(), probeCacheName)
	e := probeCacheEntry{Key: probeKey{Format: probeCacheFormat, Bwrap: "/usr/bin/bwrap", Size: 1, MTime: 2, BootID: "b", UID: 3}, Version: "0.9.0", DisableUserns: true}
	if err := writeProbeCache(cache, e); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	var fields struct {
		Key map[string]any `json:"key"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	want := []string{"format", "bwrap", "size", "mtime_ns", "boot_id", "uid"}
	for _, k := range want {
		if _, ok := fields.Key[k]; !ok {
			t.Errorf("key lacks %s: %s", k, raw)
		}
	}
	if len(fields.Key) != len(want) {
		t.Errorf("key fields %v, want %v: bump probeCacheFormat with the key", fields.Key, want)
	}
	if got, ok := readProbeCache(cache); !ok || got != e {
		t.Errorf("read back %+v %v", got, ok)
	}
}

//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// probeCacheFormat names the layout of the cache file and the probe that
// wrote it: a kz whose probe checks something else bumps it, and every
// older answer is probed again.
const probeCacheFormat = 1

// probeKey is what decides whether bubblewrap works here: the binary
// (its path, size and modification time: an upgrade changes them), the
// boot (a sysctl or AppArmor change that forbids user namespaces needs a
// reboot to persist) and the user whose namespaces bwrap creates.
type probeKey struct {
	Format int    `json:"format"`
	Bwrap  string `json:"bwrap"`
	Size   int64  `json:"size"`
	MTime  int64  `json:"mtime_ns"`
	BootID string `json:"boot_id"`
	UID    int    `json:"uid"`
}

// probeCacheEntry is the cache file: the key and what the probe found
// under it. Only a working bubblewrap is ever written.
type probeCacheEntry struct {
	Key           probeKey `json:"key"`
	Version       string   `json:"version"`
	DisableUserns bool     `json:"disable_userns"`
}

// probeCached is probe behind the cache file at path (empty: no cache).
//
// Only the answer "bubblewrap works" is kept, and it fails safe: a stale
// one makes kz run commands under bwrap, which then fails to set up the
// sandbox and is reported as a setup error (SetupError), exactly as a
// bwrap that stops working during a session is; nothing ever runs
// unconfined because of the cache. A weaker answer (Landlock, none) is
// never kept, so a machine where bwrap did not work is probed again at
// every start and picks bwrap up as soon as it works. A file that cannot
// be read, is not the user's own, or does not parse is ignored and
// replaced.
func probeCached(path string) Status {
	if path == "" {
		return probe()
	}
	key, ok := currentProbeKey()
	if !ok {
		return probe()
	}
	if e, ok := readProbeCache(path); ok && e.Key == key {
		abi, _ := landlockABI()
		st := bwrapStatus(key.Bwrap, e.Version, e.DisableUserns)
		st.LandlockABI = abi
		return st
	}
	st := probe()
	if st.Kind == KindBubblewrap && st.Bwrap == key.Bwrap {
		// Best effort: a cache that cannot be written costs the next
		// start one probe, nothing else.
		_ = writeProbeCache(path, probeCacheEntry{Key: key, Version: st.BwrapVersion, DisableUserns: st.disableUserns})
	}
	return st
}

// currentProbeKey reads the key of this machine now; ok is false when a
// part of it cannot be known (no bwrap, no boot id), and then nothing is
// cached.
func currentProbeKey() (probeKey, bool) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return probeKey{}, false
	}
	if path, err = filepath.Abs(path); err != nil {
		return probeKey{}, false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return probeKey{}, false
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	id := strings.TrimSpace(string(boot))
	if err != nil || id == "" {
		return probeKey{}, false
	}
	return probeKey{Format: probeCacheFormat, Bwrap: path, Size: fi.Size(), MTime: fi.ModTime().UnixNano(), BootID: id, UID: os.Getuid()}, true
}

// readProbeCache reads the cache file (readOwnedJSON).
func readProbeCache(path string) (probeCacheEntry, bool) {
	var e probeCacheEntry
	if !readOwnedJSON(path, 4<<10, &e) {
		return probeCacheEntry{}, false
	}
	return e, true
}

// writeProbeCache replaces the cache file atomically (writeJSONAtomic).
func writeProbeCache(path string, e probeCacheEntry) error {
	if err := writeJSONAtomic(path, e); err != nil {
		return fmt.Errorf("sandbox probe cache: %w", err)
	}
	return nil
}

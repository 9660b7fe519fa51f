package sandbox

import (
	"os"
	"path/filepath"
)

// probeCacheName is the name of the file, in the user's kz cache
// directory, that keeps a working bubblewrap's probe between runs.
const probeCacheName = "sandbox-probe.json"

// defaultProbeCache is the probe's cache file in the user's cache
// directory ($XDG_CACHE_HOME/kz), or "" when there is none.
func defaultProbeCache() string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(dir, "kz", probeCacheName)
}

// forgetProbeCache removes the cached answer after bubblewrap failed to
// set up a sandbox, so that the next kz probes again instead of trusting
// an answer the machine no longer gives.
func forgetProbeCache(path string) {
	if path != "" {
		_ = os.Remove(path)
	}
}

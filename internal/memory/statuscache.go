package memory

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// StatusCache runs a StatusFunc only when the repository may have changed
// since its last run: the output is given again while the repository's
// index and HEAD are the same files with the same size and modification
// time, and the caller's change count (the writes and commands kz saw,
// which change the working tree without touching the index) is the same.
// The zero StatusCache is ready to use and safe for concurrent use.
type StatusCache struct {
	mu  sync.Mutex
	key statusKey
	out []byte
	// valid says out may be given again.
	valid bool
}

// statusKey is what a git status output is kept for.
type statusKey struct {
	dir         string
	changes     uint64
	index, head fs.FileInfo
}

func (k statusKey) same(o statusKey) bool {
	return k.dir == o.dir && k.changes == o.changes && sameInfo(k.index, o.index) && sameInfo(k.head, o.head)
}

// Wrap returns status behind the cache. changes, when not nil, counts
// what may have changed the working tree since the session began; a new
// count runs status again.
func (c *StatusCache) Wrap(status StatusFunc, changes func() uint64) StatusFunc {
	return func(ctx context.Context, dir string) ([]byte, error) {
		k := statusKeyOf(dir, changes)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.valid && c.key.same(k) {
			return c.out, nil
		}
		start := time.Now()
		out, err := status(ctx, dir)
		if err != nil {
			c.valid = false
			return nil, err
		}
		// The index and HEAD are read before git runs: a change git
		// makes or races with shows as a new key at the next turn. An
		// index written within the file system's clock tick is not
		// trusted (see racyWindow).
		c.key, c.out = k, out
		c.valid = k.index != nil && !recent(k.index, start) && !recent(k.head, start)
		return out, nil
	}
}

// statusKeyOf reads the key of the repository at dir now.
func statusKeyOf(dir string, changes func() uint64) statusKey {
	k := statusKey{dir: dir}
	if changes != nil {
		k.changes = changes()
	}
	gitDir := GitDir(dir)
	if gitDir == "" {
		return k
	}
	k.index, _ = os.Stat(filepath.Join(gitDir, "index"))
	k.head, _ = os.Stat(filepath.Join(gitDir, "HEAD"))
	return k
}

func recent(fi fs.FileInfo, start time.Time) bool {
	return fi != nil && fi.ModTime().After(start.Add(-racyWindow))
}

// GitDir returns the git directory of the repository whose top is top:
// top/.git, or where the gitdir: line of a worktree's .git file points.
// It returns "" when there is none.
func GitDir(top string) string {
	gitDir := filepath.Join(top, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return ""
	}
	if !fi.Mode().IsRegular() {
		return gitDir
	}
	b, err := readSmall(gitDir)
	if err != nil {
		return ""
	}
	d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gitDir = strings.TrimSpace(d)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	return gitDir
}

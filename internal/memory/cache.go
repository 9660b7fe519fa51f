package memory

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
)

// Cache gives the memory files of the last load again while nothing the
// load read or looked for has changed, so that a turn in an unchanged
// workspace reads no file: a load records every path it looked at (each
// .git on the way to the repository root, each memory file name in each
// directory, present or not, each file it read, imports included), and
// the next load of the same Options only stats them. An edited, added,
// removed or replaced file, or a new import it names, is seen at the next
// turn. The zero Cache is ready to use and safe for concurrent use.
type Cache struct {
	mu   sync.Mutex
	opts Options
	res  Result
	deps []dep
	// valid says res may be given again (deps were recorded whole and
	// none was racy).
	valid bool
}

// dep is one path a load looked at and what it found there: info is nil
// when nothing was there. follow says the load followed a symlink at the
// path (it read the file) rather than looking at the path itself.
type dep struct {
	path   string
	follow bool
	info   fs.FileInfo
}

// racyWindow is how recent a modification time must be for kz not to
// trust it: a file system stamps times with a coarse clock (a few
// milliseconds on ext4, seconds on others), so a file written twice
// within one tick keeps its time, and with an unchanged size it would
// look unchanged. A load that saw such a file is not reused, as git does
// with the entries of its index that are racily clean.
const racyWindow = 2 * time.Second

// Load returns Load(ctx, o), reusing the last result when o is the same
// and nothing it depends on has changed since.
func (c *Cache) Load(ctx context.Context, o Options) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.valid && c.opts == o && unchanged(c.deps) {
		return c.res.clone()
	}
	start := time.Now()
	var deps []dep
	res := load(ctx, o, &deps)
	c.opts, c.res, c.deps = o, res, deps
	c.valid = ctx.Err() == nil && !racy(deps, start)
	return res.clone()
}

// clone copies the result's slices, so that a caller that changes its
// copy does not change the cached one.
func (r Result) clone() Result {
	return Result{Files: slices.Clone(r.Files), Problems: slices.Clone(r.Problems)}
}

// unchanged reports whether every dep still finds what it found.
func unchanged(deps []dep) bool {
	for _, d := range deps {
		var fi fs.FileInfo
		var err error
		if d.follow {
			fi, err = os.Stat(d.path)
		} else {
			fi, err = os.Lstat(d.path)
		}
		if err != nil {
			fi = nil
		}
		if !sameInfo(d.info, fi) {
			return false
		}
	}
	return true
}

// sameInfo reports whether two looks at a path found the same thing: both
// nothing, the same directory (its entries are deps of their own, and a
// .git directory changes with every commit), or the same file (device and
// inode) with the same type, size and modification time.
func sameInfo(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.IsDir() || b.IsDir() {
		return a.IsDir() && b.IsDir() && os.SameFile(a, b)
	}
	return os.SameFile(a, b) && a.Mode() == b.Mode() && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// racy reports whether a dep was modified too close to start to be told
// apart from a later change (see racyWindow).
func racy(deps []dep, start time.Time) bool {
	for _, d := range deps {
		if d.info != nil && !d.info.IsDir() && d.info.ModTime().After(start.Add(-racyWindow)) {
			return true
		}
	}
	return false
}

//go:build linux

package sandbox

// The search of a writable directory for what the profiles must treat
// apart: protected names (.git, .kz, agent configuration, shell startup
// files) that stay read-only, git directories (for the Git carve-out),
// files with more than one hard link (their inode may live outside), and
// credential files (hidden from read-only commands).
//
// Every command needs an up-to-date answer, so the search is cached per
// directory and keyed by the directory's inode, mtime and ctime: a
// directory's mtime changes whenever an entry is added, removed or renamed
// in it, so only changed directories are read again; the others cost one
// lstat each. A directory changed within the last moments is read again
// every time, since two changes within one clock tick leave the same mtime
// (git's "racily clean" problem). Nothing is skipped: node_modules, vendor
// or build directories can hold a .git like any other.
//
// Most commands change no directory (ls, cat, grep, git status), so the
// lstat of every directory is spared too where inotify can watch them all
// (up to maxWatches): a watch is added to each directory before it is
// checked or read, so any later change to its entries queues an event,
// and a search that finds the queue empty knows the whole tree is as it
// was. Any event, an overflowed queue, or a directory that cannot be
// watched sends the search down the lstat path.
//
// What the cache cannot see: the link count of a file going from one to
// more because someone outside the workspace linked it from elsewhere
// changes no directory of the workspace. A file that had one link when its
// directory was read stays writable until the directory changes. Links
// created inside the sandbox cannot reach an inode outside (link(2) does
// not cross the sandbox's mounts), and a link created in the workspace
// changes the directory it is created in.
//
// The search is bounded by MaxDirs directories per writable directory;
// past the bound Command refuses to run a command that needs it rather
// than run it with protections it could not find.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/tools/permission"
)

// A directory whose mtime is this close to the time it was read is read
// again next time. Linux file systems stamp times from the kernel's coarse
// clock (one tick, at most 10 ms) or finer, so fineRacy is ample where
// the file system keeps nanoseconds; elsewhere (FAT, some network file
// systems) a time may be rounded to one or two seconds.
const (
	fineRacy   = 50 * time.Millisecond
	coarseRacy = 2500 * time.Millisecond
)

// fineTimes are the file systems (statfs f_type) known to keep fine time
// stamps.
var fineTimes = map[int64]bool{
	unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
	unix.TMPFS_MAGIC: true, unix.OVERLAYFS_SUPER_MAGIC: true, unix.F2FS_SUPER_MAGIC: true,
	0x2fc12fc1: true, // zfs
}

// racyWindow returns the window for the file system holding dir.
func racyWindow(dir string) time.Duration {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil && fineTimes[int64(fs.Type)] {
		return fineRacy
	}
	return coarseRacy
}

// manyLinks is the number of hard-linked files in one directory past
// which the directory as a whole is kept read-only instead of each file:
// a pnpm node_modules or a `cp -al` tree would otherwise need a mount per
// file.
const manyLinks = 16

// markKind says what a found path is.
type markKind uint8

const (
	markProtected  markKind = iota // a protected name: read-only under workspace-write
	markGitDir                     // a git directory: read-only, or the Git carve-out
	markHardlink                   // a file with more than one link, or a directory of many
	markCredential                 // a credential file or directory: hidden from read-only commands
	markCover                      // kept read-only, created empty when missing (.git/hooks, .git/config.worktree)
)

// mark is one found path, absolute (symlinks resolved).
type mark struct {
	kind markKind
	path string
	dir  bool
}

// dirScan is what one read of a directory found.
type dirScan struct {
	ino          uint64
	mtime, ctime unix.Timespec
	// read is when the directory was read (Unix nanoseconds): a saved
	// search is trusted for maxSavedAge after it.
	read    int64
	racy    bool
	subdirs []string
	marks   []mark
}

// maxWatches bounds the inotify watches of one tree: watches count
// against the user's limit (fs.inotify.max_user_watches), which editors
// and file watchers share.
const maxWatches = 8192

// watchMask: the events that change what a directory holds.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF |
	unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// tree is the cache of one writable directory's search.
type tree struct {
	root string
	racy time.Duration       // racyWindow(root), found on the first search
	dirs map[string]*dirScan // by path relative to root
	// inotify is the tree's inotify descriptor (-1 when there is none);
	// wds maps each watched directory to its watch; watched says every
	// directory of the last search was watched, and last holds that
	// search's result.
	inotify int
	wds     map[string]int
	watched bool
	last    *findings
	// reads counts directories read (not taken from the cache) and
	// checks directories checked by lstat, for tests.
	reads, checks int
}

func newTree(root string) *tree { return newTreeWatching(root, true) }

// newTreeWatching is newTree, with the inotify watches only when watch
// is true (see Policy.NoWatch).
func newTreeWatching(root string, watch bool) *tree {
	t := &tree{root: root, dirs: map[string]*dirScan{}, wds: map[string]int{}, inotify: -1}
	// Only where the file system reports every change to inotify: a
	// network file system does not report other machines' changes.
	if watch && racyWindow(root) == fineRacy {
		if fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC); err == nil {
			t.inotify = fd
		}
	}
	return t
}

// close releases the inotify descriptor.
func (t *tree) close() {
	if t.inotify >= 0 {
		_ = unix.Close(t.inotify)
		t.inotify = -1
	}
}

// unchanged drains the inotify queue and reports whether it was empty.
func (t *tree) unchanged() bool {
	buf := make([]byte, 64<<10)
	empty := true
	for {
		n, err := unix.Read(t.inotify, buf)
		if n > 0 {
			empty = false
			continue
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		// EAGAIN: drained. Any other error: trust nothing.
		return empty && errors.Is(err, unix.EAGAIN)
	}
}

// watch adds (or finds) the watch of a directory; false when it cannot.
func (t *tree) watch(rel, abs string) bool {
	if t.inotify < 0 || len(t.wds) >= maxWatches {
		return false
	}
	wd, err := unix.InotifyAddWatch(t.inotify, abs, watchMask)
	if err != nil {
		return false
	}
	t.wds[rel] = wd
	return true
}

// unwatch removes the watches of directories the last search did not
// find, unless another directory (the same one, moved) holds the watch.
func (t *tree) unwatch(seen map[string]bool) {
	inUse := map[int]bool{}
	for rel, wd := range t.wds {
		if seen[rel] {
			inUse[wd] = true
		}
	}
	for rel, wd := range t.wds {
		if seen[rel] {
			continue
		}
		delete(t.wds, rel)
		if !inUse[wd] {
			_, _ = unix.InotifyRmWatch(t.inotify, uint32(wd))
		}
	}
}

// findings are the marks of a whole tree.
type findings struct {
	marks []mark
	dirs  int
}

// errTooLarge is returned past MaxDirs.
var errTooLarge = errors.New("too many directories")

// search brings the tree's cache up to date and returns every mark.
func (t *tree) search(ctx context.Context, maxDirs int) (findings, error) {
	if t.racy == 0 {
		t.racy = racyWindow(t.root)
	}
	if t.watched && t.last != nil && t.unchanged() {
		return *t.last, nil
	}
	t.last = nil
	watched := t.inotify >= 0
	var out findings
	seen := make(map[string]bool, len(t.dirs))
	// The tree is searched a level at a time: each directory of a level
	// is watched, then all are checked in parallel and the ones that
	// changed read (the reads are most of a first search: an lstat of
	// every file, for its links; the checks, an lstat of each directory,
	// are all of a search from a cache without watches), and the findings
	// are taken in order, so they come out as a search one directory at
	// a time would give them.
	level := []string{"."}
	for len(level) > 0 {
		if err := ctx.Err(); err != nil {
			return findings{}, fmt.Errorf("search %s: %w", t.root, err)
		}
		if len(seen)+len(level) > maxDirs {
			return findings{}, fmt.Errorf("search %s: %w (more than %d)", t.root, errTooLarge, maxDirs)
		}
		dirs := make([]levelDir, len(level))
		for i, rel := range level {
			abs := t.root
			if rel != "." {
				abs = t.root + "/" + rel
			}
			dirs[i] = levelDir{rel: rel, abs: abs, ds: t.dirs[rel]}
			// The watch comes first: a change after it queues an event,
			// a change before it shows in the lstat or the read below.
			if watched && !t.watch(rel, abs) {
				watched = false
			}
		}
		t.checks += len(dirs)
		forEach(len(dirs), func(i int) {
			d := &dirs[i]
			if err := ctx.Err(); err != nil {
				d.read, d.err = true, fmt.Errorf("search %s: %w", t.root, err)
				return
			}
			var st unix.Stat_t
			if err := unix.Lstat(d.abs, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				// Gone since its parent was read (or replaced by a file
				// or link): nothing below it to protect.
				d.gone = true
				return
			}
			if ds := d.ds; ds == nil || ds.racy || ds.ino != st.Ino || ds.mtime != st.Mtim || ds.ctime != st.Ctim {
				d.read = true
				d.ds, d.err = scanDir(t.root, d.abs, t.racy)
			}
		})
		level = nil
		for _, d := range dirs {
			if d.gone {
				continue
			}
			if d.read {
				if d.err != nil {
					if errors.Is(d.err, fs.ErrNotExist) || errors.Is(d.err, unix.ENOTDIR) {
						continue
					}
					return findings{}, d.err
				}
				t.dirs[d.rel] = d.ds
				t.reads++
			}
			seen[d.rel] = true
			out.marks = append(out.marks, d.ds.marks...)
			for _, sub := range d.ds.subdirs {
				if d.rel == "." {
					level = append(level, sub)
				} else {
					level = append(level, d.rel+"/"+sub)
				}
			}
		}
	}
	for rel := range t.dirs {
		if !seen[rel] {
			delete(t.dirs, rel)
		}
	}
	if t.inotify >= 0 {
		t.unwatch(seen)
	}
	out.dirs = len(seen)
	t.watched = watched
	if watched {
		t.last = &out
	}
	return out, nil
}

// levelDir is one directory of a level of the search: gone says it is
// no directory now; read says its cached scan was stale, and ds and err
// are then the read's.
type levelDir struct {
	rel, abs   string
	ds         *dirScan
	gone, read bool
	err        error
}

// forEach calls f for 0..n-1 on as many goroutines as Go runs threads
// (GOMAXPROCS), and returns once every call has.
func forEach(n int, f func(int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

// scanDir reads one directory of the tree rooted at root.
func scanDir(root, abs string, window time.Duration) (*dirScan, error) {
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", abs, err)
	}
	f := os.NewFile(uintptr(fd), abs)
	defer func() { _ = f.Close() }()
	ds := &dirScan{}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("search %s: %w", abs, err)
	}
	ds.ino, ds.mtime, ds.ctime = st.Ino, st.Mtim, st.Ctim
	// The clock is read before the entries, so a change made while they
	// are read leaves an mtime inside the window.
	now := time.Now()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", abs, err)
	}
	ds.racy = now.Sub(time.Unix(st.Mtim.Unix())) < window
	ds.read = now.UnixNano()
	var links []mark
	var head, objects, refs bool
	for _, e := range ents {
		name := e.Name()
		lower := strings.ToLower(name)
		p := abs + "/" + name
		typ := e.Type()
		switch {
		case typ&fs.ModeSymlink != 0:
			// A link is followed by whoever writes through it; protect
			// or hide where it lands. A dangling one protects nothing.
			if !permission.IsProtectedName(name) && !permission.IsCredentialName(name) {
				continue
			}
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			fi, err := os.Stat(target)
			if err != nil {
				continue
			}
			if lower == ".git" && fi.IsDir() {
				ds.marks = append(ds.marks, mark{kind: markGitDir, path: target, dir: true})
			} else if permission.IsProtectedName(name) {
				ds.marks = append(ds.marks, mark{kind: markProtected, path: target, dir: fi.IsDir()})
			}
			if permission.IsCredentialName(name) {
				ds.marks = append(ds.marks, mark{kind: markCredential, path: target, dir: fi.IsDir()})
			}
		case typ.IsDir():
			switch lower {
			case "head":
			case "objects":
				objects = true
			case "refs":
				refs = true
			}
			if lower == ".git" {
				// A git directory is searched only for its carve-out,
				// when a command is built; its objects are not
				// searched for hard links (git never rewrites one).
				ds.marks = append(ds.marks, mark{kind: markGitDir, path: p, dir: true})
				continue
			}
			if permission.IsProtectedName(name) {
				ds.marks = append(ds.marks, mark{kind: markProtected, path: p, dir: true})
			}
			if permission.IsCredentialName(name) {
				ds.marks = append(ds.marks, mark{kind: markCredential, path: p, dir: true})
			}
			ds.subdirs = append(ds.subdirs, name)
		case typ.IsRegular():
			if lower == "head" {
				head = true
			}
			var fst unix.Stat_t
			if err := unix.Fstatat(fd, name, &fst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue
			}
			if fst.Nlink > 1 {
				links = append(links, mark{kind: markHardlink, path: p})
			}
			if lower == ".git" {
				ds.marks = append(ds.marks, mark{kind: markProtected, path: p})
				if gd := gitdirOfFile(p); gd != "" && within(root, gd) {
					ds.marks = append(ds.marks, mark{kind: markGitDir, path: gd, dir: true})
				}
			} else if permission.IsProtectedName(name) {
				ds.marks = append(ds.marks, mark{kind: markProtected, path: p})
			}
			if permission.IsCredentialName(name) {
				ds.marks = append(ds.marks, mark{kind: markCredential, path: p})
			}
		}
	}
	if head && objects && refs {
		// A git directory under another name (a bare repository): its
		// config can run commands, so all of it stays read-only, and
		// there is nothing below it to search.
		return &dirScan{ino: ds.ino, mtime: ds.mtime, ctime: ds.ctime, racy: ds.racy, read: ds.read,
			marks: []mark{{kind: markProtected, path: abs, dir: true}}}, nil
	}
	if len(links) > manyLinks {
		links = []mark{{kind: markHardlink, path: abs, dir: true}}
	}
	ds.marks = append(ds.marks, links...)
	return ds, nil
}

// gitdirOfFile reads "gitdir: X" from a .git file (worktrees, submodules)
// and returns X resolved, or "".
func gitdirOfFile(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	line, _ := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(p), gd)
	}
	r, err := filepath.EvalSymlinks(gd)
	if err != nil {
		return ""
	}
	return r
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/tools/workspace"
)

// FileStat is what a workspace scan sees of one regular file: enough to
// tell, without reading it, whether the file may have changed since an
// earlier scan. Inode and change time catch a rewrite that keeps the size
// and lands in the same modification tick (sed -i renames a new file in).
type FileStat struct {
	Size    int64       `json:"size"`
	MtimeNs int64       `json:"mtime_ns"`
	CtimeNs int64       `json:"ctime_ns"`
	Ino     uint64      `json:"ino"`
	Mode    fs.FileMode `json:"mode"`
	// Links is the file's number of names (hard links). It is no part of
	// the file's state (SameAs) and is not stored: a caller relying on a
	// change watcher needs it, since a write through a name in a
	// directory nobody watches is reported to no watch.
	Links uint64 `json:"-"`
}

// SameAs reports whether two stats describe the same file content as far
// as metadata can tell.
func (s FileStat) SameAs(o FileStat) bool {
	return s.Size == o.Size && s.MtimeNs == o.MtimeNs && s.CtimeNs == o.CtimeNs && s.Ino == o.Ino && s.Mode == o.Mode
}

// ErrScanTruncated is returned by ScanWorkspace, with every file up to the
// cap visited, when the workspace holds more files than the cap allows.
var ErrScanTruncated = errors.New("the workspace holds more files than the scan cap")

// ScanWorkspace calls visit with the workspace-relative slash path and the
// stat of every regular file of the workspace that git would not ignore:
// .git directories, symbolic links and whatever .gitignore files ignore are
// skipped. It reads no file content (only the .gitignore files), so that a
// scan after every tool call stays cheap. After maxFiles files (when
// positive) it stops and returns ErrScanTruncated.
//
// The scan is one stat per file, which is all its cost: directories are
// scanned by up to GOMAXPROCS workers at once. visit is called from those
// workers, one call at a time, in no particular order.
//
// Confinement is the walk's: the scan starts from the workspace's os.Root
// and every later open is an openat of one listed name with O_NOFOLLOW.
func ScanWorkspace(ctx context.Context, ws *workspace.Workspace, maxFiles int, visit func(rel string, st FileStat)) error {
	return ScanWorkspaceWith(ctx, ws, ScanOptions{MaxFiles: maxFiles}, visit)
}

// ScanOptions are what a scan may do besides ScanWorkspace's.
type ScanOptions struct {
	// MaxFiles, when positive, stops the scan after that many files with
	// ErrScanTruncated.
	MaxFiles int
	// Watch, when not nil, watches every directory the scan enters,
	// before listing it, so that it can name the files changed after the
	// scan (see ChangeWatcher). The caller calls Watch.FullScanStarted
	// before.
	Watch *ChangeWatcher
	// Skip holds workspace-relative slash paths the scan leaves out: a
	// directory there is neither entered nor watched, a file there is not
	// visited.
	Skip []string
}

// ScanWorkspaceWith is ScanWorkspace with options.
func ScanWorkspaceWith(ctx context.Context, ws *workspace.Workspace, opt ScanOptions, visit func(rel string, st FileStat)) error {
	top, err := ws.Root().Open(".")
	if err != nil {
		return fmt.Errorf("scan %s: %w", ws.Dir(), err)
	}
	s := &scanner{ctx: ctx, visit: visit, max: int64(opt.MaxFiles), watch: opt.Watch}
	if len(opt.Skip) > 0 {
		s.skip = make(map[string]bool, len(opt.Skip))
		for _, p := range opt.Skip {
			s.skip[p] = true
		}
	}
	s.cond = sync.NewCond(&s.mu)
	s.jobs = []scanJob{{dir: top, fd: int(top.Fd())}}
	workers := min(runtime.GOMAXPROCS(0), maxScanWorkers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(s.work)
	}
	wg.Wait()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("scan %s: %w", ws.Dir(), ctx.Err())
	case s.truncated.Load():
		return fmt.Errorf("scan %s: %w (%d)", ws.Dir(), ErrScanTruncated, opt.MaxFiles)
	}
	return nil
}

// maxScanWorkers bounds the goroutines of one scan.
const maxScanWorkers = 4

// scanner is one ScanWorkspace: a queue of directories to scan, shared
// by its workers. A worker that finds the queue empty waits while another
// is still scanning (it may queue more), and all stop once none is.
type scanner struct {
	ctx   context.Context
	visit func(string, FileStat)
	max   int64
	n     atomic.Int64
	// truncated is set once the cap is reached, and stops every worker.
	truncated atomic.Bool

	mu     sync.Mutex
	cond   *sync.Cond
	jobs   []scanJob
	active int
	// visitMu makes the calls of visit one at a time.
	visitMu sync.Mutex
	// watch, when not nil, watches every directory the scan enters.
	watch *ChangeWatcher
	// skip holds the paths the scan leaves out (ScanOptions.Skip).
	skip map[string]bool
}

// scanJob is one open directory to scan; the worker that scans it closes
// it.
type scanJob struct {
	dir    *os.File
	fd     int
	prefix string
	rules  []ignoreRule
	depth  int
}

// work scans directories from the queue until it is empty and no worker
// is scanning one.
func (s *scanner) work() {
	for {
		s.mu.Lock()
		for len(s.jobs) == 0 && s.active > 0 {
			s.cond.Wait()
		}
		if len(s.jobs) == 0 {
			s.mu.Unlock()
			return
		}
		j := s.jobs[len(s.jobs)-1]
		s.jobs = s.jobs[:len(s.jobs)-1]
		s.active++
		s.mu.Unlock()

		s.dir(j)
		_ = j.dir.Close()

		s.mu.Lock()
		s.active--
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// stopped reports whether the scan must stop.
func (s *scanner) stopped() bool { return s.truncated.Load() || s.ctx.Err() != nil }

// dir scans one open directory: its files are visited, its directories
// queued (or, once the scan stops, closed unscanned).
func (s *scanner) dir(j scanJob) {
	if s.stopped() {
		return
	}
	if s.watch != nil {
		s.watch.watchDir(j.prefix)
	}
	ents, err := j.dir.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return
	}
	rules := j.rules[:len(j.rules):len(j.rules)]
	// Most directories have no .gitignore: the listing says so, and the
	// open that would fail is spared (one a directory, 1,000 in a
	// repository of 10,000 files, at every scan).
	if slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == ".gitignore" }) {
		rules = append(rules, readIgnore(j.fd, j.prefix)...)
	}
	if s.watch != nil {
		s.watch.setRules(j.prefix, rules)
	}
	var st unix.Stat_t
	var subs []scanJob
	for _, e := range ents {
		name := e.Name()
		rel := name
		if j.prefix != "" {
			rel = j.prefix + "/" + name
		}
		if s.skip != nil && s.skip[rel] {
			continue
		}
		t := e.Type()
		switch {
		case t.IsDir():
			if name == ".git" || j.depth >= maxWalkDepth || ignored(rules, rel, true) {
				continue
			}
			fd, err := openat(j.fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NOCTTY)
			if err != nil {
				continue
			}
			subs = append(subs, scanJob{dir: newDirHandleFD(fd, rel).file, fd: fd, prefix: rel, rules: rules, depth: j.depth + 1})
		case t.IsRegular():
			if ignored(rules, rel, false) {
				continue
			}
			if err := unix.Fstatat(j.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			if s.max > 0 && s.n.Add(1) > s.max {
				s.truncated.Store(true)
				break
			}
			fst := FileStat{Size: st.Size, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(), Ino: st.Ino, Mode: fs.FileMode(st.Mode & 0o777),
				Links: uint64(st.Nlink)}
			s.visitMu.Lock()
			s.visit(rel, fst)
			s.visitMu.Unlock()
		}
		if s.stopped() {
			break
		}
	}
	if s.stopped() {
		for _, sub := range subs {
			_ = sub.dir.Close()
		}
		return
	}
	if len(subs) > 0 {
		s.mu.Lock()
		s.jobs = append(s.jobs, subs...)
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// StatFile is the stat of the workspace file rel as a scan sees it; ok is
// false when rel is not a regular file (gone, a directory, a link).
func StatFile(ws *workspace.Workspace, rel string) (st FileStat, ok bool, err error) {
	info, err := ws.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return FileStat{}, false, nil
	}
	if err != nil {
		return FileStat{}, false, err
	}
	sys, isStat := info.Sys().(*syscall.Stat_t)
	if !info.Mode().IsRegular() || !isStat {
		return FileStat{}, false, nil
	}
	return FileStat{Size: sys.Size, MtimeNs: statMtime(sys), CtimeNs: statCtime(sys), Ino: uint64(sys.Ino), Mode: fs.FileMode(sys.Mode & 0o777),
		Links: uint64(sys.Nlink)}, true, nil
}

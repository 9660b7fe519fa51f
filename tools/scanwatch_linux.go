//go:build linux

package tools

import (
	"encoding/binary"
	"errors"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/tools/workspace"
)

// ChangeWatcher follows, through inotify, the changes to the files of the
// directories a workspace scan entered, so that the scan after a tool call
// stats only the files something touched instead of every file (a stat
// scan of 10,000 files costs tens of milliseconds; the files one command
// touches, microseconds).
//
// It never decides alone: whenever it cannot name every changed file (a
// directory created, removed or renamed, a .gitignore changed, the event
// queue overflowed, a watch lost, or no watch could be added) Changes
// says so, and the caller scans the whole workspace, which also watches
// again every directory it enters. Changes that inotify does not report
// at all (a write through a shared memory mapping) are left to the full
// scans; the tracker runs one at every turn's start and end.
type ChangeWatcher struct {
	mu    sync.Mutex
	fd    int
	ws    *workspace.Workspace
	dirs  map[int]*watchedDir
	byRel map[string]int
	dirty map[string]bool
	// full says the next Changes must ask for a full scan.
	full   bool
	closed bool
	buf    []byte
}

type watchedDir struct {
	rel   string
	rules []ignoreRule
}

// watchMask is what the watcher listens to in each directory: every way
// a file's content, mode or existence changes.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// NewChangeWatcher returns a watcher of ws that watches nothing yet: the
// first Changes asks for a full scan, which adds the watches.
func NewChangeWatcher(ws *workspace.Workspace) (*ChangeWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &ChangeWatcher{fd: fd, ws: ws, dirs: map[int]*watchedDir{}, byRel: map[string]int{}, dirty: map[string]bool{}, full: true, buf: make([]byte, 64<<10)}, nil
}

// Changes returns the workspace-relative paths of the non-ignored files
// changed since the last call, or full = true when only a full scan can
// tell (then paths is nil). Asking for a full scan resets the watcher's
// record: the caller must run it with FullScanStarted first.
func (w *ChangeWatcher) Changes() (paths []string, full bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drainLocked()
	if w.full || w.closed {
		return nil, true
	}
	for p := range w.dirty {
		paths = append(paths, p)
	}
	clear(w.dirty)
	return paths, false
}

// FullScanStarted marks the start of a full scan: what happened before it
// is the scan's to see, and what happens during it stays queued for the
// next Changes (harmless when the scan saw it too).
func (w *ChangeWatcher) FullScanStarted() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drainLocked()
	clear(w.dirty)
	w.full = false
}

// Close releases the inotify descriptor.
func (w *ChangeWatcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return unix.Close(w.fd)
}

// watchDir adds a watch on the directory rel before the scan lists it, so
// that nothing changed after the listing goes unseen. A watch that cannot
// be added (the system's limit) makes every Changes ask for a full scan.
func (w *ChangeWatcher) watchDir(rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	dir := w.ws.Dir()
	if rel != "" {
		dir += "/" + rel
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		w.full = true
		return
	}
	if old, ok := w.byRel[rel]; ok && old != wd {
		delete(w.dirs, old)
	}
	w.byRel[rel] = wd
	if d, ok := w.dirs[wd]; ok && d.rel != rel {
		// The same directory reached by another name: a full scan decides.
		delete(w.byRel, d.rel)
	}
	w.dirs[wd] = &watchedDir{rel: rel}
}

// setRules records the ignore rules in force in the watched directory rel.
func (w *ChangeWatcher) setRules(rel string, rules []ignoreRule) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wd, ok := w.byRel[rel]; ok {
		if d := w.dirs[wd]; d != nil {
			d.rules = rules
		}
	}
}

// drainLocked reads every queued event.
func (w *ChangeWatcher) drainLocked() {
	if w.closed {
		return
	}
	buf := w.buf
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			// EAGAIN: the queue is empty. Any other error: nothing more
			// can be trusted.
			if err != nil && !errors.Is(err, unix.EAGAIN) {
				w.full = true
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			// struct inotify_event: wd, mask, cookie, len, then the
			// name, NUL-padded to len bytes.
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			if off+unix.SizeofInotifyEvent+nameLen > n {
				w.full = true
				return
			}
			name := ""
			if nameLen > 0 {
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
				for i, c := range raw {
					if c == 0 {
						raw = raw[:i]
						break
					}
				}
				name = string(raw)
			}
			off += unix.SizeofInotifyEvent + nameLen
			w.noteLocked(int(wd), mask, name)
		}
	}
}

// noteLocked folds one event in.
func (w *ChangeWatcher) noteLocked(wd int, mask uint32, name string) {
	switch {
	case mask&unix.IN_Q_OVERFLOW != 0,
		mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0,
		mask&unix.IN_ISDIR != 0,
		name == ".gitignore":
		w.full = true
		return
	}
	d := w.dirs[wd]
	if d == nil || name == "" {
		w.full = true
		return
	}
	rel := name
	if d.rel != "" {
		rel = d.rel + "/" + name
	}
	if ignored(d.rules, rel, false) {
		return
	}
	w.dirty[rel] = true
}

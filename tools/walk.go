package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/tools/workspace"
)

// walkFile is one regular file found by walk. dir stays open until every
// file of the directory is released, so a worker opens the file with one
// openat relative to its directory's descriptor.
//
// Confinement: the walk starts from a directory opened through the
// workspace's os.Root, and every later open is an openat of a single name
// component read from a directory listing (never "..", never containing
// "/"), with O_NOFOLLOW. No open can therefore leave the tree, even if a
// directory is swapped for a symlink during the walk: that open fails.
type walkFile struct {
	seq  int
	rel  string
	name string
	dir  *dirHandle
}

// read reads the whole file into buf (reused), refusing anything but a
// regular file of at most limit bytes. ok is false for a file to skip.
func (f walkFile) read(buf []byte, limit int64) (data []byte, out []byte, ok bool) {
	fd, err := openat(f.dir.fd, f.name, syscall.O_RDONLY|syscall.O_NOFOLLOW|nonblockFlags)
	if err != nil {
		return nil, buf, false
	}
	defer func() { _ = syscall.Close(fd) }()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > limit {
		return nil, buf, false
	}
	need := int(st.Size) + 1
	if cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	data = buf[:0]
	for len(data) < cap(data) {
		n, err := syscall.Read(fd, data[len(data):cap(data)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, false
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
		if int64(len(data)) >= st.Size {
			// The whole file as fstat saw it: skip the read that would
			// only report EOF (a file growing meanwhile is cut there).
			break
		}
	}
	return data, buf, true
}

// release gives back the file's reference on its directory.
func (f walkFile) release() { f.dir.release() }

// dirHandle is an open directory shared by the walker and the workers.
type dirHandle struct {
	file *os.File
	fd   int
	refs atomic.Int32
}

func newDirHandle(f *os.File) *dirHandle {
	return &dirHandle{file: f, fd: int(f.Fd())}
}

// newDirHandleFD wraps a directory descriptor the walker opened itself,
// without the extra fcntl calls of File.Fd.
func newDirHandleFD(fd int, name string) *dirHandle {
	return &dirHandle{file: os.NewFile(uintptr(fd), name), fd: fd}
}

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		_ = d.file.Close()
	}
}

// openat opens a single name relative to a directory descriptor.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// maxIgnoreFile bounds the .gitignore files read during a walk.
const maxIgnoreFile = 1 << 20

// maxWalkDepth bounds how deep a walk descends; each level holds one open
// directory, so a hostile tree cannot exhaust descriptors or the stack.
const maxWalkDepth = 100

// walker walks a workspace directory in sorted order, skipping .git,
// symlinks and what .gitignore files ignore.
type walker struct {
	ctx   context.Context
	seq   int
	visit func(walkFile) bool
	// keepDir, when set, decides whether to descend into a directory (the
	// read policy prunes denied ones).
	keepDir func(rel string) bool
}

// walk calls visit for each regular file under start, in sorted order,
// until visit returns false or ctx ends. visit owns a reference and must
// call release. start is the pinned path the gate judged; it is opened
// without following links (workspace.ErrChanged if one appeared since),
// and below it every open is an openat of one listed name with
// O_NOFOLLOW, so the walk never leaves the tree it was approved for.
func walk(ctx context.Context, env *Env, start workspace.Pinned, keepDir func(string) bool, visit func(walkFile) bool) error {
	w := &walker{ctx: ctx, visit: visit, keepDir: keepDir}
	ent, err := env.WS.OpenEntry(start)
	if errors.Is(err, workspace.ErrNotRegular) {
		// The workspace root itself: it has no parent entry.
		return w.walkDir(env, start, "")
	}
	if err != nil {
		return err
	}
	mode, err := ent.Mode()
	if err != nil {
		_ = ent.Close()
		return err
	}
	switch {
	case mode.IsDir():
		_ = ent.Close()
		return w.walkDir(env, start, start.Resolved())
	case mode.IsRegular():
		d := ent.DetachDir()
		rel := start.Resolved()
		h := newDirHandle(d)
		h.refs.Store(1)
		w.visit(walkFile{rel: rel, name: path.Base(rel), dir: h})
		return nil
	default:
		_ = ent.Close()
		// A FIFO opened for reading would block, a device could act.
		return fmt.Errorf("%s (%s): %w", displayPath(start.Rel()), mode.Type(), workspace.ErrNotRegular)
	}
}

// walkDir walks the pinned directory start; prefix is its resolved path
// ("" for the workspace root).
func (w *walker) walkDir(env *Env, start workspace.Pinned, prefix string) error {
	rules, err := ancestorRules(env, prefix)
	if err != nil {
		return err
	}
	df, err := env.WS.OpenDir(start)
	if err != nil {
		return err
	}
	w.dir(newDirHandle(df), prefix, rules, 0)
	return nil
}

// ancestorRules loads the .gitignore files of the workspace root and of
// every directory between it and dir (dir itself excluded: the walk reads
// its own). Each directory is opened with O_NOFOLLOW from its parent, so a
// link swapped in makes the walk fail rather than read rules elsewhere.
func ancestorRules(env *Env, dir string) ([]ignoreRule, error) {
	top, err := env.WS.Root().Open(".")
	if err != nil {
		return nil, err
	}
	if dir == "" {
		_ = top.Close()
		return nil, nil
	}
	fd := int(top.Fd())
	closeFd := func() { _ = top.Close() }
	rules := readIgnore(fd, "")
	cur := ""
	segs := splitSlash(dir)
	for _, seg := range segs[:len(segs)-1] {
		next, err := openat(fd, seg, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NOCTTY)
		closeFd()
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("open %s: %w", path.Join(cur, seg), workspace.ErrChanged)
		}
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path.Join(cur, seg), err)
		}
		fd = next
		closeFd = func() { _ = syscall.Close(next) }
		cur = path.Join(cur, seg)
		rules = append(rules, readIgnore(fd, cur)...)
	}
	closeFd()
	return rules, nil
}

func splitSlash(p string) []string {
	var out []string
	for p != "" && p != "." {
		d, f := path.Split(p)
		out = append(out, f)
		p = path.Clean(d)
		if p == "/" {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// readIgnore reads .gitignore in the directory dirfd, if it is a regular
// file.
func readIgnore(dirfd int, base string) []ignoreRule {
	d := &dirHandle{fd: dirfd}
	d.refs.Store(2) // never closes: the caller owns dirfd
	data, _, ok := walkFile{name: ".gitignore", dir: d}.read(nil, maxIgnoreFile)
	if !ok {
		return nil
	}
	return parseGitignore(base, string(data))
}

// dir walks one directory. It holds one reference on d while it lists, and
// gives each file one.
func (w *walker) dir(d *dirHandle, prefix string, rules []ignoreRule, depth int) bool {
	d.refs.Store(1)
	defer d.release()
	if w.ctx.Err() != nil {
		return false
	}
	ents, err := d.file.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return true
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	rules = append(rules[:len(rules):len(rules)], readIgnore(d.fd, prefix)...)
	for _, e := range ents {
		name := e.Name()
		rel := name
		if prefix != "" {
			rel = prefix + "/" + name
		}
		t := e.Type()
		switch {
		case t&fs.ModeSymlink != 0:
			continue
		case t.IsDir():
			if name == ".git" || depth >= maxWalkDepth || ignored(rules, rel, true) {
				continue
			}
			if w.keepDir != nil && !w.keepDir(rel) {
				continue
			}
			// Blocking mode: a directory is never polled, and os.NewFile
			// then skips registering it with the poller.
			fd, err := openat(d.fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NOCTTY)
			if err != nil {
				continue
			}
			if !w.dir(newDirHandleFD(fd, rel), rel, rules, depth+1) {
				return false
			}
		case t.IsRegular():
			if ignored(rules, rel, false) {
				continue
			}
			d.refs.Add(1)
			wf := walkFile{seq: w.seq, rel: rel, name: name, dir: d}
			w.seq++
			if !w.visit(wf) {
				return false
			}
		}
	}
	return true
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
// Confinement is the walk's: the scan starts from the workspace's os.Root
// and every later open is an openat of one listed name with O_NOFOLLOW.
func ScanWorkspace(ctx context.Context, ws *workspace.Workspace, maxFiles int, visit func(rel string, st FileStat)) error {
	top, err := ws.Root().Open(".")
	if err != nil {
		return fmt.Errorf("scan %s: %w", ws.Dir(), err)
	}
	s := &scanner{ctx: ctx, visit: visit, max: maxFiles}
	s.dir(top, int(top.Fd()), "", nil, 0)
	_ = top.Close()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("scan %s: %w", ws.Dir(), ctx.Err())
	case s.truncated:
		return fmt.Errorf("scan %s: %w (%d)", ws.Dir(), ErrScanTruncated, maxFiles)
	}
	return nil
}

// scanner is one ScanWorkspace.
type scanner struct {
	ctx       context.Context
	visit     func(string, FileStat)
	max, n    int
	truncated bool
}

// dirReader is the directory listing ScanWorkspace needs.
type dirReader interface {
	ReadDir(n int) ([]fs.DirEntry, error)
}

// dir scans one open directory (fd is its descriptor); it reports false
// once the scan must stop.
func (s *scanner) dir(d dirReader, fd int, prefix string, rules []ignoreRule, depth int) bool {
	if s.ctx.Err() != nil {
		return false
	}
	ents, err := d.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return true
	}
	rules = append(rules[:len(rules):len(rules)], readIgnore(fd, prefix)...)
	var st unix.Stat_t
	for _, e := range ents {
		name := e.Name()
		rel := name
		if prefix != "" {
			rel = prefix + "/" + name
		}
		t := e.Type()
		switch {
		case t.IsDir():
			if name == ".git" || depth >= maxWalkDepth || ignored(rules, rel, true) {
				continue
			}
			sub, err := openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NOCTTY)
			if err != nil {
				continue
			}
			h := newDirHandleFD(sub, rel)
			ok := s.dir(h.file, sub, rel, rules, depth+1)
			_ = h.file.Close()
			if !ok {
				return false
			}
		case t.IsRegular():
			if ignored(rules, rel, false) {
				continue
			}
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			if s.max > 0 && s.n >= s.max {
				s.truncated = true
				return false
			}
			s.n++
			s.visit(rel, FileStat{Size: st.Size, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(), Ino: st.Ino,
				Mode: fs.FileMode(st.Mode & 0o777)})
		}
	}
	return true
}

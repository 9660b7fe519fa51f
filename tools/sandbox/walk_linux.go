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
	"strings"
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
	markCover                      // a directory kept read-only, created empty when missing (.git/hooks)
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
	racy         bool
	subdirs      []string
	marks        []mark
}

// tree is the cache of one writable directory's search.
type tree struct {
	root string
	racy time.Duration       // racyWindow(root), found on the first search
	dirs map[string]*dirScan // by path relative to root
	// reads counts directories read (not taken from the cache), for
	// tests.
	reads int
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
	var out findings
	seen := make(map[string]bool, len(t.dirs))
	queue := []string{"."}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return findings{}, fmt.Errorf("search %s: %w", t.root, err)
		}
		rel := queue[0]
		queue = queue[1:]
		if len(seen) >= maxDirs {
			return findings{}, fmt.Errorf("search %s: %w (more than %d)", t.root, errTooLarge, maxDirs)
		}
		abs := t.root
		if rel != "." {
			abs = t.root + "/" + rel
		}
		var st unix.Stat_t
		if err := unix.Lstat(abs, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// Gone since its parent was read (or replaced by a file or
			// link): nothing below it to protect.
			continue
		}
		ds := t.dirs[rel]
		if ds == nil || ds.racy || ds.ino != st.Ino || ds.mtime != st.Mtim || ds.ctime != st.Ctim {
			var err error
			if ds, err = scanDir(t.root, abs, t.racy); err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
					continue
				}
				return findings{}, err
			}
			t.dirs[rel] = ds
			t.reads++
		}
		seen[rel] = true
		out.marks = append(out.marks, ds.marks...)
		for _, sub := range ds.subdirs {
			if rel == "." {
				queue = append(queue, sub)
			} else {
				queue = append(queue, rel+"/"+sub)
			}
		}
	}
	for rel := range t.dirs {
		if !seen[rel] {
			delete(t.dirs, rel)
		}
	}
	out.dirs = len(seen)
	return out, nil
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
		return &dirScan{ino: ds.ino, mtime: ds.mtime, ctime: ds.ctime, racy: ds.racy,
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

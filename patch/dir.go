package patch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/tools/workspace"
)

// The applier never writes by path. A path is judged once (Validate, Undo,
// RevertChange resolve it and ask the guard), and from then on every read,
// write and removal reaches it through directory handles opened one name
// at a time from the workspace root, never following a symbolic link (see
// pin.go). A name is resolved by the kernel only relative to a directory
// the applier holds open, so a directory swapped for a link after the
// judgement cannot move a write into .git/hooks or out of the workspace.
// DirFS and Dir are that handle-level access; *workspace.Workspace gets
// it through RootDirFS over its os.Root.

// Errors of the handle-level access. They are the workspace's sentinels, so
// a caller tests one error whichever tool refused.
var (
	// ErrChanged means a symbolic link or another directory now stands
	// where the judged path had a plain directory or file.
	ErrChanged = workspace.ErrChanged
	// ErrNotRegular means a FIFO, socket, device or directory stands where
	// a regular file is needed.
	ErrNotRegular = workspace.ErrNotRegular
	// ErrHardLink means a file has more than one hard link: its content
	// may belong to a file outside the workspace.
	ErrHardLink = workspace.ErrHardLink
)

// FileID identifies a file on one machine (device and inode).
type FileID struct{ Dev, Ino uint64 }

// Stat is what the applier needs to know about one directory entry; a
// symbolic link is described, never followed.
type Stat struct {
	Mode  fs.FileMode
	Size  int64
	Nlink uint64
	ID    FileID
}

// DirFS opens the workspace root as a Dir.
type DirFS interface {
	OpenRootDir() (Dir, error)
}

// Dir is an open directory of the workspace. Every name is a single path
// component resolved in this directory only, and no method follows a
// symbolic link: OpenDir and ReadFile refuse one with ErrChanged, Remove
// and Rename act on the link itself.
type Dir interface {
	// Stat describes the directory itself (its identity).
	Stat() (Stat, error)
	// Lstat describes the entry name; a missing one is fs.ErrNotExist.
	Lstat(name string) (Stat, error)
	// OpenDir opens the directory name.
	OpenDir(name string) (Dir, error)
	// Mkdir creates the directory name; an existing entry is fs.ErrExist.
	Mkdir(name string, perm fs.FileMode) error
	// ReadFile reads the regular file name, at most max bytes, without
	// blocking on a FIFO that appeared meanwhile.
	ReadFile(name string, max int64) ([]byte, Stat, error)
	// WriteTemp creates a new temporary file next to name holding data,
	// synced to disk, with exactly mode, and returns its name.
	WriteTemp(name string, data []byte, mode fs.FileMode) (string, error)
	// Rename renames from to to inside this directory, replacing to.
	Rename(from, to string) error
	// Remove removes the non-directory name.
	Remove(name string) error
	// RemoveDir removes the empty directory name.
	RemoveDir(name string) error
	// Names lists the directory's entries.
	Names() ([]string, error)
	// Sync makes the directory's entries durable.
	Sync() error
	Close() error
}

// RootDirFS is the DirFS of an os.Root, such as the workspace's.
func RootDirFS(root *os.Root) DirFS { return rootDirFS{root} }

type rootDirFS struct{ root *os.Root }

func (r rootDirFS) OpenRootDir() (Dir, error) {
	f, err := r.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("open the workspace root: %w", err)
	}
	return &osDir{f: f}, nil
}

// osDir is a Dir over an open directory descriptor; every call is an *at
// system call relative to it.
type osDir struct{ f *os.File }

func (d *osDir) fd() int { return int(d.f.Fd()) }

func (d *osDir) Stat() (Stat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(d.fd(), &st) }); err != nil {
		return Stat{}, &fs.PathError{Op: "stat", Path: d.f.Name(), Err: err}
	}
	return statOf(&st), nil
}

func (d *osDir) Lstat(name string) (Stat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return statOf(&st), nil
}

func (d *osDir) OpenDir(name string) (Dir, error) {
	fd, err := openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NOCTTY, 0)
	if err != nil {
		// O_NOFOLLOW on a link is ELOOP, O_DIRECTORY on a link ENOTDIR.
		// The name may have changed again since the open, so a link or a
		// directory there now means it was not what the open met: a link
		// then (or a directory replaced meanwhile), either way a change.
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link: %w", name, ErrChanged)
		}
		if errors.Is(err, unix.ENOTDIR) {
			if st, lerr := d.Lstat(name); lerr == nil && (st.Mode&fs.ModeSymlink != 0 || st.Mode.IsDir()) {
				return nil, fmt.Errorf("%s is a symbolic link: %w", name, ErrChanged)
			}
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &osDir{f: os.NewFile(uintptr(fd), name)}, nil
}

func (d *osDir) Mkdir(name string, perm fs.FileMode) error {
	if err := retry(func() error { return unix.Mkdirat(d.fd(), name, uint32(perm.Perm())) }); err != nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	return nil
}

func (d *osDir) ReadFile(name string, max int64) ([]byte, Stat, error) {
	st, err := d.Lstat(name)
	if err != nil {
		return nil, Stat{}, err
	}
	if err := checkRegular(name, st); err != nil {
		return nil, Stat{}, err
	}
	if st.Size > max {
		return nil, Stat{}, fmt.Errorf("%s: %d bytes, more than the limit of %d: %w", name, st.Size, max, workspace.ErrTooLarge)
	}
	// O_NONBLOCK: a FIFO swapped in after the Lstat is opened at once
	// instead of waiting for a writer, and then refused by its identity.
	fd, err := openat(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, Stat{}, fmt.Errorf("%s became a symbolic link: %w", name, ErrChanged)
		}
		return nil, Stat{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer func() { _ = f.Close() }()
	var fst unix.Stat_t
	if err := retry(func() error { return unix.Fstat(fd, &fst) }); err != nil {
		return nil, Stat{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if now := statOf(&fst); now.ID != st.ID {
		return nil, Stat{}, fmt.Errorf("%s was replaced while it was opened: %w", name, ErrChanged)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, Stat{}, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(len(data)) > max {
		return nil, Stat{}, fmt.Errorf("%s: more than %d bytes: %w", name, max, workspace.ErrTooLarge)
	}
	return data, st, nil
}

// tempPrefix starts a temporary file's name, as tools/workspace names its
// own, so removeOrphanTemps finds the leftovers of either.
const tempPrefix = ".kz-tmp-"

// tempStem is the part of a temporary name before its random suffix; long
// names are cut, as tools/workspace does, to stay under NAME_MAX.
func tempStem(name string) string {
	if len(name) > 100 {
		name = name[:100]
	}
	return tempPrefix + name + "-"
}

func (d *osDir) WriteTemp(name string, data []byte, mode fs.FileMode) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("temp name: %w", err)
	}
	tmp := tempStem(name) + hex.EncodeToString(rnd[:])
	// O_EXCL|O_NOFOLLOW: the file is new, so nothing planted under its
	// name (a link, a hard link) is written through.
	fd, err := openat(d.fd(), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NOCTTY, 0o600)
	if err != nil {
		return "", &fs.PathError{Op: "create", Path: tmp, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	fail := func(err error) (string, error) {
		_ = f.Close()
		_ = d.Remove(tmp)
		return "", &fs.PathError{Op: "write", Path: tmp, Err: err}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	// On the descriptor: a chmod by name could be raced. The umask does
	// not apply here, so the mode is exactly the one asked for.
	if err := f.Chmod(mode.Perm()); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = d.Remove(tmp)
		return "", &fs.PathError{Op: "close", Path: tmp, Err: err}
	}
	return tmp, nil
}

func (d *osDir) Rename(from, to string) error {
	if err := retry(func() error { return unix.Renameat(d.fd(), from, d.fd(), to) }); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

func (d *osDir) Remove(name string) error {
	if err := retry(func() error { return unix.Unlinkat(d.fd(), name, 0) }); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func (d *osDir) RemoveDir(name string) error {
	if err := retry(func() error { return unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR) }); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func (d *osDir) Names() ([]string, error) {
	// The handle may have been listed before; start from the beginning.
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return d.f.Readdirnames(-1)
}

func (d *osDir) Sync() error  { return d.f.Sync() }
func (d *osDir) Close() error { return d.f.Close() }

// checkRegular refuses anything but a regular file with one link: a link
// appeared since the path was resolved (resolved paths end in none), a
// FIFO or device could block or act when opened, and a hard link's content
// may be a file outside the workspace.
func checkRegular(name string, st Stat) error {
	switch {
	case st.Mode&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: %w", name, ErrChanged)
	case !st.Mode.IsRegular():
		return fmt.Errorf("%s is a %s, not a regular file: %w", name, typeName(st.Mode), ErrNotRegular)
	case st.Nlink > 1:
		return fmt.Errorf("%s has %d hard links: %w", name, st.Nlink, ErrHardLink)
	}
	return nil
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

func statOf(st *unix.Stat_t) Stat {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	default:
		mode |= fs.ModeDevice
	}
	// The conversions are there because the field types differ between
	// systems.
	return Stat{Mode: mode, Size: int64(st.Size), Nlink: uint64(st.Nlink),
		ID: FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}}
}

func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// retry repeats a system call interrupted by a signal.
func retry(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

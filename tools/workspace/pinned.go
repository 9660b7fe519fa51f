package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// A path is judged once and used once: the permission gate judges the
// resolved path of a call (Resolve follows every symbolic link, so the
// resolved path contains none), and the tool later opens exactly that
// path. Opening it again through os.Root would resolve it a second time,
// and a directory swapped for a link in between (`d` -> `.git/hooks`)
// would move the write there. So a resolved path is opened here one
// component at a time, each with O_NOFOLLOW, starting at the workspace's
// root descriptor: a link that appeared since the resolution makes the
// open fail with ErrChanged instead of being followed. Pin also records
// the identity (device and inode) of every directory on the path, so a
// directory replaced by another directory (two renames) is noticed too.

// ErrChanged means the path changed between the check and the use: a
// symbolic link, or another directory, now stands where the resolved path
// had a plain directory or file. Nothing was read or written.
var ErrChanged = errors.New("the path changed after it was checked (a symbolic link or another directory appeared there); nothing was read or written")

// fileID identifies a file on one machine. The conversions from
// unix.Stat_t (here and of Mode and Nlink elsewhere) are there because the
// field types differ between systems.
type fileID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) fileID {
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

// Pinned is a workspace path resolved once: the form the gate judges and
// the file tools act on. Its zero value is not valid; get one from Pin.
type Pinned struct {
	// rel is the clean workspace-relative path as it was named.
	rel string
	// resolved is rel with every symbolic link resolved; it names no link.
	resolved string
	// dirs are the identities of the directories along resolved that
	// existed when it was pinned, from the first component on (the
	// workspace root itself is held open by the os.Root and cannot move).
	dirs []fileID
}

// Rel returns the path as it was named, clean and workspace-relative.
func (p Pinned) Rel() string { return p.rel }

// Resolved returns the symlink-free workspace-relative path that is opened.
func (p Pinned) Resolved() string { return p.resolved }

// Pin validates and resolves p (see Rel and Resolve) and records the
// identity of every existing directory on the resolved path. Later
// operations on the Pinned value open that path without following any
// link and fail with ErrChanged if a link or another directory appeared.
func (w *Workspace) Pin(p string) (Pinned, error) {
	rel, err := w.Rel(p)
	if err != nil {
		return Pinned{}, err
	}
	res, err := w.Resolve(rel)
	if err != nil {
		return Pinned{}, err
	}
	pin := Pinned{rel: rel, resolved: res}
	d, err := w.rootDir()
	if err != nil {
		return Pinned{}, w.wrap("open", rel, err)
	}
	defer func() { _ = d.Close() }()
	for _, c := range splitRel(res) {
		next, err := stepDir(d, c)
		if err != nil {
			if errors.Is(err, ErrChanged) {
				return Pinned{}, fmt.Errorf("pin %q: %w", rel, err)
			}
			// A missing component, or the final regular file: the
			// directories above it are what the identities cover.
			break
		}
		id, err := fileIDOf(next)
		if err != nil {
			_ = next.Close()
			return Pinned{}, w.wrap("pin", rel, err)
		}
		pin.dirs = append(pin.dirs, id)
		_ = d.Close()
		d = next
	}
	return pin, nil
}

// rootDir opens the workspace root as a directory handle.
func (w *Workspace) rootDir() (*os.File, error) { return w.root.Open(".") }

// stepDir opens the directory name inside d without following a link. A
// link there is ErrChanged: the paths opened here are resolved, so a link
// can only be one that appeared since.
func stepDir(d *os.File, name string) (*os.File, error) {
	fd, err := openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NOCTTY)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			if isLinkAt(d, name) {
				return nil, fmt.Errorf("%s is now a symbolic link: %w", name, ErrChanged)
			}
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// isLinkAt reports whether name in d is a symbolic link.
func isLinkAt(d *os.File, name string) bool {
	var st unix.Stat_t
	return lstatAt(d, name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func lstatAt(d *os.File, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(int(d.Fd()), name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fileIDOf(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, err
	}
	return idOf(&st), nil
}

// openDirs opens the directories comps (a prefix of p's resolved path)
// without following links, checking each against the identity p recorded.
// With a non-zero mkdir, missing directories are made with that mode;
// without it the walk stops at the first missing one and missing holds the
// rest. A directory that existed when p was pinned and is gone now is
// ErrChanged.
func (w *Workspace) openDirs(p Pinned, comps []string, mkdir fs.FileMode) (d *os.File, missing []string, err error) {
	d, err = w.rootDir()
	if err != nil {
		return nil, nil, err
	}
	for i, c := range comps {
		next, err := stepDir(d, c)
		if errors.Is(err, fs.ErrNotExist) {
			if i < len(p.dirs) {
				_ = d.Close()
				return nil, nil, fmt.Errorf("%s was removed: %w (%w)", path.Join(comps[:i+1]...), ErrChanged, fs.ErrNotExist)
			}
			if mkdir == 0 {
				return d, comps[i:], nil
			}
			if err := mkdirat(d, c, mkdir); err != nil && !errors.Is(err, fs.ErrExist) {
				_ = d.Close()
				return nil, nil, err
			}
			next, err = stepDir(d, c)
		}
		if err != nil {
			_ = d.Close()
			return nil, nil, err
		}
		_ = d.Close()
		d = next
		if i < len(p.dirs) {
			id, err := fileIDOf(d)
			if err != nil {
				_ = d.Close()
				return nil, nil, err
			}
			if id != p.dirs[i] {
				_ = d.Close()
				return nil, nil, fmt.Errorf("%s is another directory now: %w", path.Join(comps[:i+1]...), ErrChanged)
			}
		}
	}
	return d, nil, nil
}

func mkdirat(d *os.File, name string, perm fs.FileMode) error {
	for {
		err := unix.Mkdirat(int(d.Fd()), name, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: name, Err: err}
		}
		return nil
	}
}

// OpenDir opens the pinned directory itself for reading its entries,
// without following links. The caller closes it.
func (w *Workspace) OpenDir(p Pinned) (*os.File, error) {
	d, missing, err := w.openDirs(p, splitRel(p.resolved), 0)
	if err != nil {
		return nil, w.wrap("open", p.rel, err)
	}
	if len(missing) > 0 {
		_ = d.Close()
		return nil, w.wrap("open", p.rel, fs.ErrNotExist)
	}
	return d, nil
}

// Entry is a pinned path's parent directory, held open, and the path's
// last name in it. Every operation of an Entry works relative to that one
// directory descriptor, so what it reads and what it replaces are the same
// directory entry. The caller closes it.
type Entry struct {
	w   *Workspace
	pin Pinned
	// dir is the deepest existing directory on the way to the parent.
	dir *os.File
	// missing are the parent directories below dir that do not exist
	// yet; Write creates them.
	missing []string
	name    string
}

// OpenEntry opens the parent directory of a pinned path without following
// links. The workspace root has no parent: it is ErrNotRegular.
func (w *Workspace) OpenEntry(p Pinned) (*Entry, error) {
	comps := splitRel(p.resolved)
	if len(comps) == 0 {
		return nil, fmt.Errorf("%q is the workspace directory: %w", p.rel, ErrNotRegular)
	}
	d, missing, err := w.openDirs(p, comps[:len(comps)-1], 0)
	if err != nil {
		return nil, w.wrap("open", p.rel, err)
	}
	return &Entry{w: w, pin: p, dir: d, missing: missing, name: comps[len(comps)-1]}, nil
}

// Close releases the directory handle.
func (e *Entry) Close() error { return e.dir.Close() }

// Name returns the entry's name in its directory.
func (e *Entry) Name() string { return e.name }

// DetachDir hands the parent directory handle to the caller, who closes
// it; the Entry must not be used afterwards. It is nil when the parent
// does not exist.
func (e *Entry) DetachDir() *os.File {
	if len(e.missing) > 0 {
		_ = e.dir.Close()
		return nil
	}
	d := e.dir
	e.dir = nil
	return d
}

// lstat reports the entry's own metadata (a link is not followed).
func (e *Entry) lstat(st *unix.Stat_t) error {
	if len(e.missing) > 0 {
		return &fs.PathError{Op: "lstat", Path: e.pin.rel, Err: fs.ErrNotExist}
	}
	if err := lstatAt(e.dir, e.name, st); err != nil {
		return &fs.PathError{Op: "lstat", Path: e.pin.rel, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		// Resolved paths end in no link, so this one appeared since.
		return fmt.Errorf("%s is now a symbolic link: %w", e.pin.rel, ErrChanged)
	}
	return nil
}

// Mode returns the entry's file type and permission bits without
// following a link and without opening it (a FIFO or device is never
// opened here).
func (e *Entry) Mode() (fs.FileMode, error) {
	var st unix.Stat_t
	if err := e.lstat(&st); err != nil {
		return 0, err
	}
	return unixMode(uint32(st.Mode)), nil
}

// Read reads the entry, a regular file of at most max bytes
// (DefaultMaxRead when max <= 0). A FIFO, socket, device or directory is
// ErrNotRegular and is never opened for a blocking read; a link is
// ErrChanged; a larger file is ErrTooLarge.
func (e *Entry) Read(max int64) ([]byte, fs.FileInfo, error) {
	if max <= 0 {
		max = DefaultMaxRead
	}
	rel := e.pin.rel
	var st unix.Stat_t
	if err := e.lstat(&st); err != nil {
		return nil, nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, fmt.Errorf("read %q (%s): %w", rel, unixMode(uint32(st.Mode)).Type(), ErrNotRegular)
	}
	if st.Size > max {
		return nil, nil, fmt.Errorf("read %q: %d bytes, limit %d: %w", rel, st.Size, max, ErrTooLarge)
	}
	// O_NONBLOCK: if the file was swapped for a FIFO after the lstat, the
	// open returns at once instead of waiting for a writer.
	fd, err := openat(int(e.dir.Fd()), e.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, nil, fmt.Errorf("read %q: now a symbolic link: %w", rel, ErrChanged)
		}
		return nil, nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer func() { _ = f.Close() }()
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	if idOf(&fst) != idOf(&st) {
		return nil, nil, fmt.Errorf("read %q: replaced while opening: %w", rel, ErrChanged)
	}
	info, err := f.Stat()
	if err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("read %q (%s): %w", rel, info.Mode().Type(), ErrNotRegular)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("read %q: more than %d bytes: %w", rel, max, ErrTooLarge)
	}
	return data, info, nil
}

// Write replaces the entry with data atomically: a temporary file in the
// same directory is written, fsynced, given the existing file's mode (perm
// for a new file, 0644 when perm is 0; setuid and setgid are dropped, as
// the kernel drops them when a file's content is written), renamed over
// the entry, and the directory is fsynced. An existing file with more than
// one hard link is ErrHardLink, a non-regular one ErrNotRegular, a link
// ErrChanged. Missing parent directories are created.
func (e *Entry) Write(data []byte, perm fs.FileMode) error {
	rel := e.pin.rel
	if len(e.missing) > 0 {
		for _, c := range e.missing {
			if err := mkdirat(e.dir, c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("write %q: %w", rel, err)
			}
			next, err := stepDir(e.dir, c)
			if err != nil {
				return fmt.Errorf("write %q: %w", rel, err)
			}
			_ = e.dir.Close()
			e.dir = next
		}
		e.missing = nil
	}
	mode, err := e.replaceMode(perm)
	if err != nil {
		return err
	}
	tmp, err := e.writeTemp(data, mode)
	if err != nil {
		return fmt.Errorf("write %q: %w", rel, err)
	}
	fail := func(err error) error {
		_ = unix.Unlinkat(int(e.dir.Fd()), tmp, 0)
		return fmt.Errorf("write %q: %w", rel, err)
	}
	// The directory is held open, so the rename lands in it whatever
	// happened to its path meanwhile; check that it is still the one the
	// pinned path names, right before the rename makes the write visible.
	if err := e.stillAtPath(); err != nil {
		return fail(err)
	}
	if err := renameat(e.dir, tmp, e.dir, e.name); err != nil {
		return fail(err)
	}
	if err := e.dir.Sync(); err != nil {
		return fmt.Errorf("write %q: sync directory: %w", rel, err)
	}
	return nil
}

// CheckReplace reports why Write would refuse to replace the entry
// (ErrNotRegular, ErrHardLink, ErrChanged), or nil, so a caller can refuse
// before it reads or snapshots a file it will not be allowed to write: the
// content behind a hard link may belong to a file outside the workspace.
func (e *Entry) CheckReplace() error {
	_, err := e.replaceMode(0)
	return err
}

// replaceMode returns the mode a replacement gets: the existing file's
// (without setuid and setgid, which the kernel also drops when a file's
// content is written), or perm (0644 when zero) for a new file.
func (e *Entry) replaceMode(perm fs.FileMode) (fs.FileMode, error) {
	rel := e.pin.rel
	mode := perm & (fs.ModePerm | fs.ModeSticky)
	if mode == 0 {
		mode = 0o644
	}
	var st unix.Stat_t
	switch err := e.lstat(&st); {
	case err == nil:
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return 0, fmt.Errorf("write %q (%s): %w", rel, unixMode(uint32(st.Mode)).Type(), ErrNotRegular)
		}
		if st.Nlink > 1 {
			return 0, fmt.Errorf("write %q: %d links: %w", rel, st.Nlink, ErrHardLink)
		}
		return unixMode(uint32(st.Mode)) & (fs.ModePerm | fs.ModeSticky), nil
	case errors.Is(err, fs.ErrNotExist):
		return mode, nil
	default:
		return 0, fmt.Errorf("write %q: %w", rel, err)
	}
}

// stillAtPath checks that the entry's directory is still reached by its
// path without links.
func (e *Entry) stillAtPath() error {
	comps := splitRel(e.pin.resolved)
	d, missing, err := e.w.openDirs(e.pin, comps[:len(comps)-1], 0)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if len(missing) > 0 {
		return fmt.Errorf("the directory of %s was removed: %w", e.pin.rel, ErrChanged)
	}
	now, err := fileIDOf(d)
	if err != nil {
		return err
	}
	held, err := fileIDOf(e.dir)
	if err != nil {
		return err
	}
	if now != held {
		return fmt.Errorf("the directory of %s was replaced: %w", e.pin.rel, ErrChanged)
	}
	return nil
}

// writeTemp creates, fills, fsyncs and chmods a fresh temporary file in
// the entry's directory and returns its name. O_EXCL|O_NOFOLLOW guarantee
// the file is new, so nothing else (a planted link, a hard link) is
// written through.
func (e *Entry) writeTemp(data []byte, mode fs.FileMode) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("temp name: %w", err)
	}
	base := e.name
	if len(base) > 100 {
		base = base[:100]
	}
	tmp := tempPrefix + base + "-" + hex.EncodeToString(rnd[:])
	var fd int
	var err error
	for {
		fd, err = unix.Openat(int(e.dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return "", &fs.PathError{Op: "create", Path: tmp, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	fail := func(err error) (string, error) {
		_ = f.Close()
		_ = unix.Unlinkat(int(e.dir.Fd()), tmp, 0)
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	// Fchmod on the open descriptor: a chmod by name could be raced.
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = unix.Unlinkat(int(e.dir.Fd()), tmp, 0)
		return "", err
	}
	return tmp, nil
}

func renameat(od *os.File, oname string, nd *os.File, nname string) error {
	for {
		err := unix.Renameat(int(od.Fd()), oname, int(nd.Fd()), nname)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: oname, New: nname, Err: err}
		}
		return nil
	}
}

// unixMode converts a stat mode to an fs.FileMode, as os does.
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

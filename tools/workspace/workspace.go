// Package workspace confines every file access of the tools to one
// directory tree.
//
// All access starts at an os.Root opened on the workspace directory. A
// path is resolved once (Resolve, Pin: every symbolic link followed, links
// that leave the tree refused), the permission gate judges that resolved
// path, and the operation then opens exactly it, one component at a time
// with O_NOFOLLOW from the root's descriptor (see pinned.go). A link
// swapped in between the judgement and the action (a directory replaced
// by a link to .git/hooks, to outside, to a credential) makes the
// operation fail with ErrChanged instead of being followed, and a
// directory replaced by another directory is noticed by its inode. The
// lexical checks (Rel) exist to give the model a clear error early.
//
// Facts this package relies on (see /work/shared/SECURITY.md):
//   - filepath.IsLocal accepts a name containing NUL, so control characters
//     are rejected before any syscall.
//   - A write through a hard link changes a file that may be outside the
//     root, so writes refuse a file with more than one link and always
//     replace the directory entry (temp file + rename) instead of writing
//     in place.
//   - os.Root refuses absolute symbolic links even when they point inside
//     the root, and follows in-root links on every later open, so Resolve
//     resolves links itself and operations open the resolved path without
//     following any.
//   - Opening a FIFO for reading blocks, and opening a device can act:
//     reads lstat first, open with O_NONBLOCK and re-check the opened file
//     is the one lstat saw.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Errors returned by Workspace methods; test with errors.Is.
var (
	// ErrOutside means the path leaves the workspace.
	ErrOutside = errors.New("path is outside the workspace")
	// ErrNotRegular means the path is a directory, FIFO, socket or device
	// where a regular file is needed.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge means a file is larger than the caller's limit.
	ErrTooLarge = errors.New("file is too large")
	// ErrHardLink means a write was refused because the file has more than
	// one hard link (one of them may be outside the workspace).
	ErrHardLink = errors.New("file has more than one hard link")
	// ErrInvalidPath means the path is empty or contains NUL or control
	// characters or invalid UTF-8.
	ErrInvalidPath = errors.New("invalid path")
)

// DefaultMaxRead bounds ReadFile when the caller passes max <= 0.
const DefaultMaxRead int64 = 256 << 20

// maxSymlinkHops bounds symbolic link resolution, like the kernel's ELOOP.
const maxSymlinkHops = 40

// tempPrefix starts the name of the temporary file of an atomic write.
const tempPrefix = ".kz-tmp-"

// Workspace is an open workspace directory. It is safe for concurrent use.
type Workspace struct {
	root *os.Root
	// dir is the absolute, symlink-resolved workspace directory.
	dir string
	// given is the absolute directory as the caller named it, before
	// symlink resolution; absolute model paths under either are accepted.
	given string
}

// Open opens dir as a workspace. dir is made absolute and its symbolic
// links are resolved, so Dir is canonical.
func Open(dir string) (*Workspace, error) {
	if err := validName(dir); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	return &Workspace{root: root, dir: real, given: abs}, nil
}

// Dir returns the absolute, symlink-resolved workspace directory.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Abs returns the absolute path of a workspace-relative path, for display
// and for a child process's working directory. It never opens anything.
func (w *Workspace) Abs(rel string) (string, error) {
	r, err := w.Rel(rel)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.dir, r), nil
}

// Rel validates a model-supplied path and returns it clean and relative to
// the workspace ("." for the workspace itself). NUL, control characters and
// invalid UTF-8 are ErrInvalidPath; an absolute path inside the workspace is
// converted; a path that leaves the workspace lexically is ErrOutside.
// Symbolic links are not looked at (see Resolve).
func (w *Workspace) Rel(p string) (string, error) {
	if err := validName(p); err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, base := range []string{w.dir, w.given} {
			r, err := filepath.Rel(base, c)
			if err == nil && (r == "." || filepath.IsLocal(r)) {
				return filepath.ToSlash(r), nil
			}
		}
		return "", fmt.Errorf("%q: %w", p, ErrOutside)
	}
	c := filepath.Clean(p)
	if c == "." {
		return ".", nil
	}
	if !filepath.IsLocal(c) {
		return "", fmt.Errorf("%q: %w", p, ErrOutside)
	}
	return filepath.ToSlash(c), nil
}

// CheckName rejects names that must never reach a syscall: empty names,
// NUL, control characters (newline, ESC, DEL, C1) and invalid UTF-8. Tools
// use it for names they print, too.
func CheckName(p string) error { return validName(p) }

// Root returns the workspace's os.Root for confined walks. The caller must
// not close it.
func (w *Workspace) Root() *os.Root { return w.root }

// validName rejects names that must never reach a syscall.
func validName(p string) error {
	if p == "" {
		return fmt.Errorf("empty path: %w", ErrInvalidPath)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("%q is not valid UTF-8: %w", p, ErrInvalidPath)
	}
	for _, r := range p {
		if r == 0 || unicode.IsControl(r) {
			return fmt.Errorf("%q contains control character %U: %w", p, r, ErrInvalidPath)
		}
	}
	return nil
}

// Resolve resolves the symbolic links of rel inside the workspace and
// returns the resolved workspace-relative path. The longest existing prefix
// is resolved; components after the first missing one are kept lexically,
// so the path of a file about to be created resolves too. A link (relative
// or absolute) that leads outside the workspace is ErrOutside. The
// resolved path is what the gate judges; the operations then open it
// without following links (Pin), which is the enforcement.
func (w *Workspace) Resolve(rel string) (string, error) {
	r, err := w.Rel(rel)
	if err != nil {
		return "", err
	}
	var resolved []string
	pending := splitRel(r)
	hops := 0
	missing := false
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(resolved) == 0 {
				return "", fmt.Errorf("%q: %w", rel, ErrOutside)
			}
			resolved = resolved[:len(resolved)-1]
			continue
		}
		cand := strings.Join(append(resolved, c), "/")
		if missing {
			resolved = append(resolved, c)
			continue
		}
		info, err := w.root.Lstat(cand)
		if errors.Is(err, fs.ErrNotExist) {
			missing = true
			resolved = append(resolved, c)
			continue
		}
		if err != nil {
			return "", w.wrap("resolve", rel, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			resolved = append(resolved, c)
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("resolve %q: too many levels of symbolic links", rel)
		}
		target, err := w.root.Readlink(cand)
		if err != nil {
			return "", w.wrap("resolve", rel, err)
		}
		if target == "" || strings.ContainsRune(target, 0) {
			return "", fmt.Errorf("resolve %q: bad link target: %w", rel, ErrInvalidPath)
		}
		if filepath.IsAbs(target) {
			tr, err := w.Rel(target)
			if err != nil {
				return "", fmt.Errorf("resolve %q: link %s -> %s: %w", rel, cand, target, ErrOutside)
			}
			resolved = resolved[:0]
			pending = append(splitRel(tr), pending...)
			continue
		}
		pending = append(splitRel(filepath.ToSlash(target)), pending...)
	}
	if len(resolved) == 0 {
		return ".", nil
	}
	return strings.Join(resolved, "/"), nil
}

func splitRel(r string) []string {
	if r == "." {
		return nil
	}
	return strings.Split(r, "/")
}

// Lstat returns the file information of rel without following a final
// symbolic link.
func (w *Workspace) Lstat(rel string) (fs.FileInfo, error) {
	r, err := w.Rel(rel)
	if err != nil {
		return nil, err
	}
	info, err := w.root.Lstat(r)
	if err != nil {
		return nil, w.wrap("lstat", rel, err)
	}
	return info, nil
}

// Stat returns the file information of rel, following symbolic links
// inside the workspace.
func (w *Workspace) Stat(rel string) (fs.FileInfo, error) {
	res, err := w.Resolve(rel)
	if err != nil {
		return nil, err
	}
	info, err := w.root.Lstat(res)
	if err != nil {
		return nil, w.wrap("stat", rel, err)
	}
	return info, nil
}

// ReadFile reads a regular file (following in-workspace symbolic links) of
// at most max bytes (DefaultMaxRead when max <= 0). FIFOs, sockets, devices
// and directories are ErrNotRegular and are never opened for a blocking
// read; a larger file is ErrTooLarge. The resolved path is opened without
// following links (see Pin), so a link swapped in meanwhile is ErrChanged.
func (w *Workspace) ReadFile(rel string, max int64) ([]byte, fs.FileInfo, error) {
	p, err := w.Pin(rel)
	if err != nil {
		return nil, nil, err
	}
	return w.ReadPinned(p, max)
}

// ReadPinned reads a pinned regular file, like ReadFile.
func (w *Workspace) ReadPinned(p Pinned, max int64) ([]byte, fs.FileInfo, error) {
	e, err := w.OpenEntry(p)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = e.Close() }()
	return e.Read(max)
}

// ReadDir lists a directory (following in-workspace symbolic links to it),
// sorted by name.
func (w *Workspace) ReadDir(rel string) ([]fs.DirEntry, error) {
	p, err := w.Pin(rel)
	if err != nil {
		return nil, err
	}
	return w.ReadDirPinned(p)
}

// ReadDirPinned lists a pinned directory, sorted by name.
func (w *Workspace) ReadDirPinned(p Pinned) ([]fs.DirEntry, error) {
	d, err := w.OpenDir(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, w.wrap("readdir", p.rel, err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// MkdirAll creates a directory and its missing parents inside the
// workspace (mode perm, 0755 when perm is 0), never through a link.
func (w *Workspace) MkdirAll(rel string, perm fs.FileMode) error {
	p, err := w.Pin(rel)
	if err != nil {
		return err
	}
	if perm == 0 {
		perm = 0o755
	}
	d, _, err := w.openDirs(p, splitRel(p.resolved), perm)
	if err != nil {
		return w.wrap("mkdir", rel, err)
	}
	return d.Close()
}

// WriteFile replaces rel with data atomically (see Entry.Write): a symbolic
// link inside the workspace is written through (its target is replaced,
// the link stays); a link leaving the workspace is ErrOutside; a file with
// more than one hard link is ErrHardLink; an existing non-regular file is
// ErrNotRegular. Missing parent directories are created.
func (w *Workspace) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	p, err := w.Pin(rel)
	if err != nil {
		return err
	}
	return w.WritePinned(p, data, perm)
}

// WritePinned replaces a pinned file, like WriteFile.
func (w *Workspace) WritePinned(p Pinned, data []byte, perm fs.FileMode) error {
	e, err := w.OpenEntry(p)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer func() { _ = e.Close() }()
	return e.Write(data, perm)
}

// parentEntry opens the directory holding rel's last name, resolving the
// links of the directories above it but not of the name itself, for the
// operations that act on a link rather than its target.
func (w *Workspace) parentEntry(op, rel string) (*Entry, error) {
	r, err := w.Rel(rel)
	if err != nil {
		return nil, err
	}
	if r == "." {
		return nil, fmt.Errorf("%s %q: refusing to %s the workspace: %w", op, rel, op, ErrInvalidPath)
	}
	dir, err := w.Pin(path.Dir(r))
	if err != nil {
		return nil, err
	}
	d, missing, err := w.openDirs(dir, splitRel(dir.resolved), 0)
	if err != nil {
		return nil, w.wrap(op, rel, err)
	}
	if len(missing) > 0 {
		_ = d.Close()
		return nil, w.wrap(op, rel, fs.ErrNotExist)
	}
	return &Entry{w: w, pin: Pinned{rel: r, resolved: path.Join(dir.resolved, path.Base(r)), dirs: dir.dirs}, dir: d, name: path.Base(r)}, nil
}

// Remove removes a file or an empty directory. A symbolic link is removed
// itself, never its target.
func (w *Workspace) Remove(rel string) error {
	e, err := w.parentEntry("remove", rel)
	if err != nil {
		return err
	}
	defer func() { _ = e.Close() }()
	var st unix.Stat_t
	flags := 0
	if lstatAt(e.dir, e.name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
	}
	for {
		err = unix.Unlinkat(int(e.dir.Fd()), e.name, flags)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return w.wrap("remove", rel, &fs.PathError{Op: "remove", Path: rel, Err: err})
	}
	return nil
}

// Rename renames oldRel to newRel inside the workspace, creating the
// missing parent directories of newRel. A symbolic link is renamed itself.
func (w *Workspace) Rename(oldRel, newRel string) error {
	// Both names are validated before either reaches a syscall.
	if _, err := w.Rel(newRel); err != nil {
		return err
	}
	o, err := w.parentEntry("rename", oldRel)
	if err != nil {
		return err
	}
	defer func() { _ = o.Close() }()
	n, err := w.Pin(newRel)
	if err != nil {
		return err
	}
	if n.resolved == "." {
		return fmt.Errorf("rename %q -> %q: %w", oldRel, newRel, ErrInvalidPath)
	}
	comps := splitRel(n.resolved)
	d, _, err := w.openDirs(n, comps[:len(comps)-1], 0o755)
	if err != nil {
		return w.wrap("rename", newRel, err)
	}
	defer func() { _ = d.Close() }()
	if err := renameat(o.dir, o.name, d, comps[len(comps)-1]); err != nil {
		return w.wrap("rename", oldRel, err)
	}
	return nil
}

// wrap adds the operation and path to err and marks os.Root's refusal to
// leave the root as ErrOutside. os does not export that error, so it is
// recognised by its text.
func (w *Workspace) wrap(op, rel string, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%s %q: %w (%w)", op, rel, ErrOutside, err)
	}
	return fmt.Errorf("%s %q: %w", op, rel, err)
}

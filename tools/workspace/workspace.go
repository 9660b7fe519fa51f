// Package workspace confines every file access of the tools to one
// directory tree.
//
// All access goes through an os.Root opened on the workspace directory, so
// a path that leaves the tree (through "..", an absolute path, or a symbolic
// link swapped in by a racing process) fails inside the kernel walk rather
// than in a lexical check that can be raced. The lexical checks here (Rel,
// Resolve) exist to give the model a clear error early; the os.Root is the
// enforcement.
//
// Facts this package relies on (see /work/shared/SECURITY.md):
//   - filepath.IsLocal accepts a name containing NUL, so control characters
//     are rejected before any syscall.
//   - os.Root writes through a hard link to a file outside the root, so
//     writes refuse a file with more than one link and always replace the
//     directory entry (temp file + rename) instead of writing in place.
//   - os.Root refuses absolute symbolic links even when they point inside
//     the root, so Resolve resolves links itself and operations run on the
//     resolved path.
//   - Opening a FIFO for reading blocks: reads Lstat first, open with
//     O_NONBLOCK and re-check the opened file with Fstat.
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
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
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
// or absolute) that leads outside the workspace is ErrOutside. Resolve is a
// check for clear errors and for protected-path rules on the real target;
// it is not the enforcement, which is the os.Root.
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
// read; a larger file is ErrTooLarge.
func (w *Workspace) ReadFile(rel string, max int64) ([]byte, fs.FileInfo, error) {
	if max <= 0 {
		max = DefaultMaxRead
	}
	res, err := w.Resolve(rel)
	if err != nil {
		return nil, nil, err
	}
	info, err := w.root.Lstat(res)
	if err != nil {
		return nil, nil, w.wrap("read", rel, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("read %q (%s): %w", rel, info.Mode().Type(), ErrNotRegular)
	}
	if info.Size() > max {
		return nil, nil, fmt.Errorf("read %q: %d bytes, limit %d: %w", rel, info.Size(), max, ErrTooLarge)
	}
	// O_NONBLOCK: if the file was swapped for a FIFO after the Lstat, the
	// open returns at once instead of waiting for a writer.
	f, err := w.root.OpenFile(res, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, w.wrap("read", rel, err)
	}
	defer func() { _ = f.Close() }()
	info, err = f.Stat()
	if err != nil {
		return nil, nil, w.wrap("read", rel, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("read %q (%s): %w", rel, info.Mode().Type(), ErrNotRegular)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, w.wrap("read", rel, err)
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("read %q: more than %d bytes: %w", rel, max, ErrTooLarge)
	}
	return data, info, nil
}

// ReadDir lists a directory (following in-workspace symbolic links to it),
// sorted by name.
func (w *Workspace) ReadDir(rel string) ([]fs.DirEntry, error) {
	res, err := w.Resolve(rel)
	if err != nil {
		return nil, err
	}
	ents, err := fs.ReadDir(w.root.FS(), res)
	if err != nil {
		return nil, w.wrap("readdir", rel, err)
	}
	return ents, nil
}

// OpenRoot opens a directory of the workspace as its own os.Root, for a
// walk that opens many files with single-component names. The returned root
// is confined to that directory; the caller closes it.
func (w *Workspace) OpenRoot(rel string) (*os.Root, error) {
	res, err := w.Resolve(rel)
	if err != nil {
		return nil, err
	}
	r, err := w.root.OpenRoot(res)
	if err != nil {
		return nil, w.wrap("open", rel, err)
	}
	return r, nil
}

// MkdirAll creates a directory and its missing parents inside the workspace.
func (w *Workspace) MkdirAll(rel string, perm fs.FileMode) error {
	res, err := w.Resolve(rel)
	if err != nil {
		return err
	}
	if res == "." {
		return nil
	}
	if perm == 0 {
		perm = 0o755
	}
	if err := w.root.MkdirAll(res, perm); err != nil {
		return w.wrap("mkdir", rel, err)
	}
	return nil
}

// WriteFile replaces rel with data atomically: a temporary file in the same
// directory is written, fsynced, given the existing file's mode (perm for a
// new file, 0644 when perm is 0), renamed over the target, and the directory
// is fsynced. A symbolic link inside the workspace is written through (its
// target is replaced, the link stays); a link leaving the workspace is
// ErrOutside; a file with more than one hard link is ErrHardLink; an
// existing non-regular file is ErrNotRegular. Missing parent directories
// are created.
func (w *Workspace) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	res, err := w.Resolve(rel)
	if err != nil {
		return err
	}
	if res == "." {
		return fmt.Errorf("write %q: %w", rel, ErrNotRegular)
	}
	mode := perm & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if mode == 0 {
		mode = 0o644
	}
	info, err := w.root.Lstat(res)
	switch {
	case err == nil:
		if !info.Mode().IsRegular() {
			return fmt.Errorf("write %q (%s): %w", rel, info.Mode().Type(), ErrNotRegular)
		}
		if nlink(info) > 1 {
			return fmt.Errorf("write %q: %d links: %w", rel, nlink(info), ErrHardLink)
		}
		mode = info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	case errors.Is(err, fs.ErrNotExist):
	default:
		return w.wrap("write", rel, err)
	}
	dir := path.Dir(res)
	if dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return w.wrap("write", rel, err)
		}
	}
	tmp, err := w.writeTemp(dir, path.Base(res), data, mode)
	if err != nil {
		return w.wrap("write", rel, err)
	}
	if err := w.root.Rename(tmp, res); err != nil {
		_ = w.root.Remove(tmp)
		return w.wrap("write", rel, err)
	}
	if err := w.syncDir(dir); err != nil {
		return w.wrap("write", rel, err)
	}
	return nil
}

// writeTemp creates, fills, fsyncs and chmods a fresh temporary file in dir
// and returns its workspace-relative name. O_EXCL guarantees the file is new,
// so nothing else (a planted link, a hard link) is written through.
func (w *Workspace) writeTemp(dir, base string, data []byte, mode fs.FileMode) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("temp name: %w", err)
	}
	if len(base) > 100 {
		base = base[:100]
	}
	tmp := path.Join(dir, tempPrefix+base+"-"+hex.EncodeToString(rnd[:]))
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		_ = f.Close()
		_ = w.root.Remove(tmp)
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	// Fchmod on the open descriptor: Root.Chmod by name is racy on Unix.
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = w.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

func (w *Workspace) syncDir(dir string) error {
	d, err := w.root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove removes a file or an empty directory. A symbolic link is removed
// itself, never its target.
func (w *Workspace) Remove(rel string) error {
	r, err := w.Rel(rel)
	if err != nil {
		return err
	}
	if r == "." {
		return fmt.Errorf("remove %q: refusing to remove the workspace: %w", rel, ErrInvalidPath)
	}
	if err := w.root.Remove(r); err != nil {
		return w.wrap("remove", rel, err)
	}
	return nil
}

// Rename renames oldRel to newRel inside the workspace, creating the
// missing parent directories of newRel. A symbolic link is renamed itself.
func (w *Workspace) Rename(oldRel, newRel string) error {
	o, err := w.Rel(oldRel)
	if err != nil {
		return err
	}
	n, err := w.Resolve(newRel)
	if err != nil {
		return err
	}
	if o == "." || n == "." {
		return fmt.Errorf("rename %q -> %q: %w", oldRel, newRel, ErrInvalidPath)
	}
	if dir := path.Dir(n); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return w.wrap("rename", newRel, err)
		}
	}
	if err := w.root.Rename(o, n); err != nil {
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

// nlink returns the hard link count of a file, or 1 when unknown.
func nlink(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

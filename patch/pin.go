package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// pinnedPath is a path as the applier judged it. The guard judged rel and
// resolved; everything afterwards acts on resolved, which names no
// symbolic link, by walking it from the workspace root one name at a time
// without following links and checking that every directory that existed
// when the path was pinned is still the same directory (its identity, not
// its name). A link that appears anywhere on the way, or a directory
// replaced by another, makes the operation fail with ErrChanged instead of
// following it: the verdict and the action concern the same files.
type pinnedPath struct {
	// rel is the path as the proposal, snapshot or journal names it.
	rel string
	// resolved is the symlink-free workspace-relative path acted on.
	resolved string
	// dirs are the identities of resolved's parent directories that
	// existed at pin time, from the first component on; the root is held
	// by the workspace and cannot move.
	dirs []FileID
}

func (p pinnedPath) valid() bool { return p.resolved != "" }

// unpinned is the form of a recorded path (a journal's or a snapshot's,
// which hold resolved paths) when no identities are known: the walk still
// refuses every link on the way.
func unpinned(p string) pinnedPath { return pinnedPath{rel: p, resolved: p} }

// parentNames splits p's parent directory into its names.
func parentNames(p string) []string {
	dir := path.Dir(p)
	if dir == "." {
		return nil
	}
	return strings.Split(dir, "/")
}

// dirFS returns the handle-level access to the workspace: the FS itself
// when it provides it, or one over its os.Root (*workspace.Workspace).
// An FS that offers neither cannot be acted on without re-resolving paths,
// so the applier refuses it rather than fall back to writing by path.
func (a *Applier) dirFS() (DirFS, error) {
	switch f := a.FS.(type) {
	case DirFS:
		return f, nil
	case interface{ Root() *os.Root }:
		return RootDirFS(f.Root()), nil
	}
	return nil, errors.New("patch: the workspace cannot open its directories without following symbolic links (it needs OpenRootDir or Root), so the applier does not act on it")
}

// pinResolved records the identities of resolved's existing parent
// directories, reached without following links.
func (a *Applier) pinResolved(rel, resolved string) (pinnedPath, error) {
	dfs, err := a.dirFS()
	if err != nil {
		return pinnedPath{}, err
	}
	d, err := dfs.OpenRootDir()
	if err != nil {
		return pinnedPath{}, err
	}
	defer func() { _ = d.Close() }()
	p := pinnedPath{rel: rel, resolved: resolved}
	names := parentNames(resolved)
	for i, name := range names {
		next, err := d.OpenDir(name)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return pinnedPath{}, fmt.Errorf("%s: %w", path.Join(names[:i+1]...), err)
		}
		_ = d.Close()
		d = next
		st, err := d.Stat()
		if err != nil {
			return pinnedPath{}, err
		}
		p.dirs = append(p.dirs, st.ID)
	}
	return p, nil
}

// walkParent opens the deepest existing directory on the way to p's
// parent, without following links and checking the pinned identities, and
// returns it with the names of the parent directories below it that do
// not exist (none when the parent exists). The caller closes the Dir.
func (a *Applier) walkParent(p pinnedPath) (Dir, []string, error) {
	dfs, err := a.dirFS()
	if err != nil {
		return nil, nil, err
	}
	d, err := dfs.OpenRootDir()
	if err != nil {
		return nil, nil, err
	}
	names := parentNames(p.resolved)
	for i, name := range names {
		at := path.Join(names[:i+1]...)
		next, err := d.OpenDir(name)
		if errors.Is(err, fs.ErrNotExist) {
			if i < len(p.dirs) {
				_ = d.Close()
				return nil, nil, fmt.Errorf("directory %s was removed after %s was checked: %w", at, p.rel, ErrChanged)
			}
			return d, names[i:], nil
		}
		_ = d.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("directory %s of %s: %w", at, p.rel, err)
		}
		d = next
		if i < len(p.dirs) {
			st, err := d.Stat()
			if err != nil {
				_ = d.Close()
				return nil, nil, err
			}
			if st.ID != p.dirs[i] {
				_ = d.Close()
				return nil, nil, fmt.Errorf("directory %s of %s was replaced by another one after it was checked: %w", at, p.rel, ErrChanged)
			}
		}
	}
	return d, nil, nil
}

// openParent opens p's parent directory, creating the missing ones (0755)
// without following links.
func (a *Applier) openParent(p pinnedPath) (Dir, error) {
	d, missing, err := a.walkParent(p)
	if err != nil {
		return nil, err
	}
	for _, name := range missing {
		if err := d.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			_ = d.Close()
			return nil, fmt.Errorf("create a directory of %s: %w", p.rel, err)
		}
		// Whoever made it, it is entered without following a link.
		next, err := d.OpenDir(name)
		_ = d.Close()
		if err != nil {
			return nil, fmt.Errorf("create a directory of %s: %w", p.rel, err)
		}
		d = next
	}
	return d, nil
}

// missingDirs returns the parent directories of p (resolved paths,
// parents first) that do not exist: those a write of p creates.
func (a *Applier) missingDirs(p pinnedPath) ([]string, error) {
	d, missing, err := a.walkParent(p)
	if err != nil {
		return nil, err
	}
	_ = d.Close()
	names := parentNames(p.resolved)
	out := []string{}
	for i := len(names) - len(missing); i < len(names); i++ {
		out = append(out, path.Join(names[:i+1]...))
	}
	return out, nil
}

// readAt returns p's state: absent, or a regular file with one link and
// its content and permission bits. A link, FIFO, device, directory or hard
// link where the file was is an error (ErrChanged, ErrNotRegular,
// ErrHardLink), and so is a changed directory on the way.
func (a *Applier) readAt(p pinnedPath) (fileState, error) {
	d, missing, err := a.walkParent(p)
	if err != nil {
		return fileState{}, err
	}
	defer func() { _ = d.Close() }()
	st := fileState{Path: p.resolved}
	if len(missing) > 0 {
		return st, nil
	}
	data, info, err := d.ReadFile(path.Base(p.resolved), a.maxBytes())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return fileState{}, fmt.Errorf("read %s: %w", p.rel, err)
	}
	st.Exists, st.Mode, st.Content = true, info.Mode.Perm(), data
	return st, nil
}

// putFile replaces p with data of mode, atomically: a new temporary file
// in the pinned directory, synced, renamed over the name, and the
// directory synced. Right before the rename, which makes the write
// visible, the held directory is checked to be still the one the path
// leads to without links; visible runs just before the rename.
func (a *Applier) putFile(p pinnedPath, data []byte, mode fs.FileMode, visible func()) error {
	if mode.Perm() == 0 {
		mode = 0o644
	}
	d, err := a.openParent(p)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	name := path.Base(p.resolved)
	switch st, err := d.Lstat(name); {
	case err == nil:
		if err := checkRegular(p.rel, st); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	tmp, err := d.WriteTemp(name, data, mode)
	if err != nil {
		return err
	}
	if err := a.stillAt(p, d); err != nil {
		_ = d.Remove(tmp)
		return err
	}
	if visible != nil {
		visible()
	}
	if err := d.Rename(tmp, name); err != nil {
		_ = d.Remove(tmp)
		return err
	}
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync the directory of %s: %w", p.rel, err)
	}
	return nil
}

// stillAt checks that d is still the directory p's parent path leads to
// without links: the directory is held open, so a write lands in it
// whatever happened to its name meanwhile.
func (a *Applier) stillAt(p pinnedPath, d Dir) error {
	now, missing, err := a.walkParent(p)
	if err != nil {
		return err
	}
	defer func() { _ = now.Close() }()
	if len(missing) > 0 {
		return fmt.Errorf("the directory of %s was removed while it was written: %w", p.rel, ErrChanged)
	}
	a1, err := now.Stat()
	if err != nil {
		return err
	}
	a2, err := d.Stat()
	if err != nil {
		return err
	}
	if a1.ID != a2.ID {
		return fmt.Errorf("the directory of %s was replaced while it was written: %w", p.rel, ErrChanged)
	}
	return nil
}

// removeFile removes the regular file p; an absent one is fine. A link
// that took its place is not removed (it is not what was judged).
func (a *Applier) removeFile(p pinnedPath, visible func()) error {
	d, missing, err := a.walkParent(p)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if len(missing) > 0 {
		return nil
	}
	name := path.Base(p.resolved)
	st, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: %w", p.rel, ErrChanged)
	}
	if !st.Mode.IsRegular() {
		return fmt.Errorf("%s is a %s, not a regular file: %w", p.rel, typeName(st.Mode), ErrNotRegular)
	}
	if visible != nil {
		visible()
	}
	if err := d.Remove(name); err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync the directory of %s: %w", p.rel, err)
	}
	return nil
}

// removeEmptyDir removes the directory dir (a recorded, symlink-free
// path) if it is a real, empty directory; anything else stays.
func (a *Applier) removeEmptyDir(dir string) {
	d, missing, err := a.walkParent(unpinned(dir))
	if err != nil {
		return
	}
	defer func() { _ = d.Close() }()
	if len(missing) > 0 {
		return
	}
	name := path.Base(dir)
	if st, err := d.Lstat(name); err != nil || !st.Mode.IsDir() {
		return
	}
	// RemoveDir fails on a directory that holds anything; that is the
	// point: it was not ours to remove any more.
	_ = d.RemoveDir(name)
}

// removeOrphanTemps removes the temporary files a write of p killed
// midway may have left next to it (".kz-tmp-<name>-<16 hex>"). The
// journal proves a kz write to that path was in flight.
func (a *Applier) removeOrphanTemps(p pinnedPath) {
	d, missing, err := a.walkParent(p)
	if err != nil {
		return
	}
	defer func() { _ = d.Close() }()
	if len(missing) > 0 {
		return
	}
	names, err := d.Names()
	if err != nil {
		return
	}
	prefix := tempStem(path.Base(p.resolved))
	for _, name := range names {
		suffix, ok := strings.CutPrefix(name, prefix)
		if !ok || len(suffix) != 16 || strings.Trim(suffix, "0123456789abcdef") != "" {
			continue
		}
		if st, err := d.Lstat(name); err == nil && st.Mode.IsRegular() {
			_ = d.Remove(name)
		}
	}
}

// removeTempAt removes an older journal's mode-change temporary file,
// which lives next to the journaled path.
func (a *Applier) removeTempAt(p pinnedPath, temp string) {
	if path.Dir(temp) != path.Dir(p.resolved) {
		return
	}
	d, missing, err := a.walkParent(p)
	if err != nil {
		return
	}
	defer func() { _ = d.Close() }()
	if len(missing) > 0 {
		return
	}
	if st, err := d.Lstat(path.Base(temp)); err == nil && st.Mode.IsRegular() {
		_ = d.Remove(path.Base(temp))
	}
}

// pinWritable judges rel (the built-in rules and the guard, on the path
// and on what it resolves to) and pins the resolved path.
func (a *Applier) pinWritable(ctx context.Context, rel string) (pinnedPath, *Problem) {
	resolved, prob := a.judge(ctx, rel)
	if prob != nil {
		return pinnedPath{}, prob
	}
	p, err := a.pinResolved(rel, resolved)
	if err != nil {
		return pinnedPath{}, problemOf(err, "cannot open the path's directories")
	}
	return p, nil
}

// pinExact pins a recorded path (a snapshot's), which names the file a
// change wrote: it resolved to itself then, so a link on the way now was
// swapped in afterwards and is refused rather than followed.
func (a *Applier) pinExact(ctx context.Context, rel string) (pinnedPath, *Problem) {
	resolved, prob := a.judge(ctx, rel)
	if prob != nil {
		return pinnedPath{}, prob
	}
	if resolved != rel {
		return pinnedPath{}, &Problem{Kind: RefusedChanged, cause: ErrChanged,
			Message: fmt.Sprintf("the path now leads through a symbolic link to %q; the change wrote %s itself, and a link swapped in afterwards is not followed", resolved, rel)}
	}
	p, err := a.pinResolved(rel, resolved)
	if err != nil {
		return pinnedPath{}, problemOf(err, "cannot open the path's directories")
	}
	return p, nil
}

// problemOf classifies a pinned access's error as a refusal.
func problemOf(err error, what string) *Problem {
	switch {
	case errors.Is(err, ErrChanged):
		return &Problem{Kind: RefusedChanged, cause: err, Message: err.Error()}
	case errors.Is(err, ErrHardLink):
		return &Problem{Kind: RefusedNotRegular, cause: err, Message: fmt.Sprintf("%v; kz does not write a file whose content may be shared with a file elsewhere", err)}
	case errors.Is(err, ErrNotRegular):
		return &Problem{Kind: RefusedNotRegular, cause: err, Message: err.Error()}
	}
	return &Problem{Kind: RefusedPath, cause: err, Message: fmt.Sprintf("%s: %v", what, err)}
}

// problemError is a refusal as an error that errors.Is sees through to
// the refusal's cause, or to ErrRefused when the judgement refused.
func problemError(p *Problem) error {
	if p.cause == nil {
		return &causedError{msg: p.Message, cause: ErrRefused}
	}
	return &causedError{msg: p.Message, cause: p.cause}
}

type causedError struct {
	msg   string
	cause error
}

func (e *causedError) Error() string { return e.msg }
func (e *causedError) Unwrap() error { return e.cause }

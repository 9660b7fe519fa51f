package memory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Append adds line to the project memory file of the workspace: the first
// of AGENTS.md, CLAUDE.md, GEMINI.md that exists at the repository root,
// else a new AGENTS.md there. The file is rewritten through a temp file
// and a rename inside an os.Root of the root, so a crash leaves the old
// content or the new, and a symlinked memory file is written where it
// points, never outside the repository. It returns the file's path.
func Append(workspace, line string) (string, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return "", errors.New("nothing to remember: the line is empty")
	}
	if strings.ContainsAny(line, "\x00\r\n") {
		return "", errors.New("a memory line must be one line of text")
	}
	top := RepoRoot(workspace)
	root, err := os.OpenRoot(top)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", top, err)
	}
	defer func() { _ = root.Close() }()
	name := Names[0]
	for _, n := range Names {
		if _, err := root.Lstat(n); err == nil {
			name = n
			break
		}
	}
	target, err := resolveInRoot(root, top, name)
	if err != nil {
		return "", err
	}
	abs := filepath.Join(top, target)
	old, mode, err := readForAppend(root, target)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", abs, err)
	}
	if len(old) > 0 && !strings.HasSuffix(old, "\n") {
		old += "\n"
	}
	if err := writeAtomic(root, target, []byte(old+"- "+line+"\n"), mode); err != nil {
		return "", fmt.Errorf("write %s: %w", abs, err)
	}
	return abs, nil
}

// resolveInRoot follows a symlinked name to the file it names, which must
// be inside root; a name that does not exist or is not a link is itself.
func resolveInRoot(root *os.Root, top, name string) (string, error) {
	cur := name
	for range 8 {
		fi, err := root.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return cur, nil
		}
		dest, err := root.Readlink(cur)
		if err != nil {
			return "", fmt.Errorf("read link %s: %w", cur, err)
		}
		if filepath.IsAbs(dest) {
			rel, err := filepath.Rel(top, dest)
			if err != nil {
				return "", fmt.Errorf("%s points outside %s", cur, top)
			}
			dest = rel
		} else {
			dest = filepath.Join(filepath.Dir(cur), dest)
		}
		if !filepath.IsLocal(dest) {
			return "", fmt.Errorf("%s points outside %s", cur, top)
		}
		cur = dest
	}
	return "", fmt.Errorf("%s: too many links", name)
}

// readForAppend returns a file's text and mode; a missing file is empty
// with mode 0644.
func readForAppend(root *os.Root, name string) (string, fs.FileMode, error) {
	fi, err := root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0o644, nil
	}
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, errors.New("not a regular file")
	}
	f, err := root.Open(name)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return "", 0, err
	}
	return string(b), fi.Mode().Perm(), nil
}

// writeAtomic writes name inside root through a synced temp file and a
// rename, with the given mode.
func writeAtomic(root *os.Root, name string, body []byte, mode fs.FileMode) error {
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".kz-tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		// A temp file a crash left behind: take its place.
		if err = root.Remove(tmp); err == nil {
			f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		}
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chmod(tmp, mode)
	}
	if werr == nil {
		werr = root.Rename(tmp, name)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return werr
	}
	if d, err := root.Open(filepath.Dir(name)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

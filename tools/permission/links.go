package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kaizen-code/kz/tools/shell"
)

// A write target below a directory that does not exist yet is resolved
// lexically, because nothing on disk says where it will lead. That is only
// sound while nothing in the same command line can put a symbolic link at
// that directory first: `tar xf a.tar && echo x > d/f`, `cp -a src d &&
// echo x > d/link/f` or `git checkout b && echo x > lnk/f` can each create
// d or lnk as a link to .git or to outside, and the write then lands there.
// Such lines are asked. Links made by ln and cp -s/-l are judged precisely
// instead: the shell analysis reports what they point to as writes, so
// `ln -s .git/hooks h && echo x > h/pre-commit` is denied outright.

// linkCapable reports a command that can create symbolic links under names
// the analysis cannot foresee: by copying, moving or unpacking trees that
// may contain links.
func linkCapable(c shell.Command) bool {
	switch filepath.Base(c.Name) {
	case "mv", "rsync", "tar", "bsdtar", "gtar", "unzip", "cpio", "pax", "7z", "7za", "bunzip2", "ar", "dpkg-deb", "rpm2cpio":
		return true
	case "git", "svn", "hg":
		return !c.ReadOnly
	case "cp":
		for i, a := range c.Args {
			if c.IsDynamic(i) {
				return true
			}
			if a == "--" {
				break
			}
			switch {
			case a == "--archive" || a == "--recursive" || a == "--no-dereference" || strings.HasPrefix(a, "--preserve"):
				return true
			case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "arRdP"):
				return true
			}
		}
	}
	return false
}

// parentMissing reports whether the directory of a resolved path does not
// exist yet.
func parentMissing(resolved string) bool {
	_, err := os.Lstat(filepath.Dir(resolved))
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// unforeseeableLinkTarget returns a write target of the command line that
// lies below a directory that does not exist yet while a command of the
// same line can create links, or "".
func (e *eval) unforeseeableLinkTarget() string {
	if e.an == nil {
		return ""
	}
	capable := ""
	for _, c := range e.an.Commands {
		if linkCapable(c) {
			capable = c.String()
			break
		}
	}
	if capable == "" {
		return ""
	}
	for _, t := range e.tgts {
		if t.Op == shell.OpRead || t.Dynamic || t.err != nil || t.resolved == "" || shell.IsHarmlessDevice(t.Path) {
			continue
		}
		if parentMissing(t.resolved) {
			return "`" + capable + "` can create links, and " + t.Path + " is below a directory that does not exist yet, so where the write lands cannot be known"
		}
	}
	return ""
}

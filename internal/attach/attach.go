// Package attach reads the image files a person attaches to a message
// (`kz -p --image FILE`, an `@shot.png` mention, a pasted path) into
// engine.Image values: through an os.Root, regular files only, never more
// than engine.MaxImageBytes read, the type sniffed from the content.
package attach

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kaizen-code/kz/engine"
)

// Image reads the image at name. A relative name is resolved in the
// workspace through an os.Root, so neither "../" nor a symlink leads out
// of it; an absolute name is a file the person named on purpose (a
// screenshot in /tmp), opened through a root at its own directory so that
// its last component cannot be swapped for a link elsewhere. The error
// matches engine.ErrNotImage when the file is readable but not an image.
func Image(workspace, name string) (engine.Image, error) {
	if name == "" {
		return engine.Image{}, errors.New("attach: empty image path")
	}
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return engine.Image{}, fmt.Errorf("attach %q: the path contains control characters", name)
	}
	dir, rel := workspace, name
	if filepath.IsAbs(name) {
		dir, rel = filepath.Dir(name), filepath.Base(name)
		if workspace != "" {
			// A path inside the workspace is confined like a relative
			// one: a link in it cannot lead out.
			if r, err := filepath.Rel(workspace, name); err == nil && filepath.IsLocal(r) {
				dir, rel = workspace, r
			}
		}
	} else if dir == "" {
		return engine.Image{}, fmt.Errorf("attach %s: a relative path needs a workspace", name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return engine.Image{}, fmt.Errorf("attach %s: %w", name, err)
	}
	defer func() { _ = root.Close() }()
	data, err := readRegular(root, rel, engine.MaxImageBytes)
	if err != nil {
		return engine.Image{}, fmt.Errorf("attach %s: %w", name, err)
	}
	return engine.NewImage(filepath.Base(name), data)
}

// readRegular reads at most limit+1 bytes of a regular file, so a file over
// the limit is detected without reading it all; FIFOs, devices and
// directories are refused before they are opened for reading (a FIFO
// would block the read).
func readRegular(root *os.Root, rel string, limit int64) ([]byte, error) {
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("the file is %s, more than the %s an image may have", engine.FormatBytes(fi.Size()), engine.FormatBytes(limit))
	}
	// O_NONBLOCK: a file swapped for a FIFO after the Stat must not
	// block the open; on a regular file it changes nothing.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	// The file may have been swapped since the Stat: check what was
	// opened, and never read past the limit.
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("the file grew past the %s an image may have", engine.FormatBytes(limit))
	}
	return data, nil
}

// IsNotExist reports whether err says the file does not exist, for a
// caller that treats a missing file as "not an image path".
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

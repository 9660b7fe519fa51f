//go:build linux

package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// The sandbox keeps two files between kz processes, the probe's answer
// (probecache_linux.go) and the search of the writable directories
// (searchsave_linux.go). Both decide how commands are confined, so both
// are read only when they can be kz's own, and written so that a reader
// never sees half of one.

// readOwnedJSON decodes the file at path into v. It takes only a regular
// file of this user that nobody else may write, of at most limit bytes,
// that parses; ok is false for anything else. The open neither follows a
// symlink nor blocks on a FIFO.
func readOwnedJSON(path string, limit int64, v any) (ok bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !ownedByMe(fi) || fi.Mode().Perm()&0o022 != 0 || fi.Size() > limit {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// writeJSONAtomic replaces the file at path with v as JSON, atomically,
// through an os.Root of its directory (made if missing, mode 0700): a
// temporary file, synced, renamed over it. A crash leaves the old file or
// the new one.
func writeJSONAtomic(path string, v any) (err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dir, name := filepath.Split(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tmp := "." + name + "-" + hex.EncodeToString(nonce[:])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
		}
	}()
	_, werr := f.Write(b)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return err
	}
	return root.Rename(tmp, name)
}

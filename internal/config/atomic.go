package config

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// writeUnder replaces the file rel under dir with body, mode 0600, through
// an os.Root of dir, so that no path in rel (nor a symlink planted in dir)
// can make it write elsewhere. It writes a temporary file beside the
// target, syncs it and renames it over the target: a crash leaves the old
// file or the new one, never half of either. dir and rel's folders are
// made with mode 0700.
func writeUnder(dir, rel string, body []byte) (err error) {
	target := filepath.Join(dir, rel)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	defer func() { _ = root.Close() }()
	sub := filepath.Dir(rel)
	if sub != "." {
		if err := root.MkdirAll(sub, 0o700); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
	}
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tmp := filepath.Join(sub, "."+filepath.Base(rel)+"-"+hex.EncodeToString(nonce[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
		}
	}()
	if _, err := f.Write(body); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	// The rename is durable once the folder is synced.
	if d, derr := root.Open(sub); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

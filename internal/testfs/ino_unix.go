//go:build unix

package testfs

import (
	"os"
	"syscall"
	"testing"
)

// Ino returns the inode number of the file at path.
func Ino(t testing.TB, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Ino)
}

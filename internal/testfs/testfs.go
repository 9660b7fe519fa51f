// Package testfs writes the file trees tests start from, and reads what
// tests ask of their files.
package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files (path: content) below dir, making the folders they
// need (mode 0755; files 0644), and fails the test on any error. A path
// may be absolute when dir is "".
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, c := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

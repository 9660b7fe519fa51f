package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkBaseline reads the baseline of a workspace of 10,000 files, as
// every kz process does at its first turn's start (checkpoint.Tracker's
// load), from a real database file.
func BenchmarkBaseline(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "kz.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	const n = 10000
	c := ScanCommit{Workspace: "/ws", Blobs: map[string][]byte{}}
	for i := range n {
		content := []byte(fmt.Sprintf("file %d\n", i))
		sum := sha256.Sum256(content)
		sha := hex.EncodeToString(sum[:])
		c.Blobs[sha] = content
		c.Upserts = append(c.Upserts, BaselineEntry{Path: fmt.Sprintf("dir%03d/file%05d.go", i/10, i), Size: int64(len(content)),
			MtimeNs: 1700000000000000000 + int64(i), CtimeNs: 1700000000000000000 + int64(i), Ino: uint64(100000 + i), Mode: 0o644, SHA256: sha})
	}
	if _, err := s.CommitScan(ctx, c); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := s.Baseline(ctx, "/ws")
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != n {
			b.Fatalf("read %d entries, want %d", len(got), n)
		}
	}
}

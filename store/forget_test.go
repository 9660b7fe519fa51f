package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestForgetRemovesContentNothingNames: a commit's Forget deletes the
// baseline entries it names, and the content they named goes from the
// store unless another baseline entry, a checkpoint, or the commit itself
// still names it; the bytes are then gone from the database file too
// (secure_delete, once the write-ahead log is checkpointed).
func TestForgetRemovesContentNothingNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, filepath.Join(dir, "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	const ws = "/w"
	secret, shared, kept, same := "SECRET-0123456789abcdef", "shared content", "content a checkpoint names", "content the commit names again"
	sha := map[string]string{secret: "aa01", shared: "aa02", kept: "aa03", same: "aa04"}
	blobs := map[string][]byte{}
	for c, s := range sha {
		blobs[s] = []byte(c)
	}
	base := []BaselineEntry{{Path: ".env", SHA256: sha[secret]}, {Path: "a.key", SHA256: sha[shared]}, {Path: "copy.txt", SHA256: sha[shared]},
		{Path: "id_rsa", SHA256: sha[kept]}, {Path: "x.pem", SHA256: sha[same]}, {Path: "big.pem"}}
	cp := &Checkpoint{SessionID: "s", TurnID: 1, Workspace: ws, Files: []CheckpointFile{{Path: "id_rsa", BeforeExists: true, BeforeSHA256: sha[kept], AfterExists: true, AfterSHA256: sha[kept], Restorable: true}}}
	if _, err := st.CommitScan(ctx, ScanCommit{Workspace: ws, Blobs: blobs, Upserts: base, Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
	// The next commit forgets all but copy.txt, and names the content of
	// x.pem again under another path.
	if _, err := st.CommitScan(ctx, ScanCommit{Workspace: ws, Upserts: []BaselineEntry{{Path: "moved.txt", SHA256: sha[same]}},
		Forget: []string{".env", "a.key", "id_rsa", "x.pem", "big.pem", "never-there"}}); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Baseline(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range rows {
		left = append(left, r.Path)
	}
	if len(left) != 2 || left[0] != "copy.txt" || left[1] != "moved.txt" {
		t.Errorf("baseline %q", left)
	}
	for c, want := range map[string]bool{secret: false, shared: true, kept: true, same: true} {
		b, err := st.Blob(ctx, sha[c])
		if got := err == nil && string(b) == c; got != want {
			t.Errorf("content %q kept: %v (%v), want %v", c, got, err, want)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kz.db", "kz.db-wal"} {
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%s still holds the forgotten secret", f)
		}
	}
}

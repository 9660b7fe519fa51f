package checkpoint

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kaizen-code/kz/patch"
)

type blobMap map[string][]byte

func (b blobMap) Blob(_ context.Context, sha string) ([]byte, error) {
	if d, ok := b[sha]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("no blob %s", sha)
}

// ComposeWith orders checkpoints and applied proposals by time per file:
// the earliest change, of either kind, gives the content to go back to,
// and the latest the content the file must still hold.
func TestComposeWithOrdersBothKindsInTime(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []Record{
		{ID: 1, Created: t0, Files: []FileChange{{Path: "a", BeforeExists: true, BeforeSHA256: "a0", BeforeMode: 0o644, AfterExists: true, AfterSHA256: "a1", Restorable: true}}},
		{ID: 2, Created: t0.Add(2 * time.Second), Files: []FileChange{{Path: "a", BeforeExists: true, BeforeSHA256: "a2", AfterExists: true, AfterSHA256: "a3", Restorable: true}}},
	}
	applied := []Applied{
		{When: t0.Add(time.Second), Snapshots: []patch.Snapshot{
			{Path: "a", Existed: true, Content: []byte("A1"), AfterExists: true, AfterSHA256: "a2"},
			{Path: "b", Existed: false, AfterExists: true, AfterSHA256: "b1", CreatedDirs: []string{"d"}},
		}},
	}
	p, err := ComposeWith(context.Background(), recs, applied, blobMap{"a0": []byte("A0")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Snapshots) != 2 || len(p.IDs) != 2 || len(p.Unrestorable) != 0 {
		t.Fatalf("plan %+v", p)
	}
	a, b := p.Snapshots[0], p.Snapshots[1]
	if a.Path != "a" || string(a.Content) != "A0" || !a.Existed || a.Mode != 0o644 || a.AfterSHA256 != "a3" {
		t.Errorf("a: %+v", a)
	}
	if b.Path != "b" || b.Existed || b.AfterSHA256 != "b1" || len(b.CreatedDirs) != 1 {
		t.Errorf("b: %+v", b)
	}
	// A proposal last on a file gives the state to check against.
	p, err = ComposeWith(context.Background(), recs[:1], applied, blobMap{"a0": []byte("A0")})
	if err != nil || p.Snapshots[0].AfterSHA256 != "a2" {
		t.Fatalf("plan %+v %v", p, err)
	}
}

package store

import (
	"context"
	"strings"
	"testing"
)

// A session reads its own artifacts back, and never another session's.
func TestReadArtifactIsScopedToItsSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openTemp(t)
	mine, err := st.SaveArtifact(ctx, "s1", "c1", []byte("line 1\nline 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := st.SaveArtifact(ctx, "s2", "c1", []byte("other session"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := st.ReadArtifact(ctx, "s1", mine); err != nil || string(b) != "line 1\nline 2\n" {
		t.Fatalf("own artifact: %q, %v", b, err)
	}
	if b, err := st.ReadArtifact(ctx, "s1", theirs); err == nil || !strings.Contains(err.Error(), "no such artifact in this session") {
		t.Fatalf("another session's artifact: %q, %v", b, err)
	}
	for _, bad := range []string{"12", "artifact:x", "artifact:", ""} {
		if _, err := st.ReadArtifact(ctx, "s1", bad); err == nil {
			t.Errorf("ReadArtifact(%q) succeeded", bad)
		}
	}
}

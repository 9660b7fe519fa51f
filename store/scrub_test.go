package store

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestDeletedSessionLeavesNothingOnDisk: a session deleted, perhaps for
// what was pasted into it, is gone from the database file and from its
// write-ahead log, not only from the tables.
func TestDeletedSessionLeavesNothingOnDisk(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	marker := "pasted-by-mistake-" + string(bytes.Repeat([]byte("Zq"), 40))
	w := st.NewWriter()
	_ = w.Append(ev("s", 1, engine.EventUserMessage, marker))
	_ = w.Append(ev("s", 2, engine.EventAssistantMessage, "noted: "+marker))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(st.path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			t.Errorf("kz.db%s still holds the deleted session's text", suffix)
		}
	}
}

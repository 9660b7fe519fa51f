package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
)

// TestOpenClosesTurnOfEarlierProcessWithSamePid: kz as pid 1 in a
// container has the same pid on every run. A turn left open by an earlier
// run must be closed although its pid is ours; our own open turn is not.
func TestOpenClosesTurnOfEarlierProcessWithSamePid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kz.db")
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"earlier", "ours"} {
		if err := st.CreateSession(ctx, id, "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
			t.Fatal(err)
		}
		if err := st.writeBatch(ctx, []engine.Event{ev(id, 1, engine.EventUserMessage, "go"), ev(id, 2, engine.EventTextDelta, "half")}); err != nil {
			t.Fatal(err)
		}
	}
	var pid int
	var start int64
	if err := st.db.QueryRow("SELECT pid, pid_start FROM turns WHERE session_id = 'ours'").Scan(&pid, &start); err != nil {
		t.Fatal(err)
	}
	if pid != os.Getpid() || start != proc.SelfStart() {
		t.Fatalf("turn recorded pid %d start %d, want %d %d", pid, start, os.Getpid(), proc.SelfStart())
	}
	if _, err := st.db.Exec("UPDATE turns SET pid_start = pid_start - 1 WHERE session_id = 'earlier'"); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if turns, _ := st.Turns(ctx, "earlier"); len(turns) != 1 || turns[0].Status != "interrupted" {
		t.Fatalf("the earlier process's turn = %+v, want interrupted", turns)
	}
	if turns, _ := st.Turns(ctx, "ours"); len(turns) != 1 || turns[0].Status != "" {
		t.Fatalf("our own running turn = %+v, want still open", turns)
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// A marker left beside a database that no longer exists is dropped.
func TestDamageMarkerWithoutDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kz.db")
	if err := os.WriteFile(path+damagedSuffix, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if st.Recovered != "" {
		t.Fatalf("Recovered = %q", st.Recovered)
	}
	if _, err := os.Stat(path + damagedSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker kept: %v", err)
	}
}

// killedWriterEnv names the database the helper writes to before it kills
// itself.
const killedWriterEnv = "KZ_STORE_KILLED_WRITER"

// TestHelperKilledWriter is not a test: run by the tests below as a child
// process, it writes ten sessions into the main database file, ten more
// into the write-ahead log only, and kills itself with SIGKILL, leaving
// the log, its index and no clean-up behind.
func TestHelperKilledWriter(t *testing.T) {
	path := os.Getenv(killedWriterEnv)
	if path == "" {
		t.Skip("run by TestKilledWriter*")
	}
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st.db.SetMaxOpenConns(1)
	write := func(from, to int) {
		for i := from; i < to; i++ {
			id := fmt.Sprintf("s%02d", i)
			if err := st.CreateSession(ctx, id, "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
				t.Fatal(err)
			}
			if err := st.writeBatch(ctx, []engine.Event{ev(id, 1, engine.EventUserMessage, "go"), ev(id, 2, engine.EventAssistantMessage, "done "+id),
				{Type: engine.EventFinalResult, SessionID: id, Seq: 3, TurnID: 1, Status: "complete", Usage: &engine.Usage{}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 10)
	if _, err := st.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.Exec("PRAGMA wal_autocheckpoint=0"); err != nil {
		t.Fatal(err)
	}
	write(10, 20)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// killedWriter runs TestHelperKilledWriter on a database in a new folder
// and returns its path once the helper is dead.
func killedWriter(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kz.db")
	cmd := osexec.Command(os.Args[0], "-test.run", "^TestHelperKilledWriter$")
	cmd.Env = append(os.Environ(), killedWriterEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var ee *osexec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the killed writer left no write-ahead log: %v", err)
	}
	return path
}

// TestKilledWriterLeavesNothingToSalvage: a write-ahead log left by a
// writer killed with SIGKILL is not damage: the next Open reads every
// session, those only in the log included, and salvages nothing.
func TestKilledWriterLeavesNothingToSalvage(t *testing.T) {
	t.Parallel()
	path := killedWriter(t)
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if st.Recovered != "" {
		t.Fatalf("recovered: %s", st.Recovered)
	}
	if list, err := st.ListSessions(ctx, "", 0); err != nil || len(list) != 20 {
		t.Fatalf("%d sessions after the kill, want 20: %v", len(list), err)
	}
	if v, err := st.IntegrityCheck(ctx); err != nil || v != "ok" {
		t.Fatalf("integrity %q %v", v, err)
	}
}

// TestSalvageReadsTheLogOfAKilledWriter: salvaging a database whose
// header is garbled while a killed writer's log holds its last sessions
// reads through the log: all twenty sessions come back whole. (Opened as
// it is, such a database is not even damaged: SQLite takes the first page
// from the log.)
func TestSalvageReadsTheLogOfAKilledWriter(t *testing.T) {
	t.Parallel()
	path := killedWriter(t)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 100), 0); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	ctx := context.Background()
	rep, err := Salvage(ctx, path, "test damage")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 20 || rep.Lost != 0 || rep.Incomplete != 0 {
		t.Fatalf("salvage: %s", rep)
	}
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if st.Recovered != "" {
		t.Fatalf("recovered: %s", st.Recovered)
	}
	for i := range 20 {
		var n int
		if err := st.db.QueryRow(`SELECT COUNT(*) FROM events WHERE session_id = ?`, fmt.Sprintf("s%02d", i)).Scan(&n); err != nil || n != 3 {
			t.Fatalf("session s%02d: %d events, %v", i, n, err)
		}
	}
	kept, _ := filepath.Glob(path + ".corrupt-*-wal")
	if len(kept) != 1 {
		t.Fatalf("the damaged file's log was not kept beside it: %v", kept)
	}
}

package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestClaimIsExclusiveAndReleased: a second claim of a held session is
// refused, naming the holder; after Release the session can be claimed
// again. (Claims by other processes, and a killed holder, are covered by
// the process tests in the main package.)
func TestClaimIsExclusiveAndReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openTemp(t)
	c, err := st.ClaimSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.ClaimSession(ctx, "s1")
	var iu *InUseError
	if !errors.As(err, &iu) || !errors.Is(err, ErrInUse) || iu.PID != os.Getpid() ||
		!strings.Contains(err.Error(), "in use by another kz (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Fatalf("second claim: %v", err)
	}
	other, err := st.ClaimSession(ctx, "s2")
	if err != nil {
		t.Fatalf("a claim blocked another session: %v", err)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	again, err := st.ClaimSession(ctx, "s1")
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	_ = again.Release()
	_ = other.Release()
	for _, bad := range []string{"", "..", "a/b"} {
		if _, err := st.ClaimSession(ctx, bad); err == nil {
			t.Errorf("claimed %q", bad)
		}
	}
}

// TestDeleteSessionRefusesAClaimedSession: a session in use is not
// deleted; once free it is, with its snapshots, artifacts and lock file.
func TestDeleteSessionRefusesAClaimedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openTemp(t)
	if err := st.CreateSession(ctx, "s1", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	c, err := st.ClaimSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, "s1"); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "then delete it") {
		t.Fatalf("delete of a claimed session: %v", err)
	}
	if _, err := st.Session(ctx, "s1"); err != nil {
		t.Fatalf("refused delete removed the session: %v", err)
	}
	_ = c.Release()
	if err := st.SaveSnapshot(ctx, Snapshot{SessionID: "s1", ChangeID: "chg_1", Path: "a", Content: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveArtifact(ctx, "s1", "c1", []byte("big")); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sessions) + (SELECT COUNT(*) FROM snapshots) + (SELECT COUNT(*) FROM artifacts)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows left (%v)", n, err)
	}
	if _, err := os.Stat(filepath.Join(st.claimDir(), "s1.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file of a deleted session kept: %v", err)
	}
	if err := st.DeleteSession(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

// TestDeleteSessionIsOneTransaction: when one of its deletions fails,
// none of them happened.
func TestDeleteSessionIsOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openTemp(t)
	if err := st.CreateSession(ctx, "s1", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSnapshot(ctx, Snapshot{SessionID: "s1", ChangeID: "chg_1", Path: "a", Content: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveArtifact(ctx, "s1", "c1", []byte("big")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE DELETE ON artifacts BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, "s1"); err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("delete: %v", err)
	}
	var sessions, snaps int
	if err := st.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM snapshots)`).Scan(&sessions, &snaps); err != nil {
		t.Fatal(err)
	}
	if sessions != 1 || snaps != 1 {
		t.Fatalf("a failed delete removed part of the session: %d sessions, %d snapshots", sessions, snaps)
	}
	// The failed delete released its claim.
	c, err := st.ClaimSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Release()
}

// TestOpenReadOnlyReadsAMigratedDatabase: the read-only open shows the
// sessions and refuses writes; a database this kz must still migrate is
// refused with a message saying so.
func TestOpenReadOnlyReadsAMigratedDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kz.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, "s1", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	list, err := ro.ListSessions(ctx, "", 0)
	if err != nil || len(list) != 1 || list[0].ID != "s1" {
		t.Fatalf("list: %v %v", list, err)
	}
	if err := ro.CreateSession(ctx, "s2", "/w", "r", "m", engine.ModeFullAutonomous); err == nil {
		t.Fatal("a read-only store wrote")
	}
	_ = ro.Close()

	rw, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	_ = rw.Close()
	if _, err := OpenReadOnly(ctx, path); err == nil || !strings.Contains(err.Error(), "must be upgraded") {
		t.Fatalf("read-only open of an old schema: %v", err)
	}
	if !IsReadOnly(&os.PathError{Op: "open", Path: path, Err: os.ErrPermission}) {
		t.Fatal("a permission error is not read-only")
	}
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A damaged database is salvaged, never set aside whole while sessions in
// it can still be read: kz copies every row it can read (sessions, events,
// turns, transcript, usage, native ids, grants, file snapshots, artifacts)
// into a fresh database, row by row, stepping over what fails, then puts
// the fresh database in place and keeps the damaged file beside it under
// <path>.corrupt-<time>, with its write-ahead log. Salvage works on a copy
// of the damaged files, so the kept file is exactly what was found.
//
// Rows are copied as they are stored: they passed the redaction funnel
// (exec) when they were first written, and a file snapshot must stay byte
// for byte what undo restores.

// SalvageReport says what a salvage found and did.
type SalvageReport struct {
	// Path is the database salvaged; Kept is where the damaged file went.
	Path, Kept string
	// Found says what was wrong, in a few words.
	Found string
	// Sessions were recovered, Incomplete of them with rows that could
	// not be read; Lost had content and none of it could be read.
	Sessions, Incomplete, Lost int
	// Events and Snapshots count the rows copied.
	Events, Snapshots int
	// Skipped counts the unreadable stretches of rows stepped over.
	Skipped int
	// HeaderRebuilt says the file's header was garbled and was rebuilt
	// (on the copy) to read the pages behind it.
	HeaderRebuilt bool
	// Unreadable says nothing of a kz database could be read: an empty
	// file, one that is not an SQLite database, or one whose schema is
	// gone.
	Unreadable bool
}

// String says in one line what was found, what was recovered and lost, and
// where the damaged file is.
func (r SalvageReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "database %s was damaged (%s)", r.Path, r.Found)
	switch {
	case r.Unreadable:
		b.WriteString(": nothing in it could be read as kz sessions, so none was recovered; a new database was started")
	default:
		if r.HeaderRebuilt {
			b.WriteString(": its header was rebuilt to read the rest")
		}
		fmt.Fprintf(&b, ": recovered %d %s", r.Sessions, plural(r.Sessions, "session", "sessions"))
		if r.Incomplete > 0 {
			fmt.Fprintf(&b, " (%d incomplete)", r.Incomplete)
		}
		fmt.Fprintf(&b, " and %d file %s into a fresh database, lost %d %s", r.Snapshots, plural(r.Snapshots, "snapshot", "snapshots"),
			r.Lost, plural(r.Lost, "session", "sessions"))
	}
	if r.Kept != "" {
		fmt.Fprintf(&b, "; the damaged file is kept as %s", r.Kept)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Salvage salvages the database at path into a fresh one (see above),
// whatever its state; found says what was wrong with it, for the report.
// It needs every other kz using the database to have ended, and fails with
// ErrDatabaseInUse otherwise.
func Salvage(ctx context.Context, path, found string) (SalvageReport, error) {
	lock, err := lockShared(ctx, path)
	if err != nil {
		return SalvageReport{}, err
	}
	defer lock.release()
	if err := lock.exclusive(ctx); err != nil {
		return SalvageReport{}, fmt.Errorf("salvage %s: %w", path, err)
	}
	return salvage(ctx, path, found)
}

// salvage does the work of Salvage; the caller holds the database's lock
// exclusively.
func salvage(ctx context.Context, path, found string) (SalvageReport, error) {
	rep := SalvageReport{Path: path, Found: found}
	work, err := os.MkdirTemp(filepath.Dir(path), ".kz-salvage-")
	if err != nil {
		return rep, fmt.Errorf("salvage %s: %w", path, err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	old := filepath.Join(work, "old.db")
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(path+suffix, old+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("salvage %s: copy the damaged file: %w", path, err)
		}
	}
	fresh := filepath.Join(work, "new.db")
	if err := salvageInto(ctx, old, fresh, &rep); err != nil {
		return rep, fmt.Errorf("salvage %s: %w", path, err)
	}
	// The damaged files go aside and the fresh one takes their name. Both
	// live in the same folder, so each rename is atomic.
	kept, err := moveAside(path)
	if err != nil && kept == "" {
		return rep, fmt.Errorf("salvage %s: set the damaged file aside: %w", path, err)
	}
	rep.Kept = kept
	if err := os.Rename(fresh, path); err != nil {
		return rep, fmt.Errorf("salvage %s: put the salvaged database in place: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return rep, nil
}

// salvageInto copies what can be read of the database at old into a new
// database at fresh.
func salvageInto(ctx context.Context, old, fresh string, rep *SalvageReport) error {
	if err := os.WriteFile(fresh, nil, 0o600); err != nil {
		return err
	}
	// Foreign keys are off while copying: a child row may come before
	// the session row that is rebuilt for it at the end.
	dst, err := sql.Open("sqlite3", fileURI(fresh, "_journal_mode=WAL&_synchronous=OFF&_foreign_keys=off&_busy_timeout=5000&_txlock=immediate"))
	if err != nil {
		return err
	}
	defer func() { _ = dst.Close() }()
	if err := (&Store{db: dst, path: fresh}).migrate(ctx); err != nil {
		return fmt.Errorf("create the fresh database: %w", err)
	}
	fi, err := os.Stat(old)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil && fi.Size() > 0 {
		if rep.HeaderRebuilt, err = repairHeader(old); err != nil {
			return err
		}
	}
	if err := copyReadable(ctx, old, dst, rep); err != nil {
		return err
	}
	var verdict string
	if err := dst.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&verdict); err != nil || verdict != "ok" {
		return fmt.Errorf("the fresh database fails its integrity check: %q %w", verdict, err)
	}
	if _, err := dst.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return syncFile(fresh)
}

// moveAside renames the database at path, with its write-ahead log, shared
// memory and damage marker, to <path>.corrupt-<time> and returns that name.
func moveAside(path string) (string, error) {
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000")
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	for _, suffix := range []string{"-wal", "-shm", damagedSuffix} {
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return aside, err
		}
	}
	return aside, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename in dir durable; a failure only weakens that.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

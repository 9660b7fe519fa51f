package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// CheckReport is what Check found in a database.
type CheckReport struct {
	Path string
	// Missing says there is no database yet: nothing to check.
	Missing bool
	// Size and LogSize are the bytes of the file and of its write-ahead
	// log.
	Size, LogSize int64
	// Problems are SQLite's integrity_check findings, or why the file
	// could not be checked at all. None means the database is sound.
	Problems []string
	// EarlierDamage is what a kz found when a read failed (see
	// damagedSuffix); the next kz salvages the database for it.
	EarlierDamage string
	// Foreign is set when the file is another program's database.
	Foreign *ForeignError
	// Sessions, Events and Snapshots count what the database holds.
	Sessions, Events, Snapshots int64
}

// Healthy reports whether there is nothing to salvage.
func (r CheckReport) Healthy() bool {
	return len(r.Problems) == 0 && r.EarlierDamage == "" && r.Foreign == nil
}

// MaxProblems bounds the findings Check asks integrity_check for: one
// damaged page yields a line per broken reference, and a few say enough.
const MaxProblems = 10

// Check examines the database at path without writing anything: SQLite's
// integrity_check over every page, a marker an earlier kz left, and what
// the database holds. It does not take the database's lock: reading is
// safe beside a running kz. An error means the check itself could not be
// made (a permission), not that the database is damaged.
func Check(ctx context.Context, path string) (CheckReport, error) {
	r := CheckReport{Path: path}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		r.Missing = true
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("check %s: %w", path, err)
	}
	r.Size = fi.Size()
	if wal, err := os.Stat(path + "-wal"); err == nil {
		r.LogSize = wal.Size()
	}
	if err := earlierDamage(path); err != nil {
		r.EarlierDamage = strings.TrimPrefix(err.Error(), "an earlier kz found it damaged: ")
	}
	if r.Size == 0 {
		r.Problems = append(r.Problems, "it is an empty file (0 bytes)")
		return r, nil
	}
	db, err := checkConn(ctx, path)
	if err != nil {
		return r, err
	}
	defer func() { _ = db.Close() }()
	if err := (&Store{db: db, path: path}).checkKz(ctx); err != nil {
		var fe *ForeignError
		if errors.As(err, &fe) {
			r.Foreign = fe
			return r, nil
		}
		r.Problems = append(r.Problems, describeDamage(err)+startsWith(path))
		return r, nil
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA integrity_check(%d)", MaxProblems))
	if err != nil {
		r.Problems = append(r.Problems, describeDamage(err))
		return r, nil
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			r.Problems = append(r.Problems, describeDamage(err))
			break
		}
		// A row may hold several findings, one a line, under a heading
		// that names the schema.
		for _, l := range strings.Split(line, "\n") {
			if l != "ok" && l != "" && !strings.HasPrefix(l, "*** in database ") {
				r.Problems = append(r.Problems, l)
			}
		}
	}
	if err := rows.Err(); err != nil {
		r.Problems = append(r.Problems, describeDamage(err))
	}
	_ = rows.Close()
	for _, c := range []struct {
		n     *int64
		query string
	}{{&r.Sessions, `SELECT COUNT(*) FROM sessions`}, {&r.Events, `SELECT COUNT(*) FROM events`}, {&r.Snapshots, `SELECT COUNT(*) FROM snapshots`}} {
		if err := db.QueryRowContext(ctx, c.query).Scan(c.n); err != nil && len(r.Problems) == 0 {
			r.Problems = append(r.Problems, describeDamage(err))
		}
	}
	return r, nil
}

// checkConn opens the database for reading only. Where SQLite cannot make
// the index of the write-ahead log beside it (a read-only folder, a full
// disk), it reads as openFull does: an immutable file when there is no
// log, else in exclusive locking mode, with the index in memory.
func checkConn(ctx context.Context, path string) (*sql.DB, error) {
	params := []string{"mode=ro&_busy_timeout=5000", "mode=ro&immutable=1"}
	if _, err := os.Stat(path + "-wal"); err == nil {
		params[1] = "_locking_mode=EXCLUSIVE&_busy_timeout=5000"
	}
	var err error
	for _, p := range params {
		var db *sql.DB
		if db, err = sql.Open("sqlite3", fileURI(path, p)); err != nil {
			break
		}
		if err = db.PingContext(ctx); err == nil || isCorrupt(err) {
			return db, nil
		}
		_ = db.Close()
	}
	return nil, fmt.Errorf("check %s: %w", path, err)
}

// startsWith says what a file that is not an SQLite database starts
// with, or "".
func startsWith(path string) string {
	if s := fileStart(path); s != "" {
		return ": it starts with " + s
	}
	return ""
}

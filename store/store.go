// Package store keeps kz's sessions in SQLite: the append-only event log,
// the runtime-neutral transcript, turns, runtimes' native session ids,
// permission grants, file snapshots for undo, artifacts and usage.
//
// Every string and byte slice that reaches the database passes through one
// function, exec, which redacts secrets. File snapshots are the one
// exception (exactBytes): undo must restore exact content.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is an open kz database.
type Store struct {
	db         *sql.DB
	path       string
	damageOnce sync.Once
	// Recovered is set when Open found the database corrupt, moved it aside
	// and started a fresh one; it says where the old file went.
	Recovered string
}

// ErrNotFound is returned for a session id that matches nothing.
var ErrNotFound = errors.New("no such session")

// dsn applies the pragmas on every pooled connection: mattn/go-sqlite3 runs
// the _ parameters on each new connection, while a one-off PRAGMA statement
// would reach only one of them. secure_delete overwrites what a delete
// frees, so a deleted session (perhaps deleted for what was pasted into it)
// does not live on in free pages; see Scrub for the write-ahead log.
func dsn(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate&_secure_delete=on"
}

// Scrub moves the write-ahead log into the database and empties it. The log
// keeps old page images until it is reset, so after a delete it still holds
// what was deleted; with secure_delete the database itself does not.
//
// A checkpoint that another connection keeps from finishing (a reader, the
// writer's own checkpointer) says so in its result instead of failing: it
// is tried again for a while, then reported.
func (s *Store) Scrub(ctx context.Context) error {
	for try := 0; ; try++ {
		var busy, log, done int
		if err := s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
			return fmt.Errorf("scrub the write-ahead log: %w", err)
		}
		if busy == 0 {
			return nil
		}
		if try == 50 {
			return errors.New("scrub the write-ahead log: another connection kept it busy; it is emptied when the last kz using the database ends")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("scrub the write-ahead log: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// damagedSuffix names the marker written beside a database in which damage
// showed only after it was opened: a read or write of pages that opening
// does not touch failed as corrupt. That operation fails with its error
// there and then; the next Open finds the marker and moves the database
// aside like one that fails to open, so the damage is reported once and
// does not make every later session fail.
const damagedSuffix = ".damaged"

// noteDamage writes the damage marker when *errp says the database is
// corrupt. Writing it is best effort: the error itself already reaches the
// person.
func (s *Store) noteDamage(errp *error) {
	if *errp == nil || !isCorrupt(*errp) {
		return
	}
	s.damageOnce.Do(func() {
		_ = os.WriteFile(s.path+damagedSuffix, []byte((*errp).Error()+"\n"), 0o600)
	})
	*errp = fmt.Errorf("%w (the database is damaged: the next kz moves it aside, keeping the file, and starts a fresh one)", *errp)
}

// Open opens (or creates) the database at path with mode 0600 in a 0700
// directory, applies the migrations, and closes turns that a killed kz left
// open. A corrupt database is moved aside to <path>.corrupt-<timestamp>,
// reported in Recovered, and replaced by a fresh one; so is one in which an
// earlier kz found damage (see damagedSuffix).
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	err := earlierDamage(path)
	if err == nil {
		s, oerr := openChecked(ctx, path)
		if oerr == nil {
			return s, nil
		}
		if !isCorrupt(oerr) {
			return nil, oerr
		}
		err = oerr
	}
	aside, merr := moveAside(path)
	if merr != nil {
		return nil, fmt.Errorf("database %s is corrupt (%v) and could not be moved aside: %w", path, err, merr)
	}
	s, err2 := openChecked(ctx, path)
	if err2 != nil {
		return nil, fmt.Errorf("database %s was corrupt and moved to %s, but a fresh one failed: %w", path, aside, err2)
	}
	s.Recovered = fmt.Sprintf("database %s was corrupt (%v); it was moved to %s and a fresh one was started", path, err, aside)
	return s, nil
}

// earlierDamage returns the damage an earlier kz recorded beside the
// database at path (see damagedSuffix), or nil. A marker whose database is
// gone is dropped.
func earlierDamage(path string) error {
	mark, err := os.ReadFile(path + damagedSuffix)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		_ = os.Remove(path + damagedSuffix)
		return nil
	}
	return fmt.Errorf("an earlier kz found it damaged: %s", strings.TrimSpace(string(mark)))
}

func openChecked(ctx context.Context, path string) (*Store, error) {
	// Create the file with mode 0600 before SQLite does, since SQLite gives
	// the -wal and -shm files the mode of the main file.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	_ = f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Chmod(path+suffix, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = db.Close()
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
	}
	if err := s.recoverOpenTurns(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return s, nil
}

// isCorrupt reports whether err says the file is not a usable database, as
// opposed to one kz cannot read (permissions), which must never be moved.
func isCorrupt(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	msg := err.Error()
	return strings.Contains(msg, "file is not a database") || strings.Contains(msg, "malformed")
}

func moveAside(path string) (string, error) {
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000")
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	for _, suffix := range []string{"-wal", "-shm", damagedSuffix} {
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return aside, err
		}
	}
	return aside, nil
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// IntegrityCheck runs PRAGMA integrity_check and returns its verdict.
func (s *Store) IntegrityCheck(ctx context.Context) (string, error) {
	var out string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&out); err != nil {
		return "", fmt.Errorf("integrity check: %w", err)
	}
	return out, nil
}

// migrate applies each embedded migration once, in its own immediate
// transaction, recording it in schema_migrations in the same transaction.
// Two processes opening a new database at once serialise on the write lock
// and the second finds the version applied.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		base := filepath.Base(name)
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: bad version: %w", base, err)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
		if err := s.applyMigration(ctx, v, string(body)); err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, version int, body string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, version, time.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// execer is a *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// exactBytes marks file content that must be stored byte for byte: a
// snapshot that undo restores. It is the only text exec does not redact;
// files the tools write are the person's own and never rewritten.
type exactBytes []byte

// exec is the one funnel through which kz writes to the database. Every
// string and []byte argument (tool output kept as an artifact included) is
// redacted here; only exactBytes pass unchanged.
func exec(ctx context.Context, x execer, query string, args ...any) (sql.Result, error) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			// Storing the same string back would box it again: one
			// allocation per argument, millions in a long stream.
			if r := Redact(v); r != v {
				args[i] = r
			}
		case []byte:
			if r := Redact(string(v)); r != string(v) {
				args[i] = []byte(r)
			}
		case exactBytes:
			args[i] = []byte(v)
		}
	}
	return x.ExecContext(ctx, query, args...)
}

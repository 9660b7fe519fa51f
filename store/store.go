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
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"

	// A build without cgo stops at needcgo with one line saying why.
	_ "github.com/kaizen-code/kz/internal/needcgo"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is an open kz database.
type Store struct {
	db         *sql.DB
	path       string
	damageOnce sync.Once
	lock       *dbLock
	// full says Open found the disk full and opened for reading only.
	full bool
	// Recovered says, in one line, what Open found wrong with the
	// database and what it did: a salvage (see SalvageReport), or turns a
	// dead kz left open that a full disk kept it from closing. Empty
	// when all was well.
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
	return fileURI(path, "_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate&_secure_delete=on")
}

// fileURI is the SQLite URI of the file at path with the given query: the
// path is escaped, since a ?, # or % in a folder name would otherwise be
// read as part of the URI.
func fileURI(path, query string) string {
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: query}
	return u.String()
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
// there and then; the next Open finds the marker and salvages the database
// like one that fails to open, so the damage is reported once and does
// not make every later session fail.
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
	*errp = fmt.Errorf("%w (the database is damaged: kz doctor --salvage, or the next kz, copies what can be read into a fresh database and keeps the damaged file)", *errp)
}

// ForeignError says the file at the database's path is an SQLite database
// that is not kz's. kz leaves it alone.
type ForeignError struct {
	Path   string
	Tables []string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s is an SQLite database that is not kz's (its tables: %s); kz leaves it as it is: move it away, or give kz another folder with --data-dir",
		e.Path, strings.Join(e.Tables, ", "))
}

// Open opens (or creates) the database at path with mode 0600 in a 0700
// directory, applies the migrations, and closes turns that a killed kz left
// open. A database that is damaged (it fails to open, an earlier kz found
// damage in it, or it is an empty file) is salvaged (see salvage.go) and
// Recovered says what was found, recovered and lost. A database of another
// program is refused (ForeignError), never replaced.
//
// Open holds the database's shared lock (see lock.go) until Close.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	lock, err := lockShared(ctx, path)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, path, lock)
	if err != nil {
		lock.release()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func open(ctx context.Context, path string, lock *dbLock) (*Store, error) {
	damage := earlierDamage(path)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := create(ctx, path); err != nil {
			return nil, err
		}
	}
	if damage == nil {
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			// kz creates a database whole before giving it its name, so
			// an empty file is one that lost its content.
			damage = errors.New("it is an empty file (0 bytes)")
		}
	}
	if damage == nil {
		if err := checkForeign(ctx, path); err != nil {
			return nil, err
		}
		s, err := openChecked(ctx, path)
		if err != nil && isFull(err) {
			if ro, rerr := openFull(ctx, path); rerr == nil {
				return ro, nil
			}
		}
		if err == nil || !isCorrupt(err) {
			return s, err
		}
		damage = err
	}
	found := describeDamage(damage) + startsWith(path)
	if err := lock.exclusive(ctx); err != nil {
		if !errors.Is(err, ErrDatabaseInUse) {
			return nil, err
		}
		// Another kz has the database open: salvaging would take the file
		// from under it. Read it as it is, if it opens.
		s, oerr := openChecked(ctx, path)
		if oerr != nil {
			return nil, fmt.Errorf("database %s is damaged (%s) and another kz is using it: end it, then run kz doctor --salvage", path, found)
		}
		s.Recovered = fmt.Sprintf("database %s is damaged (%s); another kz is using it, so it was not salvaged: end it, then run kz doctor --salvage", path, found)
		return s, nil
	}
	rep, err := salvage(ctx, path, found)
	if serr := lock.shared(ctx); err == nil {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("database %s is damaged (%s) and could not be salvaged: %w", path, found, err)
	}
	s, err := openChecked(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("database %s was salvaged, but the salvaged database failed to open: %w", path, err)
	}
	s.Recovered = rep.String()
	return s, nil
}

// checkForeign refuses an SQLite database of another program before kz
// opens it as its own: a connection with kz's settings would already
// switch it to the write-ahead log. kz's own databases are always in that
// mode, so only a file in another mode needs a look at its tables first.
func checkForeign(ctx context.Context, path string) error {
	hdr := make([]byte, 100)
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	_, err = io.ReadFull(f, hdr)
	_ = f.Close()
	if err != nil || !hasMagic(hdr) || hdr[18] == 2 {
		return nil
	}
	db, err := sql.Open("sqlite3", fileURI(path, "mode=ro"))
	if err != nil {
		return nil
	}
	defer func() { _ = db.Close() }()
	return (&Store{db: db, path: path}).checkKz(ctx)
}

// fileStart quotes the first bytes of a file that is not an SQLite
// database, so that the person can tell what it was; "" for an SQLite
// file, an empty one or one that cannot be read.
func fileStart(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, 16)
	n, _ := io.ReadFull(f, b)
	if n == 0 || hasMagic(b[:n]) {
		return ""
	}
	return strconv.Quote(string(b[:n]))
}

// describeDamage says in a few words what is wrong: SQLite's own message
// without the context kz wrapped around it.
func describeDamage(err error) string {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// create makes a new database at path: it is created and migrated under a
// name of its own, then linked into place, so that no kz ever finds a
// database half made, and an empty file at path always means damage. When
// another kz creates it at the same moment, the first link wins and the
// other's copy is dropped.
func create(ctx context.Context, path string) error {
	tmp := fmt.Sprintf("%s.new-%d", path, os.Getpid())
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(tmp + suffix)
		}
	}()
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		return fmt.Errorf("create database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", dsn(tmp))
	if err != nil {
		return fmt.Errorf("create database %s: %w", path, err)
	}
	err = (&Store{db: db, path: tmp}).migrate(ctx)
	if err == nil {
		_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncFile(tmp)
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: a rename, which another kz
		// creating the database at the same moment could overtake.
		if _, serr := os.Lstat(path); !errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("create database %s: %w", path, err)
		}
	}
	syncDir(filepath.Dir(path))
	return nil
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
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.checkKz(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
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
		if !isFull(err) {
			_ = db.Close()
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
		// With the disk full, the sessions can still be read: the turns
		// stay open (they show as running) until a kz with room closes
		// them.
		s.Recovered = fmt.Sprintf("the disk holding %s is full, so turns that a killed kz left open could not be closed yet (%v)", path, err)
	}
	return s, nil
}

// checkKz refuses a database that holds tables but not kz's: migrating it
// would write kz's tables into another program's database.
func (s *Store) checkKz(ctx context.Context) error {
	names, err := tableNames(ctx, s.db)
	if err != nil {
		return fmt.Errorf("open database %s: %w", s.path, err)
	}
	if len(names) == 0 || names["schema_migrations"] {
		return nil
	}
	var tables []string
	for n := range names {
		if !strings.HasPrefix(n, "sqlite_") {
			tables = append(tables, n)
		}
	}
	if len(tables) == 0 {
		return nil
	}
	sort.Strings(tables)
	return &ForeignError{Path: s.path, Tables: tables}
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

// isFull reports whether err says the disk (or the quota) is full.
func isFull(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC || se.SystemErrno == syscall.EDQUOT) {
		return true
	}
	msg := err.Error()
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "no space left on device")
}

// openFull opens the database for reading when the disk is too full for
// SQLite to make the index of its write-ahead log (the -shm file). Without
// a log the file holds everything and is read as immutable, taking no
// lock; with one, in exclusive locking mode, where SQLite keeps the index
// in memory (and holds the lock until Close). Reading writes nothing. The
// sessions are shown as they are; a turn of a kz that died stays open
// until there is room to close it.
func openFull(ctx context.Context, path string) (*Store, error) {
	params := "mode=ro&immutable=1"
	if _, err := os.Stat(path + "-wal"); err == nil {
		params = "_locking_mode=EXCLUSIVE"
	}
	s, err := openRO(ctx, path, params)
	if err != nil {
		return nil, err
	}
	s.full = true
	s.Recovered = fmt.Sprintf("the disk holding %s is full: the sessions are shown as they are, and nothing can be saved until space is freed", path)
	return s, nil
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database and lets its lock go.
func (s *Store) Close() error {
	err := s.db.Close()
	s.lock.release()
	return err
}

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

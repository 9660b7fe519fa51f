package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/mattn/go-sqlite3"
)

// IsReadOnly reports whether an error of Open says that kz may not write
// the database or the directory it lives in (a read-only mount, a folder
// without write permission), as opposed to a damaged or missing database.
func IsReadOnly(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrReadonly || se.Code == sqlite3.ErrCantOpen || se.Code == sqlite3.ErrPerm) {
		return true
	}
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// OpenReadOnly opens an existing database for reading only, for commands
// that show sessions when Open cannot write (see IsReadOnly). It writes
// nothing at all: no migration, no recovery of turns a killed kz left
// open (they show as running), no mode changes. A database this kz would
// still have to migrate is refused, since its queries expect the current
// schema.
//
// SQLite can read a WAL database read-only only when its -wal and -shm
// files exist or can be created. In a read-only folder where neither
// exists, no connection has the database open (the last one to close
// removes them) and the main file holds everything, so it is opened as
// immutable: without locks, which nothing could take there anyway. A
// -wal file without its -shm may hold commits the main file lacks, and is
// refused rather than shown stale.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open database %s read-only: %w", path, err)
	}
	s, err := openRO(ctx, path, "mode=ro")
	if err == nil {
		return s, nil
	}
	_, walErr := os.Stat(path + "-wal")
	_, shmErr := os.Stat(path + "-shm")
	if !errors.Is(walErr, fs.ErrNotExist) || !errors.Is(shmErr, fs.ErrNotExist) {
		return nil, err
	}
	return openRO(ctx, path, "mode=ro&immutable=1")
}

func openRO(ctx context.Context, path, params string) (*Store, error) {
	db, err := sql.Open("sqlite3", fileURI(path, params+"&_busy_timeout=5000&_foreign_keys=on"))
	if err != nil {
		return nil, fmt.Errorf("open database %s read-only: %w", path, err)
	}
	var have int
	if err := db.QueryRowContext(ctx, `SELECT IFNULL(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %s read-only: %w", path, err)
	}
	want, err := latestMigration()
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if have < want {
		_ = db.Close()
		return nil, fmt.Errorf("database %s must be upgraded by this kz first, which needs write access to %s", path, filepath.Dir(path))
	}
	return &Store{db: db, path: path}, nil
}

// latestMigration is the version of the newest embedded migration.
func latestMigration() (int, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	latest := 0
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(filepath.Base(name), "_", 2)[0])
		if err != nil {
			return 0, fmt.Errorf("migration %s: bad version: %w", name, err)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

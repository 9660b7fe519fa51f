package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Every kz that opens the database holds a shared flock(2) on <path>.lock
// for as long as it has it open; a salvage, which replaces the database
// file, needs it exclusive. So a salvage never pulls the file from under a
// kz that is still writing to it (its writes would go to the file set
// aside and be lost), and a kz that starts during a salvage waits for it
// and then opens the salvaged database. Like a session's claim, the lock
// dies with its holder, kill -9 included.
//
// The lock is a file of its own: a flock on the database itself would be
// safe, but closing any descriptor of the database file drops the POSIX
// locks SQLite holds on it in this process.

// ErrDatabaseInUse is matched (errors.Is) by the error of a salvage that
// other kz processes keep from starting.
var ErrDatabaseInUse = errors.New("another kz is using the database")

// dbLock is this process's hold on a database; nil holds nothing (a
// read-only folder, where no salvage can happen either).
type dbLock struct{ f *os.File }

// lockPoll is how often a blocked lock is tried again.
const lockPoll = 20 * time.Millisecond

// lockShared takes the shared lock of the database at path, waiting while
// a salvage holds it exclusively. Where the lock file cannot be created
// (see above) it returns nil and no error.
func lockShared(ctx context.Context, path string) (*dbLock, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		// A read-only folder, or a disk too full for one more file:
		// reading needs no lock, and no salvage can happen there.
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || isFull(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("lock database %s: %w", path, err)
	}
	l := &dbLock{f: f}
	if err := l.wait(ctx, unix.LOCK_SH); err != nil {
		_ = f.Close()
		return nil, err
	}
	return l, nil
}

// wait takes the lock how (shared or exclusive), trying again until it is
// free or ctx ends. flock cannot wait with a deadline, so it is polled.
func (l *dbLock) wait(ctx context.Context, how int) error {
	for {
		err := flock(l.f, how|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock database: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a salvage of the database to end: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// exclusive turns the shared lock into an exclusive one, or fails with
// ErrDatabaseInUse when another process holds the lock. Converting is not
// atomic (flock drops the old lock first), so a failed attempt takes the
// shared lock again before it returns.
func (l *dbLock) exclusive(ctx context.Context) error {
	if l == nil {
		return nil
	}
	err := flock(l.f, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if werr := l.wait(ctx, unix.LOCK_SH); werr != nil {
		return errors.Join(err, werr)
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrDatabaseInUse
	}
	return fmt.Errorf("lock database: %w", err)
}

// shared turns an exclusive lock back into a shared one. Should another
// process's salvage take the lock in between, this waits for it to end.
func (l *dbLock) shared(ctx context.Context) error {
	if l == nil {
		return nil
	}
	return l.wait(ctx, unix.LOCK_SH)
}

// release lets the lock go.
func (l *dbLock) release() {
	if l != nil {
		_ = l.f.Close()
	}
}

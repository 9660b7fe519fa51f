package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/internal/proc"
)

// A session is used by at most one kz process at a time: two processes
// appending to one session would both number their events from the same
// last sequence number and one of them would lose its turn, and deleting a
// session under a live writer would make its writes fail. So a process
// claims a session before its first turn and keeps the claim until it
// ends.
//
// A claim is an exclusive flock(2) on <data dir>/locks/<session id>.lock.
// The kernel releases the lock when the last descriptor of the open file
// goes away, which happens when the process exits for any reason, kill -9
// included, so a claim can never outlive its holder and needs no clean-up.
// The lock file holds the holder's pid and start time, only to name the
// holder in the refusal; the lock, not the file, is the claim.

// ErrInUse is matched (errors.Is) by the error of a claim that another kz
// process holds.
var ErrInUse = errors.New("session is in use by another kz")

// InUseError says that another kz process holds a session, and which.
type InUseError struct {
	ID string
	// PID is the holder's process id, or 0 when it could not be read.
	PID int
	// Hint says what the person can do; the default suits resuming.
	Hint string
}

func (e *InUseError) Error() string {
	who := "another kz"
	if e.PID > 0 {
		who += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	hint := e.Hint
	if hint == "" {
		hint = "wait for it to finish or start a new session"
	}
	return fmt.Sprintf("session %s is in use by %s; %s", e.ID, who, hint)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// Claim is this process's exclusive use of one session. Release ends it;
// so does the end of the process.
type Claim struct {
	id   string
	path string
	mu   sync.Mutex
	f    *os.File
}

// ID returns the claimed session's id.
func (c *Claim) ID() string { return c.id }

// claimDir is where the lock files live: beside the database, so every kz
// that shares a database shares the claims.
func (s *Store) claimDir() string { return filepath.Join(filepath.Dir(s.path), "locks") }

// ClaimSession claims session id for this process, or fails with an
// *InUseError when another process (or another claim of this process)
// holds it. It never waits. The id need not exist in the database yet: a
// new session is claimed before its first event creates it.
func (s *Store) ClaimSession(_ context.Context, id string) (*Claim, error) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`+"\x00") {
		return nil, fmt.Errorf("claim session %q: not a session id", id)
	}
	dir := s.claimDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("claim session %s: %w", id, err)
	}
	path := filepath.Join(dir, id+".lock")
	// A deleted session's lock file is removed while its claim is held. A
	// process that opened the file just before may then lock the removed
	// file, which no one else can find any more; it notices that the path
	// no longer names the file it locked and starts over. A few rounds are
	// more than any real interleaving needs.
	for range 8 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("claim session %s: %w", id, err)
		}
		if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			pid := holder(f)
			_ = f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &InUseError{ID: id, PID: pid}
			}
			return nil, fmt.Errorf("claim session %s: lock %s: %w", id, path, err)
		}
		if !samePath(f, path) {
			_ = f.Close()
			continue
		}
		// Name the holder for whoever is refused; a failure here only
		// makes that message vaguer.
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(fmt.Sprintf("%d %d\n", os.Getpid(), proc.SelfStart())), 0)
		}
		return &Claim{id: id, path: path, f: f}, nil
	}
	return nil, fmt.Errorf("claim session %s: its lock file %s keeps being replaced", id, path)
}

// Release ends the claim. Releasing twice is harmless.
func (c *Claim) Release() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	// Closing the last descriptor releases the lock. The file is emptied
	// first so that a stale pid is not read back by a later refusal.
	_ = c.f.Truncate(0)
	err := c.f.Close()
	c.f = nil
	if err != nil {
		return fmt.Errorf("release session %s: %w", c.id, err)
	}
	return nil
}

// releaseAndRemove removes the lock file while the claim still holds it,
// then releases it: the session is gone and so is its lock file.
func (c *Claim) releaseAndRemove() error {
	c.mu.Lock()
	if c.f != nil {
		_ = os.Remove(c.path)
	}
	c.mu.Unlock()
	return c.Release()
}

// flock calls flock(2), retrying when a signal interrupts it.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if err != nil {
		return false
	}
	return os.SameFile(a, b)
}

// holder reads the pid a claim's holder wrote into its lock file, or 0
// when the file names no process that still runs.
func holder(f *os.File) int {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0
	}
	pid, err1 := strconv.Atoi(fields[0])
	start, err2 := strconv.ParseInt(fields[1], 10, 64)
	if err1 != nil || err2 != nil || !proc.Alive(pid, start) {
		return 0
	}
	return pid
}

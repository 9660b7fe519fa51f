package store

import (
	"context"
	"database/sql"
	"time"
)

// The writer commits on a connection of its own whose automatic checkpoint
// is off; a goroutine beside it moves the write-ahead log into the
// database on another connection. SQLite otherwise checkpoints inside the
// commit that fills the log to 1000 pages, and that commit then waits for
// two fsyncs: every tenth of a second or so on a busy stream, long enough
// to show as a pause before the next line appears, since nothing is shown
// before it is committed. A passive checkpoint never blocks a writer.

// checkpointGap is the least time between two checkpoints: each costs two
// fsyncs, and the log meanwhile grows by at most what a tenth of a second
// of events writes.
const checkpointGap = 100 * time.Millisecond

// writerConn returns a connection for the writer alone, with automatic
// checkpoints off, or nil (the writer then uses the pool, and SQLite
// checkpoints as usual) when it cannot be had.
func (s *Store) writerConn() *sql.Conn {
	ctx := context.Background()
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil
	}
	if _, err := c.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0"); err != nil {
		_ = c.Close()
		return nil
	}
	return c
}

// checkpoints runs a passive checkpoint after commits, at most one per
// checkpointGap, until stop is closed. A failed checkpoint is left to the
// next one, or to SQLite's own when the last connection closes.
func (s *Store) checkpoints(kick <-chan struct{}, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	var last time.Time
	for {
		select {
		case <-stop:
			return
		case <-kick:
		}
		if wait := checkpointGap - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		_, _ = s.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		last = time.Now()
	}
}

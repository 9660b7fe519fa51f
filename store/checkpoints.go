package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Checkpoint is what one tool call (or the end of a turn) changed in a
// workspace: the files it saw change, each with its state before and
// after. It is recorded whichever runtime made the call.
type Checkpoint struct {
	ID         int64
	SessionID  string
	TurnID     int64
	ToolCallID string
	Tool       string
	Runtime    string
	Workspace  string
	Created    time.Time
	// Undone is when undo or /rewind put the files back; zero while the
	// change stands.
	Undone time.Time
	Files  []CheckpointFile
}

// CheckpointFile is one file of a checkpoint. Before is restorable only
// when its content was kept (BeforeSHA256 names a blob) or the file did
// not exist; a file over the size cap is recorded, not restorable.
type CheckpointFile struct {
	Path         string
	BeforeExists bool
	BeforeSHA256 string
	BeforeMode   fs.FileMode
	AfterExists  bool
	AfterSHA256  string
	AfterSize    int64
	Restorable   bool
}

// BaselineEntry is the last known state of one file of a workspace.
// SHA256 is empty when its content is not kept.
type BaselineEntry struct {
	Path    string
	Size    int64
	MtimeNs int64
	CtimeNs int64
	Ino     uint64
	Mode    fs.FileMode
	SHA256  string
}

// ScanCommit is what one workspace scan learnt, stored in one transaction
// so that a crash never leaves a checkpoint without the baseline it moved,
// nor a baseline naming a blob that is not there.
type ScanCommit struct {
	Workspace string
	// Blobs is new content by SHA-256; content already stored is kept.
	Blobs map[string][]byte
	// Upserts and Deletes move the baseline.
	Upserts []BaselineEntry
	Deletes []string
	// Forget are baseline entries deleted as Deletes are, whose content
	// is then removed too when no baseline entry or checkpoint names it:
	// what no checkpoint may keep (a credential an older kz stored).
	Forget []string
	// Checkpoint, when set and holding files, is recorded; its ID is
	// returned.
	Checkpoint *Checkpoint
}

// CommitScan stores a scan's blobs, baseline changes and checkpoint
// atomically and returns the checkpoint's id (0 when none was recorded).
func (s *Store) CommitScan(ctx context.Context, c ScanCommit) (_ int64, err error) {
	defer s.noteDamage(&err)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("record checkpoint: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	now := time.Now().UnixMilli()
	for sha, content := range c.Blobs {
		if _, err := exec(ctx, tx, `INSERT OR IGNORE INTO blobs(sha256, content, created_at) VALUES (?,?,?)`, sha, exactBytes(content), now); err != nil {
			return 0, fmt.Errorf("record checkpoint: blob: %w", err)
		}
	}
	for _, b := range c.Upserts {
		if _, err := exec(ctx, tx, `INSERT OR REPLACE INTO file_baseline(workspace, path, size, mtime_ns, ctime_ns, ino, mode, sha256) VALUES (?,?,?,?,?,?,?,?)`,
			c.Workspace, b.Path, b.Size, b.MtimeNs, b.CtimeNs, int64(b.Ino), int64(b.Mode), b.SHA256); err != nil {
			return 0, fmt.Errorf("record checkpoint: baseline of %s: %w", b.Path, err)
		}
	}
	for _, p := range c.Deletes {
		if _, err := exec(ctx, tx, `DELETE FROM file_baseline WHERE workspace = ? AND path = ?`, c.Workspace, p); err != nil {
			return 0, fmt.Errorf("record checkpoint: baseline of %s: %w", p, err)
		}
	}
	var forgotten []string
	for _, p := range c.Forget {
		var sha string
		err := tx.QueryRowContext(ctx, `SELECT sha256 FROM file_baseline WHERE workspace = ? AND path = ?`, c.Workspace, p).Scan(&sha)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("record checkpoint: baseline of %s: %w", p, err)
		}
		if sha != "" {
			forgotten = append(forgotten, sha)
		}
		if _, err := exec(ctx, tx, `DELETE FROM file_baseline WHERE workspace = ? AND path = ?`, c.Workspace, p); err != nil {
			return 0, fmt.Errorf("record checkpoint: baseline of %s: %w", p, err)
		}
	}
	var id int64
	if cp := c.Checkpoint; cp != nil && len(cp.Files) > 0 {
		if id, err = insertCheckpoint(ctx, tx, cp, now); err != nil {
			return 0, err
		}
	}
	// After this commit's own rows, so that content it names stays.
	for _, sha := range forgotten {
		if _, err := exec(ctx, tx, `DELETE FROM blobs WHERE sha256 = ?1
			AND NOT EXISTS (SELECT 1 FROM file_baseline WHERE sha256 = ?1)
			AND NOT EXISTS (SELECT 1 FROM checkpoint_files WHERE before_sha256 = ?1 OR after_sha256 = ?1)`, sha); err != nil {
			return 0, fmt.Errorf("record checkpoint: forget content: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("record checkpoint: %w", err)
	}
	return id, nil
}

func insertCheckpoint(ctx context.Context, tx *sql.Tx, cp *Checkpoint, now int64) (int64, error) {
	r, err := exec(ctx, tx, `INSERT INTO checkpoints(session_id, turn_id, tool_call_id, tool, runtime, workspace, created_at) VALUES (?,?,?,?,?,?,?)`,
		cp.SessionID, cp.TurnID, cp.ToolCallID, cp.Tool, cp.Runtime, cp.Workspace, now)
	if err != nil {
		return 0, fmt.Errorf("record checkpoint: %w", err)
	}
	id, err := r.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record checkpoint: %w", err)
	}
	for _, f := range cp.Files {
		if _, err := exec(ctx, tx, `INSERT OR REPLACE INTO checkpoint_files(checkpoint_id, path, before_exists, before_sha256, before_mode, after_exists, after_sha256, after_size, restorable) VALUES (?,?,?,?,?,?,?,?,?)`,
			id, f.Path, f.BeforeExists, f.BeforeSHA256, int64(f.BeforeMode), f.AfterExists, f.AfterSHA256, f.AfterSize, f.Restorable); err != nil {
			return 0, fmt.Errorf("record checkpoint: file %s: %w", f.Path, err)
		}
	}
	return id, nil
}

// Baseline returns the last known state of every file of a workspace.
func (s *Store) Baseline(ctx context.Context, workspace string) (_ []BaselineEntry, err error) {
	defer s.noteDamage(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT path, size, mtime_ns, ctime_ns, ino, mode, sha256 FROM file_baseline WHERE workspace = ?`, workspace)
	if err != nil {
		return nil, fmt.Errorf("read the baseline of %s: %w", workspace, err)
	}
	defer func() { _ = rows.Close() }()
	var out []BaselineEntry
	for rows.Next() {
		var b BaselineEntry
		var ino, mode int64
		if err := rows.Scan(&b.Path, &b.Size, &b.MtimeNs, &b.CtimeNs, &ino, &mode, &b.SHA256); err != nil {
			return nil, fmt.Errorf("read the baseline of %s: %w", workspace, err)
		}
		b.Ino, b.Mode = uint64(ino), fs.FileMode(mode)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the baseline of %s: %w", workspace, err)
	}
	return out, nil
}

// ErrNoBlob means no content is stored under a SHA-256.
var ErrNoBlob = errors.New("no content stored under that hash")

// Blob returns the content stored under a SHA-256.
func (s *Store) Blob(ctx context.Context, sha string) (_ []byte, err error) {
	defer s.noteDamage(&err)
	var b []byte
	err = s.db.QueryRowContext(ctx, `SELECT content FROM blobs WHERE sha256 = ?`, sha).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("blob %s: %w", sha, ErrNoBlob)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", sha, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Checkpoints returns a session's checkpoints recorded in a workspace,
// oldest first, with their files; undone ones only when asked.
func (s *Store) Checkpoints(ctx context.Context, sessionID, workspace string, withUndone bool) (_ []Checkpoint, err error) {
	defer s.noteDamage(&err)
	q := `SELECT id, session_id, turn_id, tool_call_id, tool, runtime, workspace, created_at, undone_at FROM checkpoints WHERE session_id = ? AND workspace = ?`
	if !withUndone {
		q += ` AND undone_at = 0`
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id`, sessionID, workspace)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of %s: %w", sessionID, err)
	}
	var out []Checkpoint
	byID := map[int64]int{}
	for rows.Next() {
		var c Checkpoint
		var created, undone int64
		if err := rows.Scan(&c.ID, &c.SessionID, &c.TurnID, &c.ToolCallID, &c.Tool, &c.Runtime, &c.Workspace, &created, &undone); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("read checkpoints of %s: %w", sessionID, err)
		}
		c.Created = time.UnixMilli(created)
		if undone != 0 {
			c.Undone = time.UnixMilli(undone)
		}
		byID[c.ID] = len(out)
		out = append(out, c)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read checkpoints of %s: %w", sessionID, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	frows, err := s.db.QueryContext(ctx, `SELECT f.checkpoint_id, f.path, f.before_exists, f.before_sha256, f.before_mode, f.after_exists, f.after_sha256, f.after_size, f.restorable
		FROM checkpoint_files f JOIN checkpoints c ON c.id = f.checkpoint_id WHERE c.session_id = ? AND c.workspace = ? ORDER BY f.checkpoint_id, f.path`, sessionID, workspace)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint files of %s: %w", sessionID, err)
	}
	defer func() { _ = frows.Close() }()
	for frows.Next() {
		var id, mode int64
		var f CheckpointFile
		if err := frows.Scan(&id, &f.Path, &f.BeforeExists, &f.BeforeSHA256, &mode, &f.AfterExists, &f.AfterSHA256, &f.AfterSize, &f.Restorable); err != nil {
			return nil, fmt.Errorf("read checkpoint files of %s: %w", sessionID, err)
		}
		f.BeforeMode = fs.FileMode(mode)
		if i, ok := byID[id]; ok {
			out[i].Files = append(out[i].Files, f)
		}
	}
	return out, frows.Err()
}

// MarkCheckpointsUndone records that undo or /rewind put the files of
// these checkpoints back. The rows stay: the history is append-only.
func (s *Store) MarkCheckpointsUndone(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, time.Now().UnixMilli())
	for _, id := range ids {
		args = append(args, id)
	}
	q := `UPDATE checkpoints SET undone_at = ? WHERE id IN (?` + strings.Repeat(",?", len(ids)-1) + `)`
	if _, err := exec(ctx, s.db, q, args...); err != nil {
		return fmt.Errorf("mark checkpoints undone: %w", err)
	}
	return nil
}

// ChangeTime returns when an applied proposal's first snapshot was taken,
// so that undo can tell which of a proposal and a checkpoint came last.
func (s *Store) ChangeTime(ctx context.Context, changeID string) (time.Time, error) {
	var ms int64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(created_at) FROM snapshots WHERE change_id = ?`, changeID).Scan(&ms); err != nil {
		return time.Time{}, fmt.Errorf("time of change %s: %w", changeID, err)
	}
	return time.UnixMilli(ms), nil
}

// LastCheckpointIn returns the session and time of the newest standing
// checkpoint recorded in a workspace; the session is "" when there is
// none.
func (s *Store) LastCheckpointIn(ctx context.Context, workspace string) (string, time.Time, error) {
	var id string
	var ms int64
	err := s.db.QueryRowContext(ctx, `SELECT session_id, created_at FROM checkpoints WHERE workspace = ? AND undone_at = 0 ORDER BY id DESC LIMIT 1`, workspace).Scan(&id, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("last checkpoint in %s: %w", workspace, err)
	}
	return id, time.UnixMilli(ms), nil
}

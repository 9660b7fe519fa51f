package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// Snapshot is the content a file had before kz changed it.
type Snapshot struct {
	SessionID  string
	ChangeID   string
	ToolCallID string
	Path       string
	Existed    bool
	Content    []byte
	Mode       fs.FileMode
	// AfterExists and AfterSHA256 describe what the change left.
	AfterExists bool
	AfterSHA256 string
	// Workspace is the absolute folder the change was applied in; Path is
	// relative to it. It is empty for tool writes, which undo does not
	// take back by change.
	Workspace string
	// CreatedDirs are the directories (relative to Workspace, parents
	// first) that did not exist before the change and that it created to
	// hold this file.
	CreatedDirs []string
	Created     time.Time
}

// SaveSnapshot records a file's previous content. It must be called before
// the file is written, so a crash in between leaves a snapshot, not a loss.
func (s *Store) SaveSnapshot(ctx context.Context, sn Snapshot) error {
	if sn.ChangeID == "" || sn.Path == "" {
		return errors.New("save snapshot: change id and path are required")
	}
	content := exactBytes(sn.Content)
	if content == nil {
		content = exactBytes{}
	}
	_, err := exec(ctx, s.db, `INSERT INTO snapshots(session_id, change_id, tool_call_id, path, existed, content, mode, after_exists, after_sha256, workspace, created_dirs, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		sn.SessionID, sn.ChangeID, sn.ToolCallID, sn.Path, sn.Existed, content, int64(sn.Mode), sn.AfterExists, sn.AfterSHA256,
		sn.Workspace, strings.Join(sn.CreatedDirs, "\n"), time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("save snapshot of %s: %w", sn.Path, err)
	}
	return nil
}

// Snapshots returns the snapshots of one change in the order they were taken.
func (s *Store) Snapshots(ctx context.Context, changeID string) ([]Snapshot, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, change_id, tool_call_id, path, existed, content, mode, after_exists, after_sha256, workspace, created_dirs, created_at FROM snapshots WHERE change_id = ? ORDER BY id`, changeID)
	if err != nil {
		return nil, fmt.Errorf("read snapshots: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Snapshot
	for rows.Next() {
		var sn Snapshot
		var mode, created int64
		var dirs string
		if err := rows.Scan(&sn.SessionID, &sn.ChangeID, &sn.ToolCallID, &sn.Path, &sn.Existed, &sn.Content, &mode, &sn.AfterExists, &sn.AfterSHA256, &sn.Workspace, &dirs, &created); err != nil {
			return nil, fmt.Errorf("read snapshots: %w", err)
		}
		sn.Mode, sn.Created = fs.FileMode(mode), time.UnixMilli(created)
		if dirs != "" {
			sn.CreatedDirs = strings.Split(dirs, "\n")
		}
		out = append(out, sn)
	}
	return out, rows.Err()
}

// Change names an applied proposal and the folder it was applied in.
type Change struct {
	ID        string
	SessionID string
	// Workspace is the absolute folder of the change; empty only for a
	// change whose session was gone when the folder was first recorded.
	Workspace string
}

// LastChange returns the newest applied proposal with snapshots in a
// session, or a Change with an empty ID when there is none.
func (s *Store) LastChange(ctx context.Context, sessionID string) (Change, error) {
	c := Change{SessionID: sessionID}
	// Only proposals applied as a whole are undone by change; a single tool
	// write (change ids "tool_…") is undone from the review of issue 9.
	err := s.db.QueryRowContext(ctx, `SELECT change_id, workspace FROM snapshots WHERE session_id = ? AND change_id LIKE 'chg\_%' ESCAPE '\' ORDER BY id DESC LIMIT 1`, sessionID).Scan(&c.ID, &c.Workspace)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("last change: %w", err)
	}
	return c, nil
}

// LastChangeOfSessionIn returns the newest applied proposal of a session
// in a folder, or a Change with an empty ID when there is none. A change
// recorded without a folder (before folders were recorded) counts as in
// every folder: the caller has nothing else to go by.
func (s *Store) LastChangeOfSessionIn(ctx context.Context, sessionID, workspace string) (Change, error) {
	c := Change{SessionID: sessionID}
	err := s.db.QueryRowContext(ctx, `SELECT change_id, workspace FROM snapshots WHERE session_id = ? AND (workspace = ? OR workspace = '') AND change_id LIKE 'chg\_%' ESCAPE '\' ORDER BY id DESC LIMIT 1`, sessionID, workspace).Scan(&c.ID, &c.Workspace)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("last change of session %s in %s: %w", sessionID, workspace, err)
	}
	return c, nil
}

// ChangesOfSessionSince returns the applied proposals of a session in a
// folder whose snapshots were taken at or after since, each with the
// paths it changed (a change recorded without a folder counts as in
// every folder, as in LastChangeOfSessionIn).
func (s *Store) ChangesOfSessionSince(ctx context.Context, sessionID, workspace string, since time.Time) (_ map[string][]string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT change_id, path FROM snapshots WHERE session_id = ? AND (workspace = ? OR workspace = '') AND change_id LIKE 'chg\_%' ESCAPE '\' AND change_id IN (SELECT change_id FROM snapshots GROUP BY change_id HAVING MAX(created_at) >= ?) ORDER BY id`,
		sessionID, workspace, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("changes of session %s since %s: %w", sessionID, since, err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string][]string{}
	for rows.Next() {
		var id, path string
		if err := rows.Scan(&id, &path); err != nil {
			return nil, fmt.Errorf("changes of session %s since %s: %w", sessionID, since, err)
		}
		out[id] = append(out[id], path)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes of session %s since %s: %w", sessionID, since, err)
	}
	return out, nil
}

// ChangeFolders returns the folders a session's applied proposals were
// applied in, the folder of its newest change first; a change recorded
// without a folder is left out.
func (s *Store) ChangeFolders(ctx context.Context, sessionID string) (_ []string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT workspace FROM snapshots WHERE session_id = ? AND workspace != '' AND change_id LIKE 'chg\_%' ESCAPE '\' GROUP BY workspace ORDER BY MAX(id) DESC`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("folders of the changes of session %s: %w", sessionID, err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return nil, fmt.Errorf("folders of the changes of session %s: %w", sessionID, err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("folders of the changes of session %s: %w", sessionID, err)
	}
	return out, nil
}

// LastChangeIn returns the newest applied proposal of any session in a
// folder, or a Change with an empty ID when there is none.
func (s *Store) LastChangeIn(ctx context.Context, workspace string) (Change, error) {
	c := Change{Workspace: workspace}
	err := s.db.QueryRowContext(ctx, `SELECT change_id, session_id FROM snapshots WHERE workspace = ? AND change_id LIKE 'chg\_%' ESCAPE '\' ORDER BY id DESC LIMIT 1`, workspace).Scan(&c.ID, &c.SessionID)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("last change in %s: %w", workspace, err)
	}
	return c, nil
}

// DeleteChange forgets the snapshots of an undone change, so the next undo
// reaches the change before it.
func (s *Store) DeleteChange(ctx context.Context, changeID string) error {
	if _, err := exec(ctx, s.db, `DELETE FROM snapshots WHERE change_id = ?`, changeID); err != nil {
		return fmt.Errorf("forget change %s: %w", changeID, err)
	}
	return nil
}

// SaveArtifact keeps a tool result whole and returns a reference to it.
func (s *Store) SaveArtifact(ctx context.Context, sessionID, toolCallID string, content []byte) (string, error) {
	r, err := exec(ctx, s.db, `INSERT INTO artifacts(session_id, tool_call_id, content, created_at) VALUES (?,?,?,?)`,
		sessionID, toolCallID, content, time.Now().UnixMilli())
	if err != nil {
		return "", fmt.Errorf("save artifact: %w", err)
	}
	id, err := r.LastInsertId()
	if err != nil {
		return "", fmt.Errorf("save artifact: %w", err)
	}
	return "artifact:" + strconv.FormatInt(id, 10), nil
}

// Artifact returns the content behind a reference from SaveArtifact.
func (s *Store) Artifact(ctx context.Context, ref string) ([]byte, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(ref, "artifact:"), 10, 64)
	if err != nil || !strings.HasPrefix(ref, "artifact:") {
		return nil, fmt.Errorf("artifact %q: not an artifact reference", ref)
	}
	var b []byte
	if err := s.db.QueryRowContext(ctx, `SELECT content FROM artifacts WHERE id = ?`, id).Scan(&b); err != nil {
		return nil, fmt.Errorf("artifact %s: %w", ref, err)
	}
	return b, nil
}

// ReadArtifact returns the content behind a reference when it belongs to
// the session; another session's artifact is not found, so a model reads
// only what its own session stored.
func (s *Store) ReadArtifact(ctx context.Context, sessionID, ref string) ([]byte, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(ref, "artifact:"), 10, 64)
	if err != nil || !strings.HasPrefix(ref, "artifact:") {
		return nil, fmt.Errorf("artifact %q: not an artifact reference", ref)
	}
	var b []byte
	err = s.db.QueryRowContext(ctx, `SELECT content FROM artifacts WHERE id = ? AND session_id = ?`, id, sessionID).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("artifact %s: no such artifact in this session", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", ref, err)
	}
	return b, nil
}

// Grant is a remembered permission answer.
type Grant struct {
	ID        int64
	SessionID string // empty for a persisted "always" grant
	Scope     string
	Tool      string
	Pattern   string
	Created   time.Time
}

// AddGrant records a grant; adding the same grant twice is not an error.
func (s *Store) AddGrant(ctx context.Context, g Grant) error {
	var sess any
	if g.SessionID != "" {
		sess = g.SessionID
	}
	_, err := exec(ctx, s.db, `INSERT OR IGNORE INTO grants(session_id, scope, tool, pattern, created_at) VALUES (?,?,?,?,?)`,
		sess, g.Scope, g.Tool, g.Pattern, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("save grant: %w", err)
	}
	return nil
}

// Grants lists the grants of a session plus every persisted one.
func (s *Store) Grants(ctx context.Context, sessionID string) ([]Grant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, IFNULL(session_id, ''), scope, tool, pattern, created_at FROM grants WHERE session_id IS NULL OR session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Grant
	for rows.Next() {
		var g Grant
		var created int64
		if err := rows.Scan(&g.ID, &g.SessionID, &g.Scope, &g.Tool, &g.Pattern, &created); err != nil {
			return nil, fmt.Errorf("list grants: %w", err)
		}
		g.Created = time.UnixMilli(created)
		out = append(out, g)
	}
	return out, rows.Err()
}

// DeleteGrant revokes a grant.
func (s *Store) DeleteGrant(ctx context.Context, id int64) error {
	if _, err := exec(ctx, s.db, `DELETE FROM grants WHERE id = ?`, id); err != nil {
		return fmt.Errorf("revoke grant %d: %w", id, err)
	}
	return nil
}

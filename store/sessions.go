package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
)

// SessionInfo summarises a session for lists and pickers. It is the
// engine's, so that the TUI's picker shows what the store lists without
// importing the store.
type SessionInfo = engine.SessionInfo

// sessionCols are the columns scanSession reads from the sessions table,
// which every query naming them selects FROM without an alias: the
// children count is a correlated subquery on sessions.id.
const sessionCols = `id, title, workspace, runtime, runtimes, model, mode, created_at, updated_at, turns, cost_usd, last_seq,
	parent_id, parent_tool_call_id, (SELECT COUNT(*) FROM sessions AS c WHERE c.parent_id = sessions.id)`

func scanSession(sc interface{ Scan(...any) error }) (SessionInfo, error) {
	var si SessionInfo
	var mode string
	var created, updated int64
	var runtimes string
	if err := sc.Scan(&si.ID, &si.Title, &si.Workspace, &si.Runtime, &runtimes, &si.Model, &mode, &created, &updated, &si.Turns, &si.CostUSD, &si.LastSeq,
		&si.Parent, &si.ParentToolCallID, &si.Children); err != nil {
		return si, err
	}
	si.Mode, si.Created, si.Updated = engine.Mode(mode), time.UnixMilli(created), time.UnixMilli(updated)
	if runtimes != "" {
		si.Runtimes = strings.Split(runtimes, ",")
	}
	return si, nil
}

// ListSessions returns the sessions the person started, newest first;
// workspace filters when set. Subagent sessions are not listed: each
// session's Children counts them, and ListChildren lists them.
func (s *Store) ListSessions(ctx context.Context, workspace string, limit int) (_ []SessionInfo, err error) {
	defer s.noteDamage(&err)
	if limit <= 0 {
		limit = 1000
	}
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE parent_id = ''`
	args := []any{}
	if workspace != "" {
		q += ` AND workspace = ?`
		args = append(args, workspace)
	}
	q += ` ORDER BY updated_at DESC, id DESC LIMIT ?`
	args = append(args, limit)
	return s.querySessions(ctx, "list sessions", q, args...)
}

// ListChildren returns the subagent sessions a session spawned, oldest
// first.
func (s *Store) ListChildren(ctx context.Context, parent string) (_ []SessionInfo, err error) {
	defer s.noteDamage(&err)
	return s.querySessions(ctx, "list child sessions", `SELECT `+sessionCols+` FROM sessions WHERE parent_id = ? ORDER BY created_at, id`, parent)
}

// querySessions runs a query selecting sessionCols.
func (s *Store) querySessions(ctx context.Context, what, q string, args ...any) ([]SessionInfo, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer func() { _ = rows.Close() }()
	var out []SessionInfo
	for rows.Next() {
		si, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, si)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Session finds a session by id or by a unique id prefix.
func (s *Store) Session(ctx context.Context, idOrPrefix string) (_ SessionInfo, err error) {
	defer s.noteDamage(&err)
	if idOrPrefix == "" {
		return SessionInfo{}, fmt.Errorf("%w: empty id", ErrNotFound)
	}
	si, err := scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, idOrPrefix))
	if err == nil {
		return si, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return si, fmt.Errorf("find session %s: %w", idOrPrefix, err)
	}
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(idOrPrefix)
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id LIKE ? ESCAPE '\' LIMIT 2`, esc+"%")
	if err != nil {
		return si, fmt.Errorf("find session %s: %w", idOrPrefix, err)
	}
	defer func() { _ = rows.Close() }()
	var found []SessionInfo
	for rows.Next() {
		x, err := scanSession(rows)
		if err != nil {
			return si, fmt.Errorf("find session %s: %w", idOrPrefix, err)
		}
		found = append(found, x)
	}
	switch len(found) {
	case 0:
		return si, fmt.Errorf("%w: %s (kz sessions list shows the ids)", ErrNotFound, idOrPrefix)
	case 1:
		return found[0], nil
	default:
		return si, fmt.Errorf("session id prefix %s is ambiguous: give more of the id", idOrPrefix)
	}
}

// LatestSession returns the most recently updated session of a workspace.
func (s *Store) LatestSession(ctx context.Context, workspace string) (_ SessionInfo, err error) {
	defer s.noteDamage(&err)
	list, err := s.ListSessions(ctx, workspace, 1)
	if err != nil {
		return SessionInfo{}, err
	}
	if len(list) == 0 {
		return SessionInfo{}, fmt.Errorf("%w in %s", ErrNotFound, workspace)
	}
	return list[0], nil
}

// DeleteSession removes a session and everything that hangs off it, in one
// transaction: either all of it goes or nothing does. It claims the session
// first (see ClaimSession), so a session another kz is still writing is
// refused with an *InUseError instead of being pulled from under it.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	c, err := s.ClaimSession(ctx, id)
	if err != nil {
		var iu *InUseError
		if errors.As(err, &iu) {
			iu.Hint = "wait for it to finish, then delete it"
		}
		return err
	}
	if err := s.deleteSession(ctx, id); err != nil {
		_ = c.Release()
		return err
	}
	if err := c.releaseAndRemove(); err != nil {
		return err
	}
	// The rows are gone, and secure_delete zeroed their pages; the
	// write-ahead log still holds the pages as they were until it is
	// emptied.
	return s.Scrub(ctx)
}

func (s *Store) deleteSession(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	// Events, turns, the transcript, usage, native ids and session grants
	// go with the session row (ON DELETE CASCADE); snapshots and artifacts
	// name their session without a foreign key and go explicitly.
	// A session's subagent sessions go with it: they are part of its
	// history, and no list shows them on their own.
	var ids []string
	rows, err := tx.QueryContext(ctx, `SELECT id FROM sessions WHERE parent_id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			_ = rows.Close()
			return fmt.Errorf("delete session %s: %w", id, err)
		}
		ids = append(ids, c)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	for i, sid := range append([]string{id}, ids...) {
		r, err := exec(ctx, tx, `DELETE FROM sessions WHERE id = ?`, sid)
		if err != nil {
			return fmt.Errorf("delete session %s: %w", sid, err)
		}
		if n, _ := r.RowsAffected(); n == 0 && i == 0 {
			return fmt.Errorf("delete session: %w: %s", ErrNotFound, id)
		}
		if _, err := exec(ctx, tx, `DELETE FROM snapshots WHERE session_id = ?`, sid); err != nil {
			return fmt.Errorf("delete session %s: %w", sid, err)
		}
		if _, err := exec(ctx, tx, `DELETE FROM artifacts WHERE session_id = ?`, sid); err != nil {
			return fmt.Errorf("delete session %s: %w", sid, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// RenameSession sets a session's title.
func (s *Store) RenameSession(ctx context.Context, id, title string) error {
	r, err := exec(ctx, s.db, `UPDATE sessions SET title = ? WHERE id = ?`, title, id)
	if err != nil {
		return fmt.Errorf("rename session %s: %w", id, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("rename session: %w: %s", ErrNotFound, id)
	}
	return nil
}

// Transcript returns the runtime-neutral transcript of a session.
func (s *Store) Transcript(ctx context.Context, id string) (_ []engine.TranscriptEntry, err error) {
	defer s.noteDamage(&err)
	// Counting first (from the index alone) sizes the result once: growing
	// a slice of tens of thousands of entries by doubling cost a third of
	// reopening a long session.
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM transcript WHERE session_id = ?`, id).Scan(&n); err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, turn_id, kind, runtime, model, text, tool_call_id, tool, input, output, is_error, status FROM transcript WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", id, err)
	}
	defer func() { _ = rows.Close() }()
	out := make([]engine.TranscriptEntry, 0, n)
	for rows.Next() {
		var e engine.TranscriptEntry
		var kind, input string
		if err := rows.Scan(&e.Seq, &e.TurnID, &kind, &e.Runtime, &e.Model, &e.Text, &e.ToolCallID, &e.Tool, &input, &e.Output, &e.IsError, &e.Status); err != nil {
			return nil, fmt.Errorf("read transcript %s: %w", id, err)
		}
		e.Kind = engine.EntryKind(kind)
		if input != "" {
			e.Input = json.RawMessage(input)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", id, err)
	}
	if err := s.imagesInto(ctx, id, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Events calls fn for each event of a session in sequence order.
func (s *Store) Events(ctx context.Context, id string, fn func(engine.Event) error) (err error) {
	defer s.noteDamage(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT seq, turn_id, runtime, ts, data FROM events WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return fmt.Errorf("read events %s: %w", id, err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var data []byte
		var ev engine.Event
		var ts int64
		if err := rows.Scan(&ev.Seq, &ev.TurnID, &ev.Runtime, &ts, &data); err != nil {
			return fmt.Errorf("read events %s: %w", id, err)
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("read events %s: bad event %d: %w", id, ev.Seq, err)
		}
		ev.SessionID, ev.Time = id, time.Unix(0, ts)
		if err := fn(ev); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read events %s: %w", id, err)
	}
	return nil
}

// TurnInfo summarises one turn.
type TurnInfo struct {
	TurnID  int64     `json:"turn_id"`
	Prompt  string    `json:"prompt"`
	Runtime string    `json:"runtime"`
	Model   string    `json:"model"`
	Status  string    `json:"status"`
	Started time.Time `json:"started"`
	Cycles  int       `json:"cycles"`
	CostUSD float64   `json:"cost_usd"`
}

// Turns lists a session's turns in order; a running turn has no status.
func (s *Store) Turns(ctx context.Context, id string) (_ []TurnInfo, err error) {
	defer s.noteDamage(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT turn_id, prompt, runtime, model, IFNULL(status, ''), started_at, cycles, cost_usd FROM turns WHERE session_id = ? ORDER BY turn_id`, id)
	if err != nil {
		return nil, fmt.Errorf("read turns %s: %w", id, err)
	}
	defer func() { _ = rows.Close() }()
	var out []TurnInfo
	for rows.Next() {
		var t TurnInfo
		var started int64
		if err := rows.Scan(&t.TurnID, &t.Prompt, &t.Runtime, &t.Model, &t.Status, &started, &t.Cycles, &t.CostUSD); err != nil {
			return nil, fmt.Errorf("read turns %s: %w", id, err)
		}
		t.Started = time.UnixMilli(started)
		out = append(out, t)
	}
	return out, rows.Err()
}

// Prior loads what a session needs to continue: sequence and turn counters,
// the transcript, and each runtime's native session id.
func (s *Store) Prior(ctx context.Context, id string) (_ *engine.Prior, err error) {
	defer s.noteDamage(&err)
	p := &engine.Prior{Natives: map[string]engine.NativeRef{}}
	if p.LastSeq, err = s.lastSeq(ctx, id); err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT IFNULL(MAX(turn_id), 0) FROM turns WHERE session_id = ?`, id).Scan(&p.LastTurn); err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT IFNULL(SUM(input_tokens), 0), IFNULL(SUM(output_tokens), 0), IFNULL(SUM(cost_usd), 0) FROM turns WHERE session_id = ?`, id).
		Scan(&p.Usage.InputTokens, &p.Usage.OutputTokens, &p.CostUSD); err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	// Usage outside any turn (turn 0: a /compact's summary) counts too.
	var outside engine.Usage
	var outsideCost float64
	if err := s.db.QueryRowContext(ctx, `SELECT IFNULL(SUM(input_tokens), 0), IFNULL(SUM(output_tokens), 0), IFNULL(SUM(cost_usd), 0) FROM usage WHERE session_id = ? AND turn_id = 0`, id).
		Scan(&outside.InputTokens, &outside.OutputTokens, &outsideCost); err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	p.Usage.Add(outside)
	p.CostUSD += outsideCost
	if err := s.db.QueryRowContext(ctx, `SELECT runtime FROM turns WHERE session_id = ? ORDER BY turn_id DESC LIMIT 1`, id).Scan(&p.LastRuntime); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT runtime, native_id, turn_id FROM native_sessions WHERE session_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	for rows.Next() {
		var rt string
		var ref engine.NativeRef
		if err := rows.Scan(&rt, &ref.ID, &ref.TurnID); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("load session %s: %w", id, err)
		}
		p.Natives[rt] = ref
	}
	_ = rows.Close()
	if p.Transcript, err = s.Transcript(ctx, id); err != nil {
		return nil, err
	}
	return p, nil
}

// recoverOpenTurns closes turns whose kz process died before they ended
// (kill -9, power loss): running tool calls are closed as "interrupted, not
// re-run", streamed text becomes a partial assistant message, and the turn
// ends with status interrupted. It writes these as events, through the same
// path as live events, so the log, the transcript and the turns agree.
func (s *Store) recoverOpenTurns(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, turn_id, pid, pid_start, runtime, model FROM turns WHERE status IS NULL`)
	if err != nil {
		return fmt.Errorf("find open turns: %w", err)
	}
	type open struct {
		session        string
		turn           int64
		pid            int
		pidStart       int64
		runtime, model string
	}
	var dead []open
	for rows.Next() {
		var o open
		if err := rows.Scan(&o.session, &o.turn, &o.pid, &o.pidStart, &o.runtime, &o.model); err != nil {
			_ = rows.Close()
			return fmt.Errorf("find open turns: %w", err)
		}
		if !proc.Alive(o.pid, o.pidStart) {
			dead = append(dead, o)
		}
	}
	_ = rows.Close()
	for _, o := range dead {
		evs, err := s.closingEvents(ctx, o.session, o.turn, o.runtime, o.model)
		if err != nil {
			return err
		}
		if err := s.writeBatch(ctx, evs); err != nil {
			return fmt.Errorf("close interrupted turn %d of %s: %w", o.turn, o.session, err)
		}
	}
	return nil
}

func (s *Store) closingEvents(ctx context.Context, session string, turn int64, runtime, model string) ([]engine.Event, error) {
	// The closing events take the next free sequence numbers: above every
	// stored event and above the session's high mark. Nothing a killed kz
	// printed lies higher, since kz prints an event only once it is
	// stored.
	seq, err := s.lastSeq(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", session, err)
	}
	now := time.Now()
	mk := func(ev engine.Event) engine.Event {
		seq++
		ev.SessionID, ev.Seq, ev.TurnID, ev.Time, ev.Runtime = session, seq, turn, now, runtime
		return ev
	}
	var out []engine.Event
	// Text streamed after the last whole message of the turn.
	var text strings.Builder
	err = s.Events(ctx, session, func(ev engine.Event) error {
		if ev.TurnID != turn {
			return nil
		}
		switch ev.Type {
		case engine.EventTextDelta:
			text.WriteString(ev.Text)
		case engine.EventAssistantMessage:
			text.Reset()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", session, err)
	}
	if text.Len() > 0 {
		out = append(out, mk(engine.Event{Type: engine.EventAssistantMessage, Text: text.String(), Partial: true, Model: model}))
	}
	rows, err := s.db.QueryContext(ctx, `SELECT tool_call_id, tool FROM transcript WHERE session_id = ? AND turn_id = ? AND kind = 'tool_call' AND status = 'running'`, session, turn)
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", session, err)
	}
	for rows.Next() {
		var id, tool string
		if err := rows.Scan(&id, &tool); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("recover %s: %w", session, err)
		}
		out = append(out, mk(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: id, Tool: tool,
			Status: engine.ToolStatusInterrupted, Output: engine.InterruptedNotRerun, IsError: true}))
	}
	_ = rows.Close()
	out = append(out, mk(engine.Event{Type: engine.EventFinalResult, Status: string(engine.StatusInterrupted), Model: model,
		Output: "kz stopped before this turn ended; it was closed as interrupted and nothing was re-run", Usage: &engine.Usage{}}))
	return out, nil
}

// lastSeq is the highest sequence number a session has used: its last
// stored event, or the session's own mark if that is higher (a salvage
// that lost the last events keeps the mark, so that no number is reused).
func (s *Store) lastSeq(ctx context.Context, id string) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT MAX(IFNULL((SELECT MAX(seq) FROM events WHERE session_id = ?1), 0),
		IFNULL((SELECT last_seq FROM sessions WHERE id = ?1), 0))`, id).Scan(&seq)
	return seq, err
}

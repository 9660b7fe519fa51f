package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
)

// How a batch of events is written: the event rows and what they fold
// into (turns, transcript, usage, native ids, the session summary), in one
// transaction.

// CreateSession records a new session before its first event.
func (s *Store) CreateSession(ctx context.Context, id, workspace, runtime, model string, mode engine.Mode) error {
	now := time.Now().UnixMilli()
	_, err := exec(ctx, s.db, `INSERT INTO sessions(id, created_at, updated_at, workspace, runtime, model, mode) VALUES (?,?,?,?,?,?,?)`,
		id, now, now, workspace, runtime, model, string(mode))
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// writeBatch writes events and folds them into the derived tables in one
// transaction.
func (s *Store) writeBatch(ctx context.Context, batch []engine.Event, create ...SessionInfo) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	bt := newBatchTx(tx.PrepareContext)
	defer bt.close()
	if err := bt.write(ctx, batch, create); err != nil {
		return err
	}
	return tx.Commit()
}

// connStmts is the writer's own connection with the statements it has
// prepared on it, kept from batch to batch: preparing them again for
// every batch cost more than writing a small one, and a small batch (the
// first line of an answer, a tool call) is what a person waits for.
type connStmts struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

func (c *connStmts) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = st
	return st, nil
}

func (c *connStmts) close() {
	for _, st := range c.stmts {
		_ = st.Close()
	}
	_ = c.conn.Close()
}

// writeBatch writes a batch in one immediate transaction on the
// connection, with its prepared statements.
func (c *connStmts) writeBatch(ctx context.Context, batch []engine.Event, create ...SessionInfo) (err error) {
	if _, err := c.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// A failed COMMIT (a full disk, a busy lock) can leave the
			// transaction open.
			_, _ = c.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	bt := newBatchTx(c.prepare)
	bt.keep = true
	if err := bt.write(ctx, batch, create); err != nil {
		return err
	}
	_, err = c.conn.ExecContext(ctx, "COMMIT")
	return err
}

// write writes the batch's events and folds them, creating the sessions
// registered to be created with them first.
func (bt *batchTx) write(ctx context.Context, batch []engine.Event, create []SessionInfo) error {
	for _, si := range create {
		now := time.Now().UnixMilli()
		if _, err := exec(ctx, bt, `INSERT OR IGNORE INTO sessions(id, created_at, updated_at, workspace, runtime, model, mode, title, parent_id, parent_tool_call_id) VALUES (?,?,?,?,?,?,?,?,?,?)`,
			si.ID, now, now, si.Workspace, si.Runtime, si.Model, string(si.Mode), si.Title, si.Parent, si.ParentToolCallID); err != nil {
			return fmt.Errorf("create session %s: %w", si.ID, err)
		}
	}
	last := map[string]int64{}
	for i := range batch {
		ev := &batch[i]
		// The columns hold the envelope; the JSON holds the payload only.
		payload := *ev
		payload.SessionID, payload.Seq, payload.TurnID, payload.Runtime, payload.Time = "", 0, 0, "", time.Time{}
		if len(ev.Images) > 0 {
			// The bytes go to the artifacts table; the JSON names them.
			ims, err := storeImages(ctx, bt, ev)
			if err != nil {
				return fmt.Errorf("event %d: %w", ev.Seq, err)
			}
			payload.Images = ims
		}
		data, err := json.Marshal(&payload)
		if err != nil {
			return fmt.Errorf("encode event %d: %w", ev.Seq, err)
		}
		if err := bt.events.add(ctx, bt, ev.SessionID, ev.Seq, ev.TurnID, string(ev.Type), ev.Runtime, ev.Time.UnixNano(), string(data)); err != nil {
			return fmt.Errorf("insert event %d: %w", ev.Seq, err)
		}
		if err := fold(ctx, bt, ev); err != nil {
			return fmt.Errorf("fold event %d: %w", ev.Seq, err)
		}
		last[ev.SessionID] = ev.Seq
	}
	if err := bt.flushRows(ctx); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for id, seq := range last {
		if _, err := exec(ctx, bt, `UPDATE sessions SET last_seq = MAX(last_seq, ?), updated_at = ? WHERE id = ?`, seq, now, id); err != nil {
			return err
		}
	}
	return nil
}

// batchTx is a transaction that prepares each distinct statement once per
// batch (or, on the writer's connection, once), since a batch runs the same
// few statements thousands of times, and that inserts events, transcript
// entries and usage rows many per statement. Transcript entries stay in
// memory until the end of the batch, so a tool call started and finished
// in one batch is written once.
type batchTx struct {
	prepare func(ctx context.Context, query string) (*sql.Stmt, error)
	stmts   map[string]*sql.Stmt
	// keep says the statements outlive the batch (connStmts owns them).
	keep       bool
	events     rowBuffer
	usage      rowBuffer
	transcript []pendingEntry
	// running maps session and tool call id to a pending entry still
	// running, so its finish updates it in memory.
	running map[[2]string]int
}

type pendingEntry struct {
	session string
	e       engine.TranscriptEntry
}

func newBatchTx(prepare func(context.Context, string) (*sql.Stmt, error)) *batchTx {
	return &batchTx{
		prepare: prepare, stmts: map[string]*sql.Stmt{}, running: map[[2]string]int{},
		events: rowBuffer{head: `INSERT INTO events(session_id, seq, turn_id, type, runtime, ts, data) VALUES `, cols: 7},
		usage:  rowBuffer{head: `INSERT OR REPLACE INTO usage(session_id, seq, turn_id, runtime, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd) VALUES `, cols: 10},
	}
}

// rowsPerInsert bounds one multi-row INSERT, well under SQLite's limit on
// bound variables.
const rowsPerInsert = 64

// rowBuffer collects rows of one INSERT and writes them rowsPerInsert at a
// time.
type rowBuffer struct {
	head string
	cols int
	args []any
}

func (r *rowBuffer) add(ctx context.Context, bt *batchTx, vals ...any) error {
	r.args = append(r.args, vals...)
	if len(r.args) >= rowsPerInsert*r.cols {
		return r.flush(ctx, bt)
	}
	return nil
}

func (r *rowBuffer) flush(ctx context.Context, bt *batchTx) error {
	n := len(r.args) / r.cols
	if n == 0 {
		return nil
	}
	row := "(" + strings.Repeat("?,", r.cols-1) + "?)"
	q := r.head + strings.Repeat(row+",", n-1) + row
	_, err := exec(ctx, bt, q, r.args...)
	r.args = r.args[:0]
	return err
}

func (b *batchTx) flushRows(ctx context.Context) error {
	if err := b.events.flush(ctx, b); err != nil {
		return err
	}
	if err := b.usage.flush(ctx, b); err != nil {
		return err
	}
	tr := rowBuffer{head: `INSERT INTO transcript(session_id, seq, turn_id, kind, runtime, model, text, tool_call_id, tool, input, output, is_error, status) VALUES `, cols: 13}
	for _, p := range b.transcript {
		e := p.e
		if err := tr.add(ctx, b, p.session, e.Seq, e.TurnID, string(e.Kind), e.Runtime, e.Model, e.Text, e.ToolCallID, e.Tool, string(e.Input), e.Output, e.IsError, e.Status); err != nil {
			return err
		}
	}
	b.transcript = b.transcript[:0]
	clear(b.running)
	return tr.flush(ctx, b)
}

func (b *batchTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := b.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (b *batchTx) close() {
	if b.keep {
		return
	}
	for _, st := range b.stmts {
		_ = st.Close()
	}
}

// fold updates the derived tables (turns, transcript, natives, usage,
// session summary) for one event.
func fold(ctx context.Context, tx *batchTx, ev *engine.Event) error {
	ms := ev.Time.UnixMilli()
	switch ev.Type {
	case engine.EventUserMessage:
		if _, err := exec(ctx, tx, `INSERT OR REPLACE INTO turns(session_id, turn_id, prompt, runtime, model, started_at, pid, pid_start) VALUES (?,?,?,?,?,?,?,?)`,
			ev.SessionID, ev.TurnID, ev.Text, ev.Runtime, ev.Model, ms, os.Getpid(), proc.SelfStart()); err != nil {
			return err
		}
		if _, err := exec(ctx, tx, `UPDATE sessions SET turns = turns + 1, runtime = ?, model = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?`,
			ev.Runtime, ev.Model, title(ev.Text), ev.SessionID); err != nil {
			return err
		}
		if err := addRuntime(ctx, tx, ev); err != nil {
			return err
		}
	case engine.EventFinalResult:
		var in, out int64
		if ev.Usage != nil {
			in, out = ev.Usage.InputTokens, ev.Usage.OutputTokens
		}
		if _, err := exec(ctx, tx, `UPDATE turns SET status = ?, ended_at = ?, cycles = ?, cost_usd = ?, input_tokens = ?, output_tokens = ?, runtime = ?, model = ? WHERE session_id = ? AND turn_id = ?`,
			ev.Status, ms, ev.Cycles, ev.CostUSD, in, out, ev.Runtime, ev.Model, ev.SessionID, ev.TurnID); err != nil {
			return err
		}
		if _, err := exec(ctx, tx, `UPDATE sessions SET cost_usd = cost_usd + ?, runtime = ?, model = ? WHERE id = ?`, ev.CostUSD, ev.Runtime, ev.Model, ev.SessionID); err != nil {
			return err
		}
		// Failover may have ended the turn on another runtime than it
		// started on: both were used.
		if err := addRuntime(ctx, tx, ev); err != nil {
			return err
		}
		if ev.NativeID != "" {
			if err := saveNative(ctx, tx, ev); err != nil {
				return err
			}
		}
	case engine.EventSessionStarted:
		if ev.NativeID != "" {
			if err := saveNative(ctx, tx, ev); err != nil {
				return err
			}
		}
	case engine.EventUsageUpdated:
		u := engine.Usage{}
		if ev.Usage != nil {
			u = *ev.Usage
		}
		if err := tx.usage.add(ctx, tx, ev.SessionID, ev.Seq, ev.TurnID, ev.Runtime, ev.Model, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, ev.CostUSD); err != nil {
			return err
		}
		// Usage outside any turn (a /compact's summary) has no final_result
		// to add it to the session's cost: it is added here.
		if ev.TurnID == 0 && ev.CostUSD != 0 {
			if _, err := exec(ctx, tx, `UPDATE sessions SET cost_usd = cost_usd + ? WHERE id = ?`, ev.CostUSD, ev.SessionID); err != nil {
				return err
			}
		}
	case engine.EventModeChanged:
		if _, err := exec(ctx, tx, `UPDATE sessions SET mode = ? WHERE id = ?`, string(ev.Mode), ev.SessionID); err != nil {
			return err
		}
	case engine.EventRuntimeSwitched:
		if _, err := exec(ctx, tx, `UPDATE sessions SET runtime = ?, model = ? WHERE id = ?`, ev.Runtime, ev.Model, ev.SessionID); err != nil {
			return err
		}
	}
	op, e := engine.TranscriptOp(*ev)
	return applyEntry(ctx, tx, ev.SessionID, op, e)
}

// addRuntime appends the event's runtime to the session's runtimes unless
// it is already listed. The list is comma-separated: runtime names are
// configuration keys and never contain a comma.
func addRuntime(ctx context.Context, tx execer, ev *engine.Event) error {
	if ev.Runtime == "" {
		return nil
	}
	_, err := exec(ctx, tx, `UPDATE sessions SET runtimes = CASE
		WHEN runtimes = '' THEN ?1
		WHEN instr(',' || runtimes || ',', ',' || ?1 || ',') > 0 THEN runtimes
		ELSE runtimes || ',' || ?1 END WHERE id = ?2`, ev.Runtime, ev.SessionID)
	return err
}

func saveNative(ctx context.Context, tx execer, ev *engine.Event) error {
	_, err := exec(ctx, tx, `INSERT OR REPLACE INTO native_sessions(session_id, runtime, native_id, turn_id) VALUES (?,?,?,?)`,
		ev.SessionID, ev.Runtime, ev.NativeID, ev.TurnID)
	return err
}

func applyEntry(ctx context.Context, tx *batchTx, session string, op engine.EntryOp, e engine.TranscriptEntry) error {
	key := [2]string{session, e.ToolCallID}
	switch op {
	case engine.OpNone:
		return nil
	case engine.OpAppend:
		if e.Kind == engine.EntryToolCall && e.Status == engine.ToolStatusRunning && e.ToolCallID != "" {
			tx.running[key] = len(tx.transcript)
		}
		tx.transcript = append(tx.transcript, pendingEntry{session, e})
		return nil
	case engine.OpFinishToolCall:
		if i, ok := tx.running[key]; ok {
			delete(tx.running, key)
			p := &tx.transcript[i].e
			p.Output, p.IsError, p.Status = e.Output, e.IsError, e.Status
			return nil
		}
		r, err := exec(ctx, tx, `UPDATE transcript SET output = ?, is_error = ?, status = ? WHERE session_id = ? AND tool_call_id = ? AND kind = 'tool_call' AND status = 'running'`,
			e.Output, e.IsError, e.Status, session, e.ToolCallID)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n > 0 {
			return nil
		}
	}
	tx.transcript = append(tx.transcript, pendingEntry{session, e})
	return nil
}

// title is the session title: the first line of the first prompt, cut.
func title(prompt string) string {
	for i, r := range prompt {
		if r == '\n' {
			prompt = prompt[:i]
			break
		}
	}
	r := []rune(prompt)
	if len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return prompt
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
)

// Writer is the store's engine.Journal: it queues events and writes them in
// batches, one transaction per batch, from one goroutine. A must-deliver
// event (permission request, error, final result) triggers a write at once;
// otherwise a batch is written when it is large or a few milliseconds old.
// While the writer lags, consecutive text deltas of one stream are merged in
// the queue, so a burst of deltas costs one row.
//
// Streamed text is persisted only up to a safe cut (see safeCut): a secret
// that a model streams in several deltas is then always redacted whole,
// never stored as pieces that each look harmless. The rest of the stream
// waits in the queue for the next delta, the end of the message, a Flush
// or Close.
type Writer struct {
	st *Store

	mu    sync.Mutex
	queue []engine.Event
	// spare is the backing array of the last batch written, handed back
	// to the queue for the next one: events are large, and growing a fresh
	// queue for every batch cost a tenth of the pipeline's CPU.
	spare []engine.Event
	// more holds delta text merged into the last queued event and not yet
	// copied into it, so merging n deltas costs O(n), not O(n²).
	more strings.Builder
	// tailFirst is the sequence number of the first delta merged into the
	// queue's last event while that event is a text or reasoning delta, and
	// tailCount how many appended events it holds. A held tail is split
	// only when tailFirst is below its own (latest) sequence number, so the
	// written part and the rest each keep a number of their own.
	tailFirst, tailCount int64
	// held says the loop is waiting with only a held-back tail queued: the
	// next Append must wake it.
	held bool
	// flushing counts Flush calls waiting: while one waits, nothing is
	// held back.
	flushing int
	appended int64 // events accepted (merged ones included)
	written  int64 // events durable
	err      error // first write error; later Flush calls return it
	closed   bool
	batches  int // transactions written, for tests
	// create holds sessions registered with CreateLazily whose row is
	// written with their first events, so a session that never got a
	// turn leaves nothing behind.
	create   map[string]SessionInfo
	wake     chan struct{}
	done     chan struct{}
	progress *sync.Cond
}

// batchDelay is how long a queued event waits for company before it is
// written without a must-deliver event. Tests lengthen it to prove that
// must-deliver events do not wait for it.
var batchDelay = 5 * time.Millisecond

// maxBatch caps the events written in one transaction.
const maxBatch = 4096

// NewWriter starts a writer. Close it to flush and stop its goroutine.
func (s *Store) NewWriter() *Writer {
	w := &Writer{st: s, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.progress = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// CreateLazily registers a new session whose row is inserted in the same
// transaction as its first events.
func (w *Writer) CreateLazily(si SessionInfo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.create == nil {
		w.create = map[string]SessionInfo{}
	}
	w.create[si.ID] = si
}

// Append implements engine.Journal. It never waits on the database.
//
// Tool progress is not persisted: it is a live preview of output that the
// tool's finished event holds whole. Its chunks are cut wherever the
// output was read, so a secret in them could be stored in pieces that
// redaction cannot recognise.
func (w *Writer) Append(ev engine.Event) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errors.New("journal closed")
	}
	if ev.Type == engine.EventToolCallProgress {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.appended++
	if n := len(w.queue); n > 0 && (ev.Type == engine.EventTextDelta || ev.Type == engine.EventReasoningDelta) {
		tail := &w.queue[n-1]
		if tail.Type == ev.Type && tail.SessionID == ev.SessionID && tail.TurnID == ev.TurnID && tail.Runtime == ev.Runtime {
			// The merged row carries the later sequence number, so the
			// session's highest persisted seq stays exact for resume.
			w.more.WriteString(ev.Text)
			tail.Seq, tail.Time = ev.Seq, ev.Time
			w.tailCount++
			wake := w.held
			w.held = false
			err := w.err
			w.mu.Unlock()
			if wake {
				w.signal()
			}
			return err
		}
	}
	w.settle()
	w.queue = append(w.queue, ev)
	if ev.Type == engine.EventTextDelta || ev.Type == engine.EventReasoningDelta {
		w.tailFirst, w.tailCount = ev.Seq, 1
	} else {
		w.tailFirst, w.tailCount = 0, 0
	}
	n := len(w.queue)
	urgent := ev.Type.MustDeliver() || n >= maxBatch || w.held
	w.held = false
	err := w.err
	w.mu.Unlock()
	if urgent || n == 1 {
		w.signal()
	}
	return err
}

// settle copies merged text into the last queued event. w.mu is held.
func (w *Writer) settle() {
	if w.more.Len() > 0 && len(w.queue) > 0 {
		w.queue[len(w.queue)-1].Text += w.more.String()
		w.more.Reset()
	}
}

func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Flush implements engine.Journal: it returns once every event appended
// before the call is durable, or the first write error.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	target := w.appended
	w.flushing++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.flushing--
		w.mu.Unlock()
	}()
	w.signal()
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.progress.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.written < target && w.err == nil && ctx.Err() == nil {
		w.progress.Wait()
	}
	if w.err != nil {
		return w.err
	}
	if w.written < target {
		return fmt.Errorf("flush journal: %w", ctx.Err())
	}
	return nil
}

// Close flushes and stops the writer.
func (w *Writer) Close() error {
	err := w.Flush(context.Background())
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
	<-w.done
	return err
}

func (w *Writer) loop() {
	defer close(w.done)
	for {
		w.mu.Lock()
		if len(w.queue) == 0 || (w.held && !w.closed && w.flushing == 0) {
			closed := w.closed
			w.mu.Unlock()
			if closed {
				return
			}
			<-w.wake
			continue
		}
		// A backlog means a burst is already here: write it at once.
		urgent := w.closed || len(w.queue) >= maxBatch/16
		for _, ev := range w.queue {
			if ev.Type.MustDeliver() {
				urgent = true
				break
			}
		}
		w.mu.Unlock()
		if !urgent {
			// Let a burst gather; a must-deliver event, a Flush or Close
			// ends the wait early.
			t := time.NewTimer(batchDelay)
			select {
			case <-t.C:
			case <-w.wake:
			}
			t.Stop()
		}
		w.mu.Lock()
		w.settle()
		batch := w.queue
		w.queue, w.spare = w.spare[:0], nil
		pending := w.appended
		if !w.closed && w.flushing == 0 {
			var keep *engine.Event
			batch, keep = w.holdBack(batch)
			if keep != nil {
				w.queue = append(w.queue, *keep)
				pending -= w.tailCount
			}
			if len(batch) == 0 {
				// Only a tail that cannot be cut yet: wait for more.
				w.held = true
				w.spare = batch[:0]
				w.mu.Unlock()
				continue
			}
		}
		var create []SessionInfo
		for _, ev := range batch {
			if si, ok := w.create[ev.SessionID]; ok {
				create = append(create, si)
				delete(w.create, ev.SessionID)
			}
		}
		w.mu.Unlock()
		err := w.st.writeBatch(context.Background(), batch, create...)
		w.st.noteDamage(&err)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("save events: %w", err)
		}
		w.batches++
		// Everything appended up to the moment the batch was taken is now
		// durable, merged deltas included.
		w.written = pending
		clear(batch) // let the events' text be collected
		w.spare = batch[:0]
		w.progress.Broadcast()
		w.mu.Unlock()
	}
}

// holdBack takes the batch about to be written and returns what may be
// written now and the delta to keep queued, if any. w.mu is held.
//
// Only a final text or reasoning delta is ever kept: its text is written
// up to safeCut, and the rest waits. When the tail is one delta (its first
// and latest sequence numbers are the same) it cannot be split, so it
// waits whole until more arrives.
func (w *Writer) holdBack(batch []engine.Event) ([]engine.Event, *engine.Event) {
	n := len(batch)
	if n == 0 {
		return batch, nil
	}
	tail := batch[n-1]
	if tail.Type != engine.EventTextDelta && tail.Type != engine.EventReasoningDelta {
		return batch, nil
	}
	cut := safeCut(tail.Text)
	switch {
	case cut == len(tail.Text):
		w.tailFirst, w.tailCount = 0, 0
		return batch, nil
	case cut == 0 || w.tailFirst == 0 || w.tailFirst >= tail.Seq:
		return batch[:n-1], &tail
	}
	rest := tail
	rest.Text = tail.Text[cut:]
	batch[n-1].Text, batch[n-1].Seq = tail.Text[:cut], w.tailFirst
	w.tailFirst, w.tailCount = tail.Seq, 1
	return batch, &rest
}

// Streamed text is cut only where no secret can span the cut.
const (
	// lineHold is how much text without a newline waits for one; beyond
	// it the cut falls after the last blank.
	lineHold = 4 << 10
	// keyHold is how much of an unfinished private key block waits for
	// its end line.
	keyHold = 16 << 10
)

// safeCut is where streamed text may be cut so that no secret the store
// redacts is split: after the last newline, since every secret pattern
// but a private key block lies on one line, and never inside a key block
// whose end line has not arrived. A line longer than lineHold is cut after
// a blank that no secret spans (see blankCut); such a line with no safe
// blank waits up to keyHold, then is cut whole.
func safeCut(s string) int {
	c := strings.LastIndexByte(s, '\n') + 1
	if c == 0 && len(s) >= lineHold {
		if c = blankCut(s); c == 0 && len(s) >= keyHold {
			c = len(s)
		}
	}
	if i := strings.LastIndex(s[:c], "-----BEGIN "); i >= 0 && len(s)-i < keyHold && !keyBlockEnds(s[i:], c-i) {
		// Keep the whole block, from the start of its first line.
		c = strings.LastIndexByte(s[:i], '\n') + 1
	}
	return c
}

// blankCut is the position after the last blank of s that a secret
// cannot span: the credential itself holds no blank, but its lead-in may
// ("Bearer abc…", "Authorization: Basic abc…", "PASSWORD = abc…"), so a
// blank right after such a word is skipped. 0 means none.
func blankCut(s string) int {
	for end := len(s); end > 0; {
		i := strings.LastIndexAny(s[:end], " \t\r")
		if i < 0 {
			return 0
		}
		word := strings.ToLower(strings.TrimRight(s[strings.LastIndexAny(s[:i], " \t\r")+1:i], `"'`))
		next := strings.TrimLeft(s[i+1:], " \t\r")
		switch {
		case word == "bearer", word == "basic", strings.HasSuffix(word, "="), strings.HasSuffix(word, ":"),
			strings.HasPrefix(next, "="), strings.HasPrefix(next, ":"):
			end = i
		default:
			return i + 1
		}
	}
	return 0
}

// keyBlockEnds says whether the key block starting b ends (its
// "-----END …-----" line is complete) within b's first n bytes.
func keyBlockEnds(b string, n int) bool {
	j := strings.Index(b, "-----END ")
	if j < 0 {
		return false
	}
	k := strings.Index(b[j+len("-----END "):], "-----")
	return k >= 0 && j+len("-----END ")+k+len("-----") <= n
}

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
	for _, si := range create {
		now := time.Now().UnixMilli()
		if _, err := exec(ctx, tx, `INSERT OR IGNORE INTO sessions(id, created_at, updated_at, workspace, runtime, model, mode) VALUES (?,?,?,?,?,?,?)`,
			si.ID, now, now, si.Workspace, si.Runtime, si.Model, string(si.Mode)); err != nil {
			return fmt.Errorf("create session %s: %w", si.ID, err)
		}
	}
	bt := newBatchTx(tx)
	defer bt.close()
	last := map[string]int64{}
	for i := range batch {
		ev := &batch[i]
		// The columns hold the envelope; the JSON holds the payload only.
		payload := *ev
		payload.SessionID, payload.Seq, payload.TurnID, payload.Runtime, payload.Time = "", 0, 0, "", time.Time{}
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
	return tx.Commit()
}

// batchTx is a transaction that prepares each distinct statement once per
// batch, since a batch runs the same few statements thousands of times, and
// that inserts events, transcript entries and usage rows many per
// statement. Transcript entries stay in memory until the end of the batch,
// so a tool call started and finished in one batch is written once.
type batchTx struct {
	tx         *sql.Tx
	stmts      map[string]*sql.Stmt
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

func newBatchTx(tx *sql.Tx) *batchTx {
	return &batchTx{
		tx: tx, stmts: map[string]*sql.Stmt{}, running: map[[2]string]int{},
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
	st, ok := b.stmts[query]
	if !ok {
		var err error
		if st, err = b.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		b.stmts[query] = st
	}
	return st.ExecContext(ctx, args...)
}

func (b *batchTx) close() {
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

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Copying a damaged table: rows are read in key order, a chunk at a time.
// When a read fails, the rows before the failure are kept, and the next
// readable key is found by probing: a read that starts at a key beyond
// the damaged page descends the b-tree along another path and works. The
// probe doubles its step until a read works, then halves back to the first
// key that does, so a damaged page costs a few dozen probes whatever the
// keys are.

// salvageTables are the tables copied, in order. Events come last: the
// session ids found in the others help step over damage in them.
var salvageTables = []string{"sessions", "turns", "transcript", "native_sessions", "usage", "grants", "snapshots", "artifacts", "events"}

// copier copies one damaged database into a fresh one.
type copier struct {
	src *sql.Conn
	tx  *sql.Tx
	rep *SalvageReport
	// known are the session ids seen in any table; rows says which had a
	// session row (and its last sequence number).
	known  map[string]bool
	rows   map[string]int64
	events map[string]int64 // events copied per session
	// minSeq and maxSeq are the lowest and highest sequence numbers
	// copied per session; interior marks sessions with damage between two
	// of their events. With the session row's last_seq they tell whether
	// a session came back whole: every session's log starts at 1.
	minSeq, maxSeq map[string]int64
	interior       map[string]bool
}

// errDisorder is a read that returned keys out of order.
var errDisorder = errors.New("rows out of key order")

// dstError marks a failure to write the fresh database, which ends the
// salvage, unlike a failure to read the damaged one.
type dstError struct{ err error }

func (e dstError) Error() string { return e.err.Error() }
func (e dstError) Unwrap() error { return e.err }

// copyReadable copies every readable row of the database at old into dst.
func copyReadable(ctx context.Context, old string, dst *sql.DB, rep *SalvageReport) error {
	db, err := sql.Open("sqlite3", fileURI(old, "_busy_timeout=5000"))
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	src, err := db.Conn(ctx)
	if err != nil {
		rep.Unreadable = true
		return nil
	}
	defer func() { _ = src.Close() }()
	// Check each page's cells as it is read: a garbled page then fails
	// as corrupt instead of yielding garbage rows.
	_, _ = src.ExecContext(ctx, "PRAGMA cell_size_check=ON")
	// A file shorter than its header says (cut short) is otherwise
	// refused whole: with a writable schema SQLite reads the pages that
	// are there. Nothing is written through this connection.
	_, _ = src.ExecContext(ctx, "PRAGMA writable_schema=ON")
	have, err := tableNames(ctx, src)
	if err != nil || !have["sessions"] && !have["events"] {
		rep.Unreadable = true
		return nil
	}
	tx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	c := &copier{src: src, tx: tx, rep: rep, known: map[string]bool{}, rows: map[string]int64{},
		events: map[string]int64{}, minSeq: map[string]int64{}, maxSeq: map[string]int64{}, interior: map[string]bool{}}
	for _, t := range salvageTables {
		if !have[t] {
			continue
		}
		if err := c.copyTable(ctx, t); err != nil {
			var de dstError
			if errors.As(err, &de) || ctx.Err() != nil {
				return err
			}
			// The table's columns could not even be listed.
			rep.Skipped++
		}
	}
	if err := c.rebuild(ctx); err != nil {
		return err
	}
	return tx.Commit()
}

func tableNames(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

// columns lists a table's columns and the one that is its rowid, if any.
func columns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, table string) (cols []string, rowidAlias string, err error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, pk FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = rows.Close() }()
	var pks []string
	var intPK string
	for rows.Next() {
		var name, typ string
		var pk int
		if err := rows.Scan(&name, &typ, &pk); err != nil {
			return nil, "", err
		}
		cols = append(cols, name)
		if pk > 0 {
			pks = append(pks, name)
			if strings.EqualFold(typ, "INTEGER") {
				intPK = name
			}
		}
	}
	if len(pks) == 1 && intPK != "" {
		rowidAlias = intPK
	}
	return cols, rowidAlias, rows.Err()
}

// copyTable copies the columns a table has in both databases.
func (c *copier) copyTable(ctx context.Context, table string) error {
	srcCols, _, err := columns(ctx, c.src, table)
	if err != nil {
		return err
	}
	dstCols, alias, err := columns(ctx, c.tx, table)
	if err != nil {
		return dstError{err}
	}
	var cols []string
	for _, col := range dstCols {
		if col != alias && slices.Contains(srcCols, col) {
			cols = append(cols, col)
		}
	}
	if table == "events" {
		return c.copyEvents(ctx, cols)
	}
	return c.copyRowid(ctx, table, cols)
}

// copyRowid copies a table in rowid order, keeping each row's rowid (the
// transcript's order and the artifacts' references rest on it).
func (c *copier) copyRowid(ctx context.Context, table string, cols []string) error {
	list := strings.Join(cols, ", ")
	ins, err := c.tx.PrepareContext(ctx, fmt.Sprintf("INSERT OR IGNORE INTO %s(rowid, %s) VALUES (?%s)", table, list, strings.Repeat(", ?", len(cols))))
	if err != nil {
		return dstError{err}
	}
	defer func() { _ = ins.Close() }()
	sid := slices.Index(cols, "session_id") + 1 // in the row, after the rowid
	row := func(vals []any) error {
		if sid > 0 {
			c.see(vals[sid])
		}
		if table == "sessions" {
			id, _ := vals[slices.Index(cols, "id")+1].(string)
			last, _ := vals[slices.Index(cols, "last_seq")+1].(int64)
			c.rows[id] = last
			c.see(id)
		}
		res, err := ins.ExecContext(ctx, vals...)
		if err != nil {
			return dstError{err}
		}
		if n, _ := res.RowsAffected(); n > 0 && table == "snapshots" {
			c.rep.Snapshots++
		}
		return nil
	}
	sel := fmt.Sprintf("SELECT rowid, %s FROM %s", list, table)
	key := func(vals []any) int64 { k, _ := vals[0].(int64); return k }
	after := int64(math.MinInt64)
	q, args := sel+" ORDER BY rowid", []any(nil)
	for {
		_, err := c.read(ctx, q, args, len(cols)+1, func(vals []any) error {
			k := key(vals)
			if k <= after {
				// Keys out of order: the page is garbled in a way the
				// cell checks let through.
				return errDisorder
			}
			after = k
			return row(vals)
		})
		if err == nil {
			return nil
		}
		var de dstError
		if errors.As(err, &de) || ctx.Err() != nil {
			return err
		}
		c.rep.Skipped++
		next, ok := nextReadable(after, func(k int64) bool {
			_, err := c.read(ctx, sel+" WHERE rowid > ? ORDER BY rowid LIMIT 1", []any{k}, len(cols)+1, func([]any) error { return nil })
			return err == nil
		})
		if !ok {
			break
		}
		after = next
		q, args = sel+" WHERE rowid > ? ORDER BY rowid", []any{after}
	}
	// No seek gets past the damage: read back from the end up to it.
	return c.readBack(ctx, sel+" ORDER BY rowid DESC", len(cols)+1, func(vals []any) (bool, error) {
		if key(vals) <= after {
			return false, nil
		}
		return true, row(vals)
	})
}

// copyEvents copies the event log in (session, sequence) order. Damage is
// stepped over within a session by sequence number, and past the end of
// one to the next session id known from the other tables.
//
// The log is a WITHOUT ROWID table: its interior pages hold whole rows as
// keys, overflow pages and all, so a seek, which compares keys on its way
// down, fails where one of them lost a page, while a scan, which follows
// child pointers only, does not. So the log is read in long scans, and
// seeks only resume one after damage; what no seek reaches is read
// backwards from the end.
func (c *copier) copyEvents(ctx context.Context, cols []string) error {
	if slices.Index(cols, "session_id") != 0 || slices.Index(cols, "seq") != 1 {
		return fmt.Errorf("events: unexpected columns %v", cols)
	}
	list := strings.Join(cols, ", ")
	sel := fmt.Sprintf("SELECT %s FROM events", list)
	ins, err := c.tx.PrepareContext(ctx, fmt.Sprintf("INSERT OR IGNORE INTO events(%s) VALUES (?%s)", list, strings.Repeat(", ?", len(cols)-1)))
	if err != nil {
		return dstError{err}
	}
	defer func() { _ = ins.Close() }()
	typ, data := slices.Index(cols, "type"), slices.Index(cols, "data")
	row := func(vals []any) error {
		s, _ := vals[0].(string)
		k, _ := vals[1].(int64)
		// A row whose payload is not an event is garbage a damaged page
		// let through.
		t, _ := vals[typ].(string)
		d, _ := vals[data].(string)
		if t == "" || !json.Valid([]byte(d)) {
			c.interior[s] = true
			return nil
		}
		res, err := ins.ExecContext(ctx, vals...)
		if err != nil {
			return dstError{err}
		}
		if n, _ := res.RowsAffected(); n > 0 {
			c.see(s)
			if c.events[s] == 0 || k < c.minSeq[s] {
				c.minSeq[s] = k
			}
			c.events[s]++
			c.maxSeq[s] = max(c.maxSeq[s], k)
			c.rep.Events++
		}
		return nil
	}
	probe := func(s string, k int64) bool {
		_, err := c.read(ctx, sel+" WHERE (session_id, seq) > (?, ?) ORDER BY session_id, seq LIMIT 1", []any{s, k}, len(cols), func([]any) error { return nil })
		return err == nil
	}
	sid, seq := "", int64(math.MinInt64)
	// damagedIn is the session the last damage was found in: if the
	// first row read past it is of the same session, the damage lies
	// between two of its events.
	damagedIn := ""
	q, args := sel+" ORDER BY session_id, seq", []any(nil)
	for {
		_, err := c.read(ctx, q, args, len(cols), func(vals []any) error {
			s, _ := vals[0].(string)
			k, _ := vals[1].(int64)
			if s < sid || s == sid && k <= seq {
				return errDisorder
			}
			if damagedIn != "" {
				c.interior[s] = c.interior[s] || s == damagedIn
				damagedIn = ""
			}
			sid, seq = s, k
			return row(vals)
		})
		if err == nil {
			return nil
		}
		var de dstError
		if errors.As(err, &de) || ctx.Err() != nil {
			return err
		}
		c.rep.Skipped++
		damagedIn = sid
		if next, ok := nextReadable(seq, func(k int64) bool { return probe(sid, k) }); ok {
			seq = next
		} else if !c.nextSession(&sid, &seq, probe) {
			break
		}
		q, args = sel+" WHERE (session_id, seq) > (?, ?) ORDER BY session_id, seq", []any{sid, seq}
	}
	// No seek gets past the damage: read back from the end up to it.
	last := ""
	err = c.readBack(ctx, sel+" ORDER BY session_id DESC, seq DESC", len(cols), func(vals []any) (bool, error) {
		s, _ := vals[0].(string)
		k, _ := vals[1].(int64)
		if s < sid || s == sid && k <= seq {
			return false, nil
		}
		last = s
		return true, row(vals)
	})
	if err == nil && last == sid {
		c.interior[sid] = true
	}
	return err
}

// nextSession moves past damage that runs beyond session *sid's last
// event: to the first session id known to have existed after it from
// which a read works. It reports false when there is none.
func (c *copier) nextSession(sid *string, seq *int64, probe func(string, int64) bool) bool {
	ids := make([]string, 0, len(c.known))
	for id := range c.known {
		if id > *sid {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if probe(id, math.MinInt64) {
			*sid, *seq = id, math.MinInt64
			return true
		}
	}
	return false
}

// readBack reads a table from its end (query orders it backwards) while
// fn says to go on, and stops quietly at the first unreadable row.
func (c *copier) readBack(ctx context.Context, query string, ncols int, fn func([]any) (bool, error)) error {
	stop := errors.New("stop")
	_, err := c.read(ctx, query, nil, ncols, func(vals []any) error {
		more, err := fn(vals)
		if err != nil {
			return err
		}
		if !more {
			return stop
		}
		return nil
	})
	var de dstError
	if errors.As(err, &de) || ctx.Err() != nil {
		return err
	}
	if err != nil && !errors.Is(err, stop) {
		c.rep.Skipped++
	}
	return nil
}

// see notes a session id found in a row.
func (c *copier) see(v any) {
	if id, ok := v.(string); ok && id != "" {
		c.known[id] = true
	}
}

// read runs a query and hands each row, scanned whole, to fn. It returns
// how many rows it read and the first error: the query's, a row's, or
// fn's.
func (c *copier) read(ctx context.Context, query string, args []any, ncols int, fn func([]any) error) (int, error) {
	rows, err := c.src.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rows.Close() }()
	n := 0
	vals := make([]any, ncols)
	ptrs := make([]any, ncols)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		if err := fn(vals); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// nextReadable returns the smallest key above after from which ok says a
// read works, doubling the step from after until one does, then halving
// back. It returns false when no key up to the largest does.
func nextReadable(after int64, ok func(int64) bool) (int64, bool) {
	lo, step := after, int64(1)
	var hi int64
	for {
		if lo > math.MaxInt64-step {
			hi = math.MaxInt64
		} else {
			hi = lo + step
		}
		if ok(hi) {
			break
		}
		if hi == math.MaxInt64 {
			return 0, false
		}
		lo = hi
		if step < math.MaxInt64/4 {
			step *= 2
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// rebuild completes the fresh database from what was copied: a session
// row for each session known only from its other rows, a turn row for
// each turn known only from its events, each session's counters, and it
// counts the sessions recovered and lost. A session whose rows are all
// unreadable but its session row is dropped, and counted lost.
func (c *copier) rebuild(ctx context.Context) error {
	ids := make([]string, 0, len(c.known))
	for id := range c.known {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, ok := c.rows[id]; !ok {
			if err := c.rebuildSession(ctx, id); err != nil {
				return dstError{err}
			}
		}
	}
	if err := c.rebuildTurns(ctx); err != nil {
		return dstError{err}
	}
	if _, err := c.tx.ExecContext(ctx, `UPDATE sessions SET
		last_seq = MAX(last_seq, IFNULL((SELECT MAX(seq) FROM events WHERE session_id = sessions.id), 0)),
		turns = (SELECT COUNT(*) FROM turns WHERE session_id = sessions.id)`); err != nil {
		return dstError{err}
	}
	for _, id := range ids {
		var transcript int
		if err := c.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM transcript WHERE session_id = ?`, id).Scan(&transcript); err != nil {
			return dstError{err}
		}
		last, hadRow := c.rows[id]
		switch {
		case c.events[id] == 0 && transcript == 0 && (!hadRow || last > 0):
			// Nothing of what the session said survived.
			c.rep.Lost++
			if _, err := c.tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
				return dstError{err}
			}
			for _, t := range []string{"turns", "usage", "native_sessions", "grants"} {
				if _, err := c.tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE session_id = ?`, id); err != nil {
					return dstError{err}
				}
			}
		default:
			c.rep.Sessions++
			if c.interior[id] || !hadRow || last > 0 && (c.events[id] == 0 || c.minSeq[id] != 1 || c.maxSeq[id] < last) {
				c.rep.Incomplete++
			}
		}
	}
	return nil
}

// rebuildSession writes a session row from the session's other rows: its
// first prompt is its title, its turns give its times and runtime.
func (c *copier) rebuildSession(ctx context.Context, id string) error {
	var created, updated int64
	var prompt, runtime, model, workspace string
	_ = c.tx.QueryRowContext(ctx, `SELECT IFNULL(MIN(ts), 0) / 1000000, IFNULL(MAX(ts), 0) / 1000000 FROM events WHERE session_id = ?`, id).Scan(&created, &updated)
	_ = c.tx.QueryRowContext(ctx, `SELECT prompt FROM turns WHERE session_id = ? ORDER BY turn_id LIMIT 1`, id).Scan(&prompt)
	_ = c.tx.QueryRowContext(ctx, `SELECT runtime, model FROM turns WHERE session_id = ? ORDER BY turn_id DESC LIMIT 1`, id).Scan(&runtime, &model)
	_ = c.tx.QueryRowContext(ctx, `SELECT workspace FROM snapshots WHERE session_id = ? AND workspace != '' LIMIT 1`, id).Scan(&workspace)
	if created == 0 {
		created = time.Now().UnixMilli()
	}
	updated = max(updated, created)
	_, err := c.tx.ExecContext(ctx, `INSERT OR IGNORE INTO sessions(id, created_at, updated_at, workspace, title, runtime, model) VALUES (?,?,?,?,?,?,?)`,
		id, created, updated, workspace, title(prompt), runtime, model)
	return err
}

// rebuildTurns writes a turn row for each turn whose row was lost but
// whose user message was not, with the status of its final result when
// that survived. A turn left without one is closed as interrupted the
// next time the database is opened, as for any kz that died mid-turn.
func (c *copier) rebuildTurns(ctx context.Context) error {
	rows, err := c.tx.QueryContext(ctx, `SELECT e.session_id, e.turn_id, e.runtime, e.ts, e.data,
		(SELECT f.data FROM events f WHERE f.session_id = e.session_id AND f.turn_id = e.turn_id AND f.type = 'final_result' LIMIT 1)
		FROM events e WHERE e.type = 'user_message' AND e.turn_id > 0
		AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = e.session_id AND t.turn_id = e.turn_id)`)
	if err != nil {
		return err
	}
	type turn struct {
		session, runtime, data string
		final                  sql.NullString
		id, ts                 int64
	}
	var lost []turn
	for rows.Next() {
		var t turn
		if err := rows.Scan(&t.session, &t.id, &t.runtime, &t.ts, &t.data, &t.final); err != nil {
			_ = rows.Close()
			return err
		}
		lost = append(lost, t)
	}
	_ = rows.Close()
	for _, t := range lost {
		var user, fin struct {
			Text   string `json:"text"`
			Model  string `json:"model"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal([]byte(t.data), &user)
		var status any
		if t.final.Valid && json.Unmarshal([]byte(t.final.String), &fin) == nil && fin.Status != "" {
			status = fin.Status
		}
		if _, err := c.tx.ExecContext(ctx, `INSERT OR IGNORE INTO turns(session_id, turn_id, prompt, runtime, model, status, started_at, pid) VALUES (?,?,?,?,?,?,?,0)`,
			t.session, t.id, user.Text, t.runtime, user.Model, status, t.ts/1e6); err != nil {
			return err
		}
	}
	return nil
}

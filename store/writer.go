package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/kaizen-code/kz/engine"
)

// Writer is the store's engine.Journal: it queues events and writes them in
// batches, one transaction per batch, from one goroutine. Any event but a
// delta is written at once, or, while a write is under way, in the batch
// right after it (a group commit): a session shows its subscribers an
// event only once it is stored (engine.CommitReporter), so every commit
// that waits delays what the person sees. A queue of deltas alone waits
// batchDelay for company, since live subscribers already preview them.
// While the writer lags, consecutive text deltas of one stream are merged
// in the queue, so a burst of deltas costs one row.
//
// The first failed write (a full disk, a damaged database) stops the
// writer for good: everything after it is refused, and every session is
// told (ReportCommits), so that no turn goes on showing what can no longer
// be kept. What was committed before stays.
//
// Streamed text is persisted only up to a safe cut (see safeCut): a secret
// that a model streams in several deltas is then always redacted whole,
// never stored as pieces that each look harmless. The rest of the stream
// waits in the queue for the next delta, the end of the message, a Flush
// or Close.
type Writer struct {
	st *Store
	// conn is the writer's own connection (see checkpoint.go) with its
	// prepared statements, or nil.
	conn *connStmts
	// kick asks the checkpointer for a checkpoint; stop ends it.
	kick, stop, stopped chan struct{}
	stopOnce            sync.Once

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
	// solid says the queue holds an event that is not a delta, which
	// is written without waiting for company.
	solid bool
	// reporters are the sessions' ReportCommits callbacks. The map is
	// replaced, never changed, so the loop reads a snapshot without w.mu.
	reporters map[string]func([]engine.Event, error)
	appended  int64 // events accepted (merged ones included)
	written   int64 // events durable
	err       error // first write error; later Flush calls return it
	closed    bool
	batches   int // transactions written, for tests
	// create holds sessions registered with CreateLazily whose row is
	// written with their first events, so a session that never got a
	// turn leaves nothing behind.
	create   map[string]SessionInfo
	wake     chan struct{}
	done     chan struct{}
	progress *sync.Cond
}

// batchDelay is how long after a write a queue of deltas alone waits for
// company before it is written. It bounds the commits of a fast stream of
// lines to about one per batchDelay: at one a millisecond, a model
// streaming a delta a millisecond cost a commit per delta, a tenth of
// kz's CPU while it streamed, and at 60 commits a second the store was
// still a twentieth of a long stream's CPU. Deltas are previews, never
// final: the TUI shows them before they are stored (the bus hands a live
// subscriber a delta once everything before it is stored), and any other
// event is written at once, so the delay only paces how often kz -p's
// stored stream grows, 20 times a second, as smooth as a person reads.
// Tests lengthen it to prove that other events do not wait for it.
var batchDelay = time.Second / 20

// deltaCheckpointGap is the least time between the checkpoints that
// follow batches of streamed text alone (see loop); any other batch asks
// for one at once, and the checkpointer itself keeps them checkpointGap
// apart.
const deltaCheckpointGap = time.Second

// solidEvent reports an event that is not a delta.
func solidEvent(ev engine.Event) bool { return !ev.Type.Coalescible() }

// busyRetries is how many times a batch is tried again when another
// process keeps the database locked beyond the busy timeout.
const busyRetries = 3

// maxBatch caps the events written in one transaction.
const maxBatch = 4096

// NewWriter starts a writer. Close it to flush and stop its goroutine.
func (s *Store) NewWriter() *Writer {
	w := &Writer{st: s, wake: make(chan struct{}, 1), done: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	w.progress = sync.NewCond(&w.mu)
	if c := s.writerConn(); c != nil {
		w.conn = &connStmts{conn: c}
		go s.checkpoints(w.kick, w.stop, w.stopped)
	}
	go w.loop()
	return w
}

// write writes a batch on the writer's own connection, or in a transaction
// of the pool when it has none.
func (w *Writer) write(batch []engine.Event, create []SessionInfo) error {
	if w.conn != nil {
		return w.conn.writeBatch(context.Background(), batch, create...)
	}
	return w.st.writeBatch(context.Background(), batch, create...)
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
	if w.err != nil || ev.Type == engine.EventToolCallProgress {
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
	solid := !ev.Type.Coalescible()
	w.solid = w.solid || solid
	urgent := solid || n >= maxBatch || w.held
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

// ReportCommits implements engine.CommitReporter.
func (w *Writer) ReportCommits(sessionID string, fn func(stored []engine.Event, err error)) (stop func()) {
	w.mu.Lock()
	reps := maps.Clone(w.reporters)
	if reps == nil {
		reps = map[string]func([]engine.Event, error){}
	}
	reps[sessionID] = fn
	w.reporters = reps
	err := w.err
	w.mu.Unlock()
	if err != nil {
		// The writer failed before this session began: it learns so now.
		fn(nil, err)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		reps := maps.Clone(w.reporters)
		delete(reps, sessionID)
		w.reporters = reps
	}
}

// report tells each session what the batch stored of its events, or that
// the write failed. It runs on the writer's goroutine without w.mu.
func report(reps map[string]func([]engine.Event, error), batch []engine.Event, err error) {
	if len(reps) == 0 {
		return
	}
	if err != nil {
		for _, fn := range reps {
			fn(nil, err)
		}
		return
	}
	// A batch almost always holds one session's events.
	if first := batch[0].SessionID; batch[len(batch)-1].SessionID == first && !slices.ContainsFunc(batch, func(ev engine.Event) bool { return ev.SessionID != first }) {
		if fn := reps[first]; fn != nil {
			fn(batch, nil)
		}
		return
	}
	per := map[string][]engine.Event{}
	var order []string
	for _, ev := range batch {
		if reps[ev.SessionID] == nil {
			continue
		}
		if _, ok := per[ev.SessionID]; !ok {
			order = append(order, ev.SessionID)
		}
		per[ev.SessionID] = append(per[ev.SessionID], ev)
	}
	for _, id := range order {
		reps[id](per[id], nil)
	}
}

// Close flushes and stops the writer.
func (w *Writer) Close() error {
	err := w.Flush(context.Background())
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
	<-w.done
	w.stopOnce.Do(func() {
		if w.conn != nil {
			close(w.stop)
			<-w.stopped
			// The last connection to close checkpoints what is left.
			w.conn.close()
		}
	})
	return err
}

func (w *Writer) loop() {
	defer close(w.done)
	var lastWrite, lastKick time.Time
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
		urgent := w.closed || w.solid || w.flushing > 0 || len(w.queue) >= maxBatch/16
		w.mu.Unlock()
		if wait := batchDelay - time.Since(lastWrite); !urgent && wait > 0 {
			// Let a burst of deltas gather, up to batchDelay after the
			// last write; any other event, a Flush or Close ends the wait
			// early. A writer idle for longer writes at once.
			t := time.NewTimer(wait)
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
		w.solid = false
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
		reps := w.reporters
		w.mu.Unlock()
		lastWrite = time.Now()
		err := w.write(batch, create)
		for try := 0; isBusy(err) && try < busyRetries; try++ {
			// Another process held the write lock for the whole busy
			// timeout (a long delete, a salvage): the batch is intact, as
			// the transaction rolled back.
			err = w.write(batch, create)
		}
		// A checkpoint costs two fsyncs. After a batch of streamed text
		// alone, which adds a few kilobytes to the log, it waits until
		// the stream has run for deltaCheckpointGap: at one per write a
		// long stream paid ten checkpoints a second for almost nothing.
		if err == nil && (time.Since(lastKick) >= deltaCheckpointGap || slices.ContainsFunc(batch, solidEvent)) {
			lastKick = time.Now()
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
		w.st.noteDamage(&err)
		switch {
		case err != nil && w.st.full:
			// Opened for reading only, because the disk was full.
			err = fmt.Errorf("save events: the disk holding %s is full (%w)", w.st.path, err)
		case err != nil:
			err = fmt.Errorf("save events: %w", err)
		}
		// The sessions learn what is stored before a Flush waiting for it
		// returns, so a subscriber has it when the turn's result does.
		report(reps, batch, err)
		w.mu.Lock()
		w.batches++
		if err != nil {
			w.fail(err)
		} else {
			// Everything appended up to the moment the batch was taken
			// is now durable, merged deltas included.
			w.written = pending
		}
		clear(batch) // let the events' text be collected
		w.spare = batch[:0]
		w.progress.Broadcast()
		w.mu.Unlock()
	}
}

// fail stops the writer after a failed write: what is queued is dropped
// (nothing after a lost batch may be stored, or the history would have a
// hole), later appends are refused, and Flush returns err. w.mu is held.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	clear(w.queue)
	w.queue = w.queue[:0]
	w.more.Reset()
	w.tailFirst, w.tailCount, w.held, w.solid = 0, 0, false, false
}

// isBusy reports whether err says another connection held a lock too long.
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
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
// redacts is split: after the last newline, since a secret lies on one
// line, except a private key block (never cut inside one whose end line
// has not arrived) and a value whose name ends the line before it
// (`api_key =` or `<apiToken>` then the value: such a line waits for the
// next, up to lineHold). A line longer than lineHold is cut after a blank
// that no secret spans (see blankCut); such a line with no safe blank
// waits up to keyHold, then is cut whole.
func safeCut(s string) int {
	c := strings.LastIndexByte(s, '\n') + 1
	if c == 0 && len(s) >= lineHold {
		if c = blankCut(s); c == 0 && len(s) >= keyHold {
			c = len(s)
		}
	}
	if c > 0 && s[c-1] == '\n' {
		// A line that names a value the next line holds stays with it.
		start := strings.LastIndexByte(s[:c-1], '\n') + 1
		if leadsIn(s[start:c-1]) && len(s)-start < lineHold {
			c = start
		}
	}
	if i := lastKeyBegin(s[:c]); i >= 0 && len(s)-i < keyHold && !keyBlockEnds(s[i:], c-i) {
		// Keep the whole block, from the start of its first line.
		c = strings.LastIndexByte(s[:i], '\n') + 1
	}
	return c
}

// leadsIn reports a line that ends with the name of a credential whose
// value comes on the next line: an assignment (`api_key =`,
// `password:`), an opening tag (`<apiToken>`) or a command-line flag that
// takes one. Only names that say they hold a secret count, so prose that
// ends a line with a colon is not held back.
func leadsIn(line string) bool {
	t := strings.TrimRight(line, " \t\r\"'")
	if t == "" {
		return false
	}
	last := strings.ToLower(t[strings.LastIndexAny(t, " \t")+1:])
	switch t[len(t)-1] {
	case '=', ':', '>':
		name := strings.TrimRight(last, "=:> \t")
		if name == "" {
			// `KEY =`: the name is the word before the sign.
			f := strings.Fields(strings.TrimRight(t, "=:> \t"))
			if len(f) == 0 {
				return false
			}
			name = strings.ToLower(f[len(f)-1])
		}
		return secretName(name)
	}
	return credentialFlag(last)
}

// secretName reports a name that says it holds a secret (the keywords of
// gitleaks' generic rule and kz's own).
func secretName(name string) bool {
	for _, k := range []string{"key", "token", "secret", "pass", "pwd", "auth", "cred", "access", "bearer"} {
		if strings.Contains(name, k) {
			return true
		}
	}
	return false
}

// lastKeyBegin is where the last private key block of s starts: PEM
// ("-----BEGIN ") or SSH2 ("---- BEGIN ") armour; -1 when there is none.
func lastKeyBegin(s string) int {
	return max(strings.LastIndex(s, "-----BEGIN "), strings.LastIndex(s, "---- BEGIN "))
}

// blankCut is the position after the last blank of s that a secret
// cannot span: the credential itself holds no blank, but its lead-in may
// ("Bearer abc…", "Authorization: Basic abc…", "PASSWORD = abc…",
// "curl -u user:pass", "mysql -p secret", "sshpass -p secret"), so a blank
// right after such a word is skipped. 0 means none.
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
			strings.HasPrefix(next, "="), strings.HasPrefix(next, ":"), credentialFlag(word):
			end = i
		default:
			return i + 1
		}
	}
	return 0
}

// credentialFlag reports a command-line option whose value may be a
// credential: curl's and mysql's short forms, and any long option or
// word naming a password, token, key, secret, user or authorization.
func credentialFlag(w string) bool {
	switch w {
	case "-p", "-u", "-h", "--user", "--pass", "--password", "--header", "sshpass":
		return true
	}
	if !strings.HasPrefix(w, "-") {
		return false
	}
	for _, k := range []string{"pass", "token", "secret", "key", "auth", "user", "cred"} {
		if strings.Contains(w, k) {
			return true
		}
	}
	return false
}

// keyBlockEnds says whether the key block starting b ends (its END line,
// "-----END …-----" or SSH2's "---- END … ----", is complete) within b's
// first n bytes.
func keyBlockEnds(b string, n int) bool {
	for _, m := range [][2]string{{"-----END ", "-----"}, {"---- END ", "----"}} {
		j := strings.Index(b, m[0])
		if j < 0 {
			continue
		}
		k := strings.Index(b[j+len(m[0]):], m[1])
		if k >= 0 && j+len(m[0])+k+len(m[1]) <= n {
			return true
		}
	}
	return false
}

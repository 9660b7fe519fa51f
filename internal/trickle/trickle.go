// Package trickle batches a dense stream of small pieces. A fast model
// streams a thousand text deltas a second or more, each its own SSE event
// or stdout line, and a reader that wakes for each one pays the
// scheduler a thousand times a second (in kz, about 35 µs of CPU per
// wake-up: two thirds of what `kz -p` spent on such a stream). Streamed
// text is drawn 20 times a second and stored as often, so nothing is lost
// when a reader that is being fed that fast waits a while before it reads
// again: the kernel holds what arrived meanwhile and the next read takes
// all of it.
//
// A Gate says how long to wait. It waits only while the stream is dense
// (Burst small reads within one Window): a request and its answer, the
// lines of a handshake, an answer that streams at a person's reading
// speed, are read the moment they arrive, so the pacing adds no latency
// to them. While a stream is dense, a piece waits at most a Window, and
// once it has been dense for a Settle, at most a Hold.
package trickle

import (
	"bufio"
	"bytes"
	"io"
	"time"
)

// Window is the span in which Burst small reads make a stream dense, and
// the longest a read of a dense stream may block and still find it dense.
// It is also how long a reader waits between reads during a stream's
// first Settle: one frame at 120 frames a second.
const Window = 8 * time.Millisecond

// Burst is the number of small reads within one Window that makes a
// stream dense.
const Burst = 4

// Settle is how long a stream must have been dense before its reader
// waits a Hold between reads instead of a Window. Most of what a model
// streams is short (an agent's reply between two tool calls, a tool
// call's input): read a Window apart, its end, which waits behind the
// last pieces, is held up at most a Window. A long stream is where the
// wake-ups add up, and there a Hold at its end is little against the
// seconds it took.
const Settle = time.Second

// Hold is how long a reader of a stream dense for Settle or longer waits
// before it reads again: 40 reads a second, two for each frame of
// streamed text the TUI draws (tui's streamFrameInterval), so a frame
// never shows text more than a Hold older than it could. Each wait is a
// wake-up, and a wake-up costs the Go scheduler and the kernel more than
// the pieces it reads. Waiting a Window throughout, `kz -p` streaming 200
// KB in 20 s took 0.60 s of CPU and 13,321 context switches against 0.52
// s and 7,698, and a turn that only waits as that stream does 0.71 s and
// 13,415 against 0.68 s and 7,989 (BenchmarkProcessStream with
// KZ_BASE_BIN, medians of 6 interleaved runs).
const Hold = 25 * time.Millisecond

// Gate decides when a reader of a stream reads again. The zero value is
// ready for use; a Gate belongs to one reader.
//
// A stream becomes dense when Burst small reads fall within one Window,
// and stays dense while each read after a wait finds data waiting (it
// blocked less than a Window): a reader that waits a Hold and then takes
// everything at once would otherwise see its reads a Hold apart and take
// the stream for sparse again.
type Gate struct {
	// recent are the times of the last Burst small reads, a ring; n
	// counts them up to Burst.
	recent [Burst]time.Time
	i, n   int
	dense  bool
	// since is when the stream's dense run began (zero: it is not in
	// one), last when a read of it was last told to wait. A read that
	// fills the buffer ends the count of small reads but not the run,
	// which a fast stream would otherwise restart every few reads.
	since, last time.Time
}

// After records a read that returned at now after blocking for blocked,
// small when it did not fill the reader's buffer (the source had nothing
// more ready), and returns how long to wait before the next read: zero
// unless the stream is dense, a Window during its first Settle, a Hold
// after.
func (g *Gate) After(now time.Time, blocked time.Duration, small bool) time.Duration {
	switch {
	case !small:
		// More may be waiting: read on, and count afresh.
		g.n, g.dense = 0, false
		return 0
	case g.dense && blocked < Window:
		return g.wait(now)
	case g.dense:
		// The stream slowed down: read its pieces as they come.
		g.n, g.dense, g.since = 0, false, time.Time{}
	}
	g.recent[g.i] = now
	g.i = (g.i + 1) % Burst
	if g.n < Burst {
		g.n++
	}
	// The oldest of the last Burst small reads is at g.i once the ring
	// is full.
	if g.n < Burst || now.Sub(g.recent[g.i]) >= Window {
		return 0
	}
	g.dense = true
	if g.since.IsZero() || now.Sub(g.last) >= Hold+Window {
		// A new run, not the same one after a full read.
		g.since = now
	}
	return g.wait(now)
}

// wait is how long a read of a dense stream waits at now.
func (g *Gate) wait(now time.Time) time.Duration {
	g.last = now
	if now.Sub(g.since) < Settle {
		return Window
	}
	return Hold
}

// Reset makes the stream count as sparse again: it must be dense anew
// before a read waits, and for Settle before it waits a Hold (see
// Reader.Hurry).
func (g *Gate) Reset() { g.n, g.dense, g.since = 0, false, time.Time{} }

// Reader reads r through a Gate: while r trickles densely, each read
// waits until a Window (after Settle, a Hold) has passed since the last
// one, and then takes everything that arrived meanwhile.
type Reader struct {
	r    io.Reader
	gate Gate
	// next is when the next read may start; zero, at once.
	next time.Time
	// sleep and now are time.Sleep and time.Now; tests replace them.
	sleep func(time.Duration)
	now   func() time.Time
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, sleep: time.Sleep, now: time.Now}
}

// Read waits if the stream is dense, then reads from the underlying
// reader. A read that fills p is never followed by a wait.
func (t *Reader) Read(p []byte) (int, error) {
	if !t.next.IsZero() {
		if d := t.next.Sub(t.now()); d > 0 {
			t.sleep(d)
		}
		t.next = time.Time{}
	}
	start := t.now()
	n, err := t.r.Read(p)
	if err != nil || len(p) == 0 {
		return n, err
	}
	now := t.now()
	if d := t.gate.After(now, now.Sub(start), n < len(p)); d > 0 {
		t.next = now.Add(d)
	}
	return n, err
}

// Hurry makes the next read start at once and the stream count as sparse
// again. The reader calls it after it took a piece that is not part of a
// dense stream of deltas (the end of a message, a request, a turn's
// result): what follows such a piece is usually the turn's next step,
// and holding it for a Window would add that Window to the turn's wall
// time without saving a wake-up worth having. Only deltas wait. Like Read,
// it belongs to the reader's goroutine.
func (t *Reader) Hurry() {
	t.next = time.Time{}
	t.gate.Reset()
}

// ReadLines reads r line by line through a Reader until EOF or an error,
// and hands each line that is not blank to handle, which reports whether
// it was a delta. While deltas come densely they are read a Window apart
// (a Hold once dense for Settle);
// any other line makes the next read start at once (Hurry), so that what
// follows it (a turn's next step, its end) is read the moment it comes.
// A line has no size limit: a CLI writes a big file or a long tool result
// as one.
func ReadLines(r io.Reader, handle func(line []byte) (delta bool)) {
	readLines(NewReader(r), handle)
}

func readLines(t *Reader, handle func(line []byte) (delta bool)) {
	br := bufio.NewReaderSize(t, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 && !handle(line) {
			t.Hurry()
		}
		if err != nil {
			return
		}
	}
}

// ReadCloser is a Reader that closes the stream it reads.
type ReadCloser struct {
	*Reader
	io.Closer
}

// NewReadCloser returns a ReadCloser of rc.
func NewReadCloser(rc io.ReadCloser) ReadCloser {
	return ReadCloser{Reader: NewReader(rc), Closer: rc}
}

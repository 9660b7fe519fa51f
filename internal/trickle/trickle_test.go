package trickle

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(ms float64) time.Time { return t0.Add(time.Duration(ms * float64(time.Millisecond))) }
	var g Gate
	// A handshake: a few small reads, far apart or fewer than Burst,
	// never wait.
	for i, ms := range []float64{0, 20, 40, 41, 42} {
		if d := g.After(at(ms), 0, true); d != 0 {
			t.Fatalf("read %d of a sparse exchange waits %v", i, d)
		}
	}
	// A dense stream: one small read a millisecond. From the Burst-th
	// read within a Window on, each read waits a Window.
	g = Gate{}
	for i := range 10 {
		d := g.After(at(100+float64(i)), time.Millisecond, true)
		if want := time.Duration(0); i >= Burst-1 {
			want = Window
			if d != want {
				t.Fatalf("read %d of a dense stream waits %v, want %v", i, d, want)
			}
		} else if d != want {
			t.Fatalf("read %d waits %v before the stream is dense", i, d)
		}
	}
	// A read that filled the buffer resets the count: the reader reads
	// on, and the stream must be dense again to wait.
	if d := g.After(at(111), 0, false); d != 0 {
		t.Fatalf("a full read waits %v", d)
	}
	for i := range Burst - 1 {
		if d := g.After(at(112+float64(i)), time.Millisecond, true); d != 0 {
			t.Fatalf("small read %d after a full one waits %v", i, d)
		}
	}
	// Once dense, a read that found data waiting keeps it dense; one
	// that had to block for a Window or more (the stream slowed down)
	// ends it, and the next pieces are read as they come.
	g = Gate{}
	for i := range Burst {
		g.After(at(200+float64(i)), time.Millisecond, true)
	}
	if d := g.After(at(212), 0, true); d != Window {
		t.Fatalf("a read that found data waiting after a wait waits %v, want %v", d, Window)
	}
	if d := g.After(at(300), 80*time.Millisecond, true); d != 0 {
		t.Fatalf("a read that blocked 80 ms still waits %v", d)
	}
	if d := g.After(at(301), time.Millisecond, true); d != 0 {
		t.Fatalf("the stream is dense again after one read: waits %v", d)
	}
}

// A stream that stays dense for Settle is read a Hold apart from then on;
// a read that fills the buffer on the way does not restart the run, a
// slowdown or a Reset does, and a new run waits a Window again.
func TestGateHoldsOnceSettled(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var g Gate
	now := t0
	// read feeds the gate reads of a stream a millisecond apart, each
	// after the wait the gate asked for (none blocks: data is waiting),
	// until until, and returns the last wait.
	read := func(until time.Time) time.Duration {
		var d time.Duration
		for now.Before(until) {
			d = g.After(now, 0, true)
			now = now.Add(max(d, time.Millisecond))
		}
		return d
	}
	if d := read(t0.Add(Settle / 2)); d != Window {
		t.Fatalf("half a Settle into a dense run, a read waits %v, want %v", d, Window)
	}
	// A full read: the count starts again, the run does not.
	if d := g.After(now, 0, false); d != 0 {
		t.Fatalf("a full read waits %v", d)
	}
	if d := read(t0.Add(Settle + 50*time.Millisecond)); d != Hold {
		t.Fatalf("after Settle, with a full read on the way, a read waits %v, want %v", d, Hold)
	}
	if d := read(now.Add(200 * time.Millisecond)); d != Hold {
		t.Fatalf("a settled run's read waits %v, want %v", d, Hold)
	}
	// The stream slows down: a read that blocked a Window ends the run.
	if d := g.After(now.Add(Window), Window, true); d != 0 {
		t.Fatalf("a read that blocked a Window waits %v", d)
	}
	now = now.Add(time.Second)
	if d := read(now.Add(100 * time.Millisecond)); d != Window {
		t.Fatalf("a new dense run waits %v, want %v", d, Window)
	}
	if d := read(now.Add(Settle)); d != Hold {
		t.Fatalf("a new run past its Settle waits %v, want %v", d, Hold)
	}
	g.Reset()
	if d := read(now.Add(100 * time.Millisecond)); d != Window {
		t.Fatalf("after Reset a dense run waits %v, want %v", d, Window)
	}
}

// A long dense trickle is read a Window apart for its first Settle and a
// Hold apart after; everything arrives, in order, and no piece waits more
// than a Hold.
func TestReaderHoldsALongTrickle(t *testing.T) {
	const pieces = 3000 // 3 s, a piece a millisecond
	clock, reads := readTrickle(t, pieces, 64<<10)
	settled := time.Duration(pieces)*time.Millisecond - Settle
	if most := int(Settle/Window+settled/Hold) + Burst + 4; reads > most {
		t.Errorf("%d reads for %d pieces a millisecond apart, want at most %d", reads, pieces, most)
	}
	holds := 0
	for _, d := range clock.slept {
		if d > Hold {
			t.Errorf("a read waited %v, more than a Hold", d)
		}
		if d == Hold {
			holds++
		}
	}
	if want := int(settled/Hold) - 2; holds < want {
		t.Errorf("%d reads waited a Hold, want at least %d: a settled stream is read a Hold apart", holds, want)
	}
}

// fakeClock is the Reader's clock: sleeping moves it on.
type fakeClock struct {
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(d time.Duration) {
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
}

// trickleSource hands out pieces that arrive at given times on the fake
// clock: a read returns every piece that has arrived, or waits (moves the
// clock) for the next one.
type trickleSource struct {
	clock  *fakeClock
	pieces []string
	at     []time.Duration
	start  time.Time
}

func (s *trickleSource) Read(p []byte) (int, error) {
	if len(s.pieces) == 0 {
		return 0, io.EOF
	}
	if due := s.start.Add(s.at[0]); s.clock.now.Before(due) {
		s.clock.now = due
	}
	var b bytes.Buffer
	for len(s.pieces) > 0 && !s.start.Add(s.at[0]).After(s.clock.now) && b.Len()+len(s.pieces[0]) <= len(p) {
		b.WriteString(s.pieces[0])
		s.pieces, s.at = s.pieces[1:], s.at[1:]
	}
	return copy(p, b.Bytes()), nil
}

// A dense trickle (a piece every millisecond) is read in batches a
// Window apart, each taking what arrived meanwhile; everything arrives,
// in order; no piece waits more than a Window.
func TestReaderBatchesADenseTrickle(t *testing.T) {
	clock, reads := readTrickle(t, 200, 4096)
	// 200 ms of pieces, read a Window apart once dense: about 25 reads,
	// against 200 without the gate.
	if reads > 200/int(Window/time.Millisecond)+Burst+2 {
		t.Errorf("%d reads for 200 pieces a millisecond apart", reads)
	}
	for _, d := range clock.slept {
		if d > Window {
			t.Errorf("a read waited %v, more than a Window", d)
		}
	}
}

// readTrickle reads n pieces that arrive a millisecond apart through a
// Reader with a buffer of size bytes, checks that all of them came in
// order, and returns the clock (its sleeps are the Reader's waits) and
// the number of reads.
func readTrickle(t *testing.T, n, size int) (*fakeClock, int) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(0, 0)}
	src := &trickleSource{clock: clock, start: clock.now}
	var want strings.Builder
	for i := range n {
		piece := string(rune('a' + i%26))
		src.pieces = append(src.pieces, piece)
		src.at = append(src.at, time.Duration(i)*time.Millisecond)
		want.WriteString(piece)
	}
	r := NewReader(src)
	r.sleep, r.now = clock.Sleep, clock.Now
	var got strings.Builder
	reads := 0
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		reads++
	}
	if got.String() != want.String() {
		t.Fatalf("read %q, want %q", got.String(), want.String())
	}
	return clock, reads
}

// Reads that fill the buffer (a big line, a bulk answer) never wait, and
// neither does a sparse exchange; an error is returned as it is.
func TestReaderNeverDelaysBulkOrSparseReads(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	big := strings.Repeat("x", 64<<10)
	r := NewReader(strings.NewReader(big))
	r.sleep, r.now = clock.Sleep, clock.Now
	buf := make([]byte, 1024)
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		clock.now = clock.now.Add(time.Microsecond)
		if err != nil {
			break
		}
	}
	if total != len(big) || len(clock.slept) != 0 {
		t.Fatalf("bulk read %d of %d bytes and slept %v", total, len(big), clock.slept)
	}

	src := &trickleSource{clock: clock, start: clock.now, pieces: []string{"a", "b", "c", "d", "e"},
		at: []time.Duration{0, 30 * time.Millisecond, 60 * time.Millisecond, 61 * time.Millisecond, 90 * time.Millisecond}}
	r = NewReader(src)
	r.sleep, r.now = clock.Sleep, clock.Now
	for range 5 {
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	if len(clock.slept) != 0 {
		t.Fatalf("a sparse exchange slept %v", clock.slept)
	}

	boom := errors.New("boom")
	r = NewReader(io.MultiReader(strings.NewReader("a"), &errReader{boom}))
	if _, err := io.ReadAll(r); !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

func TestReadCloserCloses(t *testing.T) {
	rc := &closeRecorder{Reader: strings.NewReader("hello")}
	r := NewReadCloser(rc)
	if b, err := io.ReadAll(r); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := r.Close(); err != nil || !rc.closed {
		t.Fatalf("close: %v, closed %v", err, rc.closed)
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// A piece that ends a dense burst is not held: after Hurry the next read
// starts at once, and the stream must be dense again before a read waits.
// Without it, the piece after a burst (a turn's result after its last
// deltas) would wait a Window.
func TestHurryReadsTheNextPieceAtOnce(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	src := &trickleSource{clock: clock, start: clock.now}
	for i := range 10 {
		src.pieces = append(src.pieces, "d")
		src.at = append(src.at, time.Duration(i)*time.Millisecond)
	}
	// The end of the burst, and the result 4 ms later, while the read
	// after the end would still wait.
	src.pieces = append(src.pieces, "E", "R")
	src.at = append(src.at, 10*time.Millisecond, 14*time.Millisecond)
	r := NewReader(src)
	r.sleep, r.now = clock.Sleep, clock.Now
	buf := make([]byte, 64)
	for {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(buf[:n], []byte("E")) {
			if !bytes.HasSuffix(buf[:n], []byte("E")) {
				t.Fatalf("the read took %q: the test wants the end of the burst last", buf[:n])
			}
			break
		}
	}
	if r.next.IsZero() {
		t.Fatal("the burst was not dense: the test would not show Hurry")
	}
	r.Hurry()
	slept := len(clock.slept)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "R" {
		t.Fatalf("read %q %v, want the result", buf[:n], err)
	}
	if len(clock.slept) != slept {
		t.Errorf("the read after Hurry waited %v", clock.slept[slept:])
	}
	if clock.now.After(src.start.Add(14 * time.Millisecond)) {
		t.Errorf("the result was read at %v, it arrived at 14ms", clock.now.Sub(src.start))
	}
	if !r.next.IsZero() {
		t.Errorf("one read after Hurry already waits: the stream must be dense again first")
	}
}

// ReadLines hands on every line that is not blank, in order, the last
// one even without its newline; after a line that is not a delta the next
// is read the moment it arrives, while a dense run of deltas is still
// read a Window apart.
func TestReadLinesHoldsOnlyDeltas(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	src := &trickleSource{clock: clock, start: clock.now}
	add := func(piece string, ms int) {
		src.pieces = append(src.pieces, piece)
		src.at = append(src.at, time.Duration(ms)*time.Millisecond)
	}
	for i := range 10 {
		add("d\n", i)
	}
	add("\n", 10)
	add("end\n", 10)
	add("result", 14)
	r := NewReader(src)
	r.sleep, r.now = clock.Sleep, clock.Now
	var got []string
	var resultAt time.Duration
	readLines(r, func(line []byte) bool {
		got = append(got, string(line))
		if string(line) == "result" {
			resultAt = clock.now.Sub(src.start)
		}
		return string(line) == "d\n"
	})
	want := append(slices.Repeat([]string{"d\n"}, 10), "end\n", "result")
	if !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	if len(clock.slept) == 0 {
		t.Error("the dense deltas were never held: the test would not show the hurry")
	}
	if resultAt != 14*time.Millisecond {
		t.Errorf("the line after the end was read at %v, it arrived at 14ms", resultAt)
	}
}

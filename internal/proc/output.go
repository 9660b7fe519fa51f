package proc

import (
	"fmt"
	"sync"
)

// Tail keeps the last max bytes written to it: the end of a child's
// stderr, which says why it exited. It is safe for concurrent use.
type Tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// NewTail returns a Tail that keeps max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write implements io.Writer; it never fails.
func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

// String returns what is kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// HeadTail keeps the first head and the last tail bytes written to it and
// counts what it drops between them: a command's output, whose beginning
// and end say the most. It is safe for concurrent use.
type HeadTail struct {
	mu         sync.Mutex
	head, tail []byte
	hmax, tmax int
	dropped    int64
}

// NewHeadTail returns a HeadTail that keeps head and tail bytes.
func NewHeadTail(head, tail int) *HeadTail { return &HeadTail{hmax: head, tmax: tail} }

// Write implements io.Writer; it never fails.
func (b *HeadTail) Write(p []byte) (int, error) {
	n := len(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.hmax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.tmax; over > 0 {
		b.dropped += int64(over)
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

// String returns the head and the tail, with a line that says how many
// bytes were dropped between them when any were.
func (b *HeadTail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	return fmt.Sprintf("%s\n… [%d bytes of output omitted] …\n%s", b.head, b.dropped, b.tail)
}

// Clip shortens s to at most n bytes, cut on a rune boundary, with "…"
// appended when anything was cut: one line of a child's output in a log
// line or an error message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

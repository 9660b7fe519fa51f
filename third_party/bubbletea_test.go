package thirdparty

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// The Bubble Tea fork writes a frame when the view changed, right away
// when the last frame is at least a frame interval old and otherwise once
// it is, instead of on a ticker that woke the program fps times a second
// (tea.go, startRenderer). These tests hold it to what kz relies on: a
// change after a quiet spell is written without waiting for a tick, every
// change made inside one interval is written together in one frame (the
// newest view, never a stale one), frames come no faster than fps, and the
// last view is written before the program exits.

// frameModel shows whatever string it was last sent. The tests send
// strings that differ from each other in every column, so that the
// renderer, which writes only what changed, writes each one whole.
type frameModel struct{ text string }

func (m frameModel) Init() tea.Cmd { return nil }

func (m frameModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if s, ok := msg.(string); ok {
		m.text = s
	}
	return m, nil
}

func (m frameModel) View() tea.View { return tea.NewView(m.text) }

// stampedWriter keeps each write with the time it was made.
type stampedWriter struct {
	mu     sync.Mutex
	writes []stampedWrite
}

type stampedWrite struct {
	at   time.Time
	data string
}

func (w *stampedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, stampedWrite{time.Now(), string(p)})
	w.mu.Unlock()
	return len(p), nil
}

// firstWith is the time of the first write that contains s.
func (w *stampedWriter) firstWith(s string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wr := range w.writes {
		if strings.Contains(wr.data, s) {
			return wr.at, true
		}
	}
	return time.Time{}, false
}

func (w *stampedWriter) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, wr := range w.writes {
		b.WriteString(wr.data)
	}
	return b.String()
}

func (w *stampedWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

// waitWrite waits for a write containing s, for at most limit.
func waitWrite(t *testing.T, w *stampedWriter, s string, limit time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if at, ok := w.firstWith(s); ok {
			return at
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%q was never written; output: %q", s, w.all())
	return time.Time{}
}

// startFrameProgram runs a frameModel program writing to a
// stampedWriter; wait quits it and returns Run's error.
// waitQuiet waits until nothing has been written for quiet, for at most
// limit.
func waitQuiet(t *testing.T, w *stampedWriter, quiet, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		last := w.writes[len(w.writes)-1].at
		w.mu.Unlock()
		if time.Since(last) > quiet {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the output never went quiet for %v", quiet)
}

func startFrameProgram(t *testing.T, fps int) (p *tea.Program, out *stampedWriter, wait func() error) {
	t.Helper()
	out = &stampedWriter{}
	p = tea.NewProgram(frameModel{text: "000000"}, tea.WithContext(context.Background()),
		tea.WithInput(bytes.NewReader(nil)), tea.WithOutput(out), tea.WithWindowSize(80, 24),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}), tea.WithFPS(fps))
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		_, runErr = p.Run()
	}()
	wait = func() error {
		p.Quit()
		<-done
		return runErr
	}
	t.Cleanup(func() { _ = wait() })
	return p, out, wait
}

func TestBubbleTeaForkWritesAChangeAtOnceAfterQuiet(t *testing.T) {
	// One frame a second: upstream's ticker held a change up to a second.
	p, out, _ := startFrameProgram(t, 1)
	waitWrite(t, out, "000000", 5*time.Second)
	// The start-up repaints (the window size, the terminal's answers)
	// are over once the output has been quiet for more than a frame.
	waitQuiet(t, out, 1100*time.Millisecond, 10*time.Second)
	sent := time.Now()
	p.Send("111111")
	at := waitWrite(t, out, "111111", 5*time.Second)
	if d := at.Sub(sent); d >= 800*time.Millisecond {
		t.Errorf("a change a quiet second after the last frame was written after %v: it waited for a tick", d)
	}
}

func TestBubbleTeaForkCoalescesChangesWithinAFrame(t *testing.T) {
	p, out, _ := startFrameProgram(t, 1)
	first := waitWrite(t, out, "000000", 5*time.Second)
	// Sent within the first frame's interval: held, then written together.
	p.Send("111111")
	p.Send("222222")
	p.Send("333333")
	at := waitWrite(t, out, "333333", 5*time.Second)
	if d := at.Sub(first); d < 900*time.Millisecond {
		t.Errorf("the next frame came %v after the first, at 1 frame a second", d)
	}
	for _, stale := range []string{"111111", "222222"} {
		if strings.Contains(out.all(), stale) {
			t.Errorf("%q, replaced inside the same frame interval, was written", stale)
		}
	}
}

func TestBubbleTeaForkStaysQuietWhenNothingChanges(t *testing.T) {
	p, out, _ := startFrameProgram(t, 120)
	waitWrite(t, out, "000000", 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	n := out.count()
	// Messages that leave the view as it is write nothing.
	for range 20 {
		p.Send(struct{}{})
	}
	time.Sleep(300 * time.Millisecond)
	if got := out.count(); got != n {
		t.Errorf("%d writes while the view stayed the same", got-n)
	}
}

func TestBubbleTeaForkWritesTheLastViewBeforeExit(t *testing.T) {
	p, out, wait := startFrameProgram(t, 1)
	waitWrite(t, out, "000000", 5*time.Second)
	p.Send("999999")
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.all(), "999999") {
		t.Errorf("the last view, held for the frame interval, was lost at exit: %q", out.all())
	}
}

package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// syncBuffer is a bytes.Buffer safe for the program's writer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunDrivesARealProgram runs the whole Bubble Tea program on pipes:
// keys typed into its input reach the session, and quitting returns nil.
func TestRunDrivesARealProgram(t *testing.T) {
	sess, sub := realSession(t, permissionScript)
	sub.Close() // Run subscribes on its own.
	in, keys := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Session: sess, Input: in, Output: out, Width: 100, Height: 30, Theme: "light"})
	}()
	send := func(s string) {
		if _, err := keys.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	send("clean up\r")
	waitFor(t, "the permission request", func() bool { return len(sess.Pending()) == 1 })
	waitFor(t, "the dialog on screen", func() bool { return strings.Contains(out.String(), "Permission needed") })
	time.Sleep(answerGrace + 100*time.Millisecond) // a person reads first
	send("y")
	waitTurnEnd(t, sess)
	if err := quitRun(t, keys, done); err != nil {
		t.Fatal(err)
	}
	var allowed bool
	for _, e := range sess.Transcript() {
		allowed = allowed || (e.Kind == engine.EntryDecision && e.Status == "allow")
	}
	if !allowed {
		t.Fatalf("transcript: %+v", sess.Transcript())
	}
}

// blockingSource delivers nothing until its context ends.
type blockingSource struct{}

func (blockingSource) NextBatch(ctx context.Context) ([]engine.Event, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	in, keys := io.Pipe()
	defer func() { _ = keys.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Session: newFake(), Events: blockingSource{}, Input: in, Output: &syncBuffer{}, Width: 80, Height: 24, NoColor: true})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestRunRejectsUnknownTheme(t *testing.T) {
	err := Run(context.Background(), Options{Session: newFake(), Events: blockingSource{}, Theme: "solarized"})
	if err == nil || !strings.Contains(err.Error(), "unknown theme") {
		t.Fatalf("err = %v", err)
	}
}

// TestRunReturnsResumeRequest opens the session picker in a real program
// and chooses another session: Run returns a ResumeRequest naming it.
func TestRunReturnsResumeRequest(t *testing.T) {
	in, keys := io.Pipe()
	defer func() { _ = keys.Close() }()
	out := &syncBuffer{}
	st := &fakeSessions{list: []engine.SessionInfo{{ID: "other1", Title: "earlier work", Workspace: "/w"}}}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Session: newFake(), Events: blockingSource{}, Input: in, Output: out,
			Width: 100, Height: 30, Sessions: st, Workspace: "/w"})
	}()
	if _, err := keys.Write([]byte("/sessions\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the picker", func() bool { return strings.Contains(out.String(), "earlier work") })
	if _, err := keys.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var rr *ResumeRequest
		if !errors.As(err, &rr) || rr.SessionID != "other1" {
			t.Fatalf("Run = %v, want a ResumeRequest for other1", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after choosing a session")
	}
}

// quitRun presses ctrl+c, closes the program's input and returns what Run
// returned. The session's transcript can hold the turn's end before the
// program has folded its final_result (slow under the race detector):
// ctrl+c then only asks for a second press, which a second one, a second
// later, confirms. That one is sent from its own goroutine, since nobody
// may read it any more; closing the pipe ends that write.
func quitRun(t *testing.T, keys io.WriteCloser, done <-chan error) error {
	t.Helper()
	if _, err := keys.Write([]byte("\x03")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		_ = keys.Close()
		return err
	case <-time.After(time.Second):
	}
	second := make(chan struct{})
	go func() {
		defer close(second)
		_, _ = keys.Write([]byte("\x03"))
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctrl+c")
	}
	// The first press started the wait for the second (a tea.Tick of
	// quitWindow), whose goroutine outlives the program until then.
	time.Sleep(quitWindow + 100*time.Millisecond)
	_ = keys.Close()
	<-second
	return err
}

// waitTurnEnd waits until the session's transcript holds a turn's end.
func waitTurnEnd(t *testing.T, sess *engine.Session) {
	t.Helper()
	waitFor(t, "the turn's end", func() bool {
		for _, e := range sess.Transcript() {
			if e.Kind == engine.EntryTurnEnd {
				return true
			}
		}
		return false
	})
}

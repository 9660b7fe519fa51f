package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// closedSource ends at once: a test that attaches a session pumps the
// session's events through its own subscription instead.
type closedSource struct{}

func (closedSource) NextBatch(context.Context) ([]engine.Event, error) { return nil, io.EOF }

// preparingModel is a quiet model without a session, as Run builds it
// for Options.Prepare.
func preparingModel(t *testing.T, w, h int) *Model {
	t.Helper()
	m := newPreparingModel(context.Background(), themes.MustResolve("dark", false), "preparing demo…")
	m.quiet = true
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	m.update(teaSize(w, h))
	return m
}

// TestGoldenPreparing is the first frame of a TUI whose session is being
// prepared, at 80×24: the empty transcript, the input and the status bar
// saying what is prepared.
func TestGoldenPreparing(t *testing.T) {
	m := preparingModel(t, 80, 24)
	golden(t, "preparing", 80, m.View().Content)
}

// TestPreSessionQueuesInputAndSendsItOnAttach types while the session is
// prepared: the messages wait on screen, nothing reaches a session, and
// once a real session is attached the first is sent and answered, the
// second after the first turn's end. The welcome text comes with the
// session.
func TestPreSessionQueuesInputAndSendsItOnAttach(t *testing.T) {
	m := preparingModel(t, 100, 30)
	if s := m.screen(); !strings.Contains(s, "preparing demo…") || !strings.Contains(s, "Ask kz") {
		t.Fatalf("first frame without the input or the status:\n%s", s)
	}
	m.typeText("first question")
	m.press("enter")
	m.typeText("second question")
	m.press("enter")
	m.typeText("draft")
	s := m.screen()
	for _, want := range []string{"queued: first question", "queued: second question", "› draft", "preparing demo…"} {
		if !strings.Contains(s, want) {
			t.Fatalf("missing %q before the session is attached:\n%s", want, s)
		}
	}
	// A key that needs the session is refused clearly, not with a panic.
	m.press("shift+tab")
	if s := m.screen(); !strings.Contains(s, errNotReady.Error()) {
		t.Fatalf("mode change before the session: no clear refusal:\n%s", s)
	}

	sess, sub := realSession(t, `{"type":"text_delta","text":"answer one"}
{"end_turn":true}
{"type":"text_delta","text":"answer two"}
`)
	m.update(attachMsg{opts: Options{Session: sess, Events: closedSource{}, Welcome: "Welcome to the test."}})
	if m.pre != nil || m.status.preparing != "" {
		t.Fatal("still preparing after the session was attached")
	}
	pumpUntil(t, m, sub, "both answers", func(s string) bool {
		return strings.Contains(s, "answer one") && strings.Contains(s, "answer two")
	})
	s = m.screen()
	for _, want := range []string{"Welcome to the test.", "first question", "second question", "› draft", "scripted/m"} {
		if !strings.Contains(s, want) {
			t.Fatalf("missing %q after the session was attached:\n%s", want, s)
		}
	}
	if strings.Contains(s, "queued:") || strings.Contains(s, "preparing") {
		t.Fatalf("queue or preparing status left on screen:\n%s", s)
	}
	if i, j := strings.Index(s, "first question"), strings.Index(s, "second question"); i > j {
		t.Fatalf("queued messages sent out of order:\n%s", s)
	}
}

// TestPreSessionAttachFailureIsShown: a failed set-up is an error on
// screen, what was typed stays queued, and Run's error says why.
func TestPreSessionAttachFailureIsShown(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  attachMsg
		want string
	}{
		{"prepare failed", attachMsg{err: errors.New("disk full")}, "disk full"},
		{"no session", attachMsg{opts: Options{}}, "a session is required"},
		{"cannot subscribe", attachMsg{opts: Options{Session: newFake()}}, "Options.Events is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := preparingModel(t, 100, 30)
			m.typeText("keep me")
			m.press("enter")
			m.update(tc.msg)
			s := m.screen()
			for _, want := range []string{"could not prepare the session", tc.want, "queued: keep me", "not ready"} {
				if !strings.Contains(s, want) {
					t.Fatalf("missing %q:\n%s", want, s)
				}
			}
			if err := m.prepareErr(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("prepareErr = %v", err)
			}
			// A late second attach changes nothing.
			m.update(attachMsg{opts: Options{Session: newFake(), Events: closedSource{}}})
			if m.pre == nil {
				t.Fatal("a failed model attached a session later")
			}
		})
	}
}

// TestRunPreparesAfterTheFirstFrame runs the whole program with
// Options.Prepare: the first frame is written while Prepare has not
// returned, a message typed meanwhile reaches the session once Prepare
// returns it, and Run returns after Prepare has.
func TestRunPreparesAfterTheFirstFrame(t *testing.T) {
	sess, sub := realSession(t, `{"type":"text_delta","text":"prepared answer"}`)
	sub.Close() // Run subscribes on its own.
	in, keys := io.Pipe()
	defer func() { _ = keys.Close() }()
	out := &syncBuffer{}
	release := make(chan struct{})
	started := make(chan struct{})
	prepare := func(ctx context.Context) (Options, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return Options{}, ctx.Err()
		}
		return Options{Session: sess}, nil
	}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Prepare: prepare, Preparing: "preparing demo…", Input: in, Output: out, Width: 100, Height: 30})
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("Prepare never started")
	}
	waitFor(t, "the first frame while Prepare waits", func() bool {
		return strings.Contains(out.String(), "Ask kz") && strings.Contains(out.String(), "preparing demo…")
	})
	if _, err := keys.Write([]byte("hello early\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the queued message on screen", func() bool { return strings.Contains(out.String(), "queued: hello early") })
	close(release)
	waitTurnEnd(t, sess)
	if err := quitRun(t, keys, done); err != nil {
		t.Fatal(err)
	}
	var user string
	for _, e := range sess.Transcript() {
		if e.Kind == engine.EntryUser {
			user = e.Text
		}
	}
	if user != "hello early" {
		t.Fatalf("the session got %q, want the message typed before it was ready", user)
	}
}

// TestRunReturnsThePrepareError: a set-up that fails leaves the TUI up
// with the error, and quitting returns it.
func TestRunReturnsThePrepareError(t *testing.T) {
	in, keys := io.Pipe()
	defer func() { _ = keys.Close() }()
	out := &syncBuffer{}
	prepare := func(context.Context) (Options, error) {
		return Options{}, errors.New("cannot create the scratch folder")
	}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Prepare: prepare, Input: in, Output: out, Width: 100, Height: 30})
	}()
	waitFor(t, "the error on screen", func() bool { return strings.Contains(out.String(), "cannot create the scratch folder") })
	if _, err := keys.Write([]byte("\x03")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cannot create the scratch folder") {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctrl+c")
	}
}

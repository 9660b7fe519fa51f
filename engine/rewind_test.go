package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// primingRuntime answers each prompt and records the history and native
// session id each turn was primed with.
type primingRuntime struct {
	mu      sync.Mutex
	prompts [][]string
	natives []string
}

func (r *primingRuntime) Name() string { return "h" }
func (r *primingRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *primingRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	var users []string
	for _, e := range t.History {
		if e.Kind == engine.EntryUser {
			users = append(users, e.Text)
		}
	}
	r.mu.Lock()
	r.prompts = append(r.prompts, users)
	r.natives = append(r.natives, t.NativeID)
	r.mu.Unlock()
	t.Emit(engine.Event{Type: engine.EventSessionStarted, NativeID: "native-" + t.Prompt})
	t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: "ok " + t.Prompt})
	return engine.Result{Output: "ok " + t.Prompt}, nil
}

// TestRewindConversationPrimesFromBeforeTheTurn: after a rewind to before
// turn 2 of three, the next turn is primed with turn 1 only and resumes no
// native session; nothing is deleted, and a session resumed from the
// stored transcript sees the same.
func TestRewindConversationPrimesFromBeforeTheTurn(t *testing.T) {
	rt := &primingRuntime{}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(rt)}})
	ctx := context.Background()
	for _, p := range []string{"one", "two", "three"} {
		if _, err := s.RunTurn(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RewindConversation(ctx, 5); err == nil || !strings.Contains(err.Error(), "no turn 5") {
		t.Fatalf("rewind to a turn the session lacks: %v", err)
	}
	if err := s.RewindConversation(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunTurn(ctx, "four"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rt.prompts[3], ","); got != "one" {
		t.Fatalf("turn 4 primed with %q, want the conversation before turn 2", got)
	}
	if rt.natives[2] != "native-two" || rt.natives[3] != "" {
		t.Fatalf("native sessions resumed: %q", rt.natives)
	}
	// Append-only: every turn's messages are still in the journal, and
	// the marker is there.
	var marker engine.Event
	users := 0
	for _, ev := range j.all() {
		switch ev.Type {
		case engine.EventUserMessage:
			users++
		case engine.EventConversationRewound:
			marker = ev
		}
	}
	if users != 4 || marker.RewindTurn != 2 || marker.LastTurn != 3 {
		t.Fatalf("%d user messages, marker %+v", users, marker)
	}

	// A session resumed from what was stored (the transcript as the
	// store folds it, and the native ids it kept) is primed the same way.
	var b engine.TranscriptBuilder
	for _, ev := range j.all() {
		b.Apply(ev)
	}
	rt2 := &primingRuntime{}
	prior := &engine.Prior{LastSeq: 1000, LastTurn: 4, LastRuntime: "h", Transcript: b.Entries,
		Natives: map[string]engine.NativeRef{"h": {ID: "native-two", TurnID: 2}}}
	s2, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(rt2)}, Prior: prior})
	if _, err := s2.RunTurn(ctx, "five"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rt2.prompts[0], ","); got != "one,four" {
		t.Fatalf("resumed turn primed with %q, want one,four", got)
	}
	if rt2.natives[0] != "" {
		t.Fatalf("a native session from before the rewind was resumed: %q", rt2.natives[0])
	}
}

// TestRewindConversationRefusesWhileBusy: a running turn is not rewound.
func TestRewindConversationRefusesWhileBusy(t *testing.T) {
	rt := &heldRuntime{started: make(chan struct{}), release: make(chan struct{})}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(rt)}})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { _, err := s.RunTurn(ctx, "x"); done <- err }()
	<-rt.started
	if err := s.RewindConversation(ctx, 1); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("rewind during a turn: %v", err)
	}
	close(rt.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type heldRuntime struct {
	started, release chan struct{}
}

func (r *heldRuntime) Name() string { return "b" }
func (r *heldRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *heldRuntime) Run(ctx context.Context, _ *engine.Turn) (engine.Result, error) {
	close(r.started)
	select {
	case <-r.release:
	case <-ctx.Done():
	}
	return engine.Result{Output: "done"}, nil
}

package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/hooks"
)

// A permission prompt that waits for the person runs the Notification
// hooks, without holding the request back; Close waits for them.
func TestNotificationHookWhenAPromptWaits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	note := filepath.Join(dir, "note")
	r, err := hooks.New(hooks.Options{Workspace: dir, User: hooks.Config{"Notification": {{Matcher: "permission_prompt",
		Hooks: []hooks.Command{{Command: "cat > " + note + ".tmp && mv " + note + ".tmp " + note}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript))}, Interactive: true, Hooks: r, Workspace: dir})
	sub := s.Subscribe()
	defer sub.Close()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var req engine.Event
	for req.Type != engine.EventPermissionRequested {
		if req, err = sub.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The hook runs beside the waiting request: wait (bounded) for its
	// output rather than race it.
	var b []byte
	for ctx.Err() == nil {
		if b, err = os.ReadFile(note); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(string(b), `"message":"kz needs your permission to use bash"`) || !strings.Contains(string(b), `"hook_event_name":"Notification"`) {
		t.Errorf("notification input %q", b)
	}
	if err := s.Answer(req.RequestID, engine.Answer{Decision: engine.DecisionDeny}); err != nil {
		t.Fatal(err)
	}
	for ev := (engine.Event{}); ev.Type != engine.EventFinalResult; {
		if ev, err = sub.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A UserPromptSubmit block ends the turn as denied before the runtime
// starts; the person's prompt is still recorded.
func TestPromptHookBlocksBeforeTheRuntime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := hooks.New(hooks.Options{Workspace: dir, User: hooks.Config{"UserPromptSubmit": {{
		Hooks: []hooks.Command{{Command: "echo not in this repository >&2; exit 2"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "scripted", hello), "m1")}, Hooks: r, Workspace: dir})
	final, err := s.RunTurn(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusError) || final.ErrorKind != engine.ErrDenied || !strings.Contains(final.Text, "not in this repository") {
		t.Fatalf("final %+v", final)
	}
	for _, ev := range j.all() {
		if ev.Type == engine.EventSessionStarted || ev.Type == engine.EventTextDelta {
			t.Errorf("the runtime ran: %+v", ev)
		}
	}
	if j.all()[0].Type != engine.EventUserMessage || j.all()[0].Text != "hi" {
		t.Errorf("first event %+v", j.all()[0])
	}
}

package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
)

// pacedModel is a model with pacing on (not quiet) and a clock the test
// moves by hand. Its Cmds are not run: they would sleep for their ticks.
func pacedModel(t *testing.T) (*Model, *time.Time) {
	t.Helper()
	m := testModel(t, newFake(), 80, 20)
	m.quiet = false
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.now = func() time.Time { return clock }
	m.Update(eventsMsg{events: []engine.Event{{Type: engine.EventUserMessage, TurnID: 1, Text: "stream please"}}})
	return m, &clock
}

func delta(text string) eventsMsg {
	return eventsMsg{events: []engine.Event{{Type: engine.EventTextDelta, TurnID: 1, Text: text}}}
}

func shown(m *Model) string { return ansi.Strip(m.View().Content) }

// Deltas that arrive within a frame interval of the last frame that
// showed streamed text are drawn together in the next one, which a
// scheduled tick brings.
func TestPacingCoalescesDeltasIntoTheNextFrame(t *testing.T) {
	m, clock := pacedModel(t)
	if got := shown(m); !strings.Contains(got, "stream please") {
		t.Fatalf("the prompt is not shown:\n%s", got)
	}
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("lorem "))
	// Drawn at once, by the View that follows the Update: no tick is
	// asked for it.
	if wait, ok := m.pace.catchUp(m.now()); ok {
		t.Fatalf("text drawn at once asks for a frame tick in %v", wait)
	}
	first := shown(m)
	if !strings.Contains(first, "lorem") {
		t.Fatalf("the first delta waits for a frame:\n%s", first)
	}
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("ipsum "))
	if !m.frameDue {
		t.Fatal("no frame tick is due for a lagging frame")
	}
	if got := shown(m); got != first || strings.Contains(got, "ipsum") {
		t.Fatalf("a delta 1 ms after a frame of text was drawn at once:\n%s", got)
	}
	wait, ok := m.pace.catchUp(m.now())
	if !ok || wait <= 0 || wait > streamFrameInterval {
		t.Fatalf("catchUp = %v, %v; want a wait within one frame interval", wait, ok)
	}
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("dolor"))
	*clock = clock.Add(wait)
	m.Update(frameMsg{})
	got := shown(m)
	if !strings.Contains(got, "lorem ipsum dolor") {
		t.Fatalf("the frame after the tick lacks the deltas:\n%s", got)
	}
	if _, ok := m.pace.catchUp(m.now()); ok {
		t.Fatal("a frame that shows everything still asks for a catch-up tick")
	}
}

// The final message, keys and other events are never held back: the next
// View shows them even within a frame interval of the last frame.
func TestPacingNeverHoldsBackTheFinalState(t *testing.T) {
	m, clock := pacedModel(t)
	_ = shown(m)
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("partial "))
	m.Update(eventsMsg{events: []engine.Event{{Type: engine.EventAssistantMessage, TurnID: 1, Text: "partial answer, complete"}}})
	if got := shown(m); !strings.Contains(got, "partial answer, complete") {
		t.Fatalf("the final message waits for a frame:\n%s", got)
	}
	m.Update(delta("x"))
	m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if got := shown(m); !strings.Contains(got, "› q") {
		t.Fatalf("a key waits for a frame:\n%s", got)
	}
}

// In quiet mode (no ticks) nothing is paced: every View is current.
func TestPacingIsOffWhenQuiet(t *testing.T) {
	m := testModel(t, newFake(), 80, 20)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "q"})
	_ = shown(m)
	m.Update(delta("visible at once"))
	if got := shown(m); !strings.Contains(got, "visible at once") {
		t.Fatalf("a quiet model held a delta back:\n%s", got)
	}
}

// gatherScript streams 40 deltas 2 ms apart, then, after a pause of 1 s,
// the final message. The pause lets a test tell a wait that ends at its
// deadline from one that ends on the final message.
func gatherScript() string {
	var b strings.Builder
	b.WriteString(`{"type": "session_started"}` + "\n" + `{"cycle": true}` + "\n")
	for i := range 40 {
		// The first delta comes well after the turn's first events, so a
		// reader slowed by a loaded machine still takes those alone and
		// then a batch of nothing but text (see firstDeltas).
		delay := 2
		if i == 0 {
			delay = 300
		}
		fmt.Fprintf(&b, `{"type": "text_delta", "text": "w%02d ", "delay_ms": %d}`+"\n", i, delay)
	}
	b.WriteString(`{"type": "assistant_message", "text": "end", "delay_ms": 1000}` + "\n")
	return b.String()
}

// firstDeltas submits a prompt and returns the first batch that holds
// nothing but streamed text, and the text seen before it.
func firstDeltas(t *testing.T, sess *engine.Session, sub *engine.Subscription) (batch []engine.Event, before string) {
	t.Helper()
	if err := sess.Submit("go"); err != nil {
		t.Fatal(err)
	}
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		evs, err := sub.NextBatch(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if paced(eventsMsg{events: evs}) {
			return evs, before
		}
		before += deltaText(evs)
	}
}

func deltaText(evs []engine.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type == engine.EventTextDelta {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// Streamed text is gathered until the deadline: the wait never ends early
// while only text comes, and every delta is kept, in order.
func TestGatherDeltasWaitsForTheFrameWhileOnlyTextComes(t *testing.T) {
	sess, sub := realSession(t, gatherScript())
	evs, before := firstDeltas(t, sess, sub)
	start := time.Now()
	deadline := start.Add(40 * time.Millisecond)
	evs = gatherDeltas(t.Context(), sub, evs, deadline)
	if time.Now().Before(deadline) {
		t.Errorf("the wait ended %v before its deadline with only text in it", time.Until(deadline))
	}
	if !paced(eventsMsg{events: evs}) {
		t.Fatalf("the gathered batch holds more than text: %+v", evs)
	}
	// The rest, read without gathering, completes the text exactly.
	text := before + deltaText(evs)
	for !strings.Contains(text, "w39 ") {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		more, err := sub.NextBatch(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		text += deltaText(more)
	}
	var want strings.Builder
	for i := range 40 {
		fmt.Fprintf(&want, "w%02d ", i)
	}
	if text != want.String() {
		t.Errorf("streamed text\n got  %q\n want %q", text, want.String())
	}
}

// Any event other than streamed text ends the wait at once: the final
// message is not held back until the deadline.
func TestGatherDeltasStopsAtOtherEvents(t *testing.T) {
	sess, sub := realSession(t, gatherScript())
	evs, _ := firstDeltas(t, sess, sub)
	deadline := time.Now().Add(time.Minute)
	evs = gatherDeltas(t.Context(), sub, evs, deadline)
	i := slices.IndexFunc(evs, func(ev engine.Event) bool { return !paced(eventsMsg{events: []engine.Event{ev}}) })
	if i < 0 || evs[i].Type != engine.EventAssistantMessage || evs[i].Text != "end" {
		t.Fatalf("the wait did not end on the final message: %+v", evs)
	}
	if left := time.Until(deadline); left < 30*time.Second {
		t.Errorf("the final message waited for the deadline (%v left)", left)
	}
}

// A cancelled context ends the wait with what was gathered.
func TestGatherDeltasEndsWithItsContext(t *testing.T) {
	sess, sub := realSession(t, gatherScript())
	evs, _ := firstDeltas(t, sess, sub)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got := gatherDeltas(ctx, sub, evs, time.Now().Add(time.Minute))
	if len(got) < len(evs) || !paced(eventsMsg{events: got}) {
		t.Errorf("after cancel: %d events (had %d), text only %v", len(got), len(evs), paced(eventsMsg{events: got}))
	}
}

// The frame a gathered batch is for: one interval after a fresh frame
// that showed streamed text, or after now when the next message will be
// drawn at once. A fresh frame of the spinner alone does not hold text.
func TestGatherUntilIsTheNextFrame(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var p framePacer
	if got := p.gatherUntil(now); !got.Equal(now.Add(streamFrameInterval)) {
		t.Errorf("no kept frame: %v, want %v", got, now.Add(streamFrameInterval))
	}
	p.note(delta("x"), false)
	p.keep(tea.NewView("x"), now.Add(-10*time.Millisecond))
	if got := p.gatherUntil(now); !got.Equal(now.Add(streamFrameInterval - 10*time.Millisecond)) {
		t.Errorf("fresh frame of text: %v", got)
	}
	p.note(spinner.TickMsg{}, false)
	p.keep(tea.NewView("x"), now.Add(-5*time.Millisecond))
	if got := p.gatherUntil(now); !got.Equal(now.Add(streamFrameInterval - 10*time.Millisecond)) {
		t.Errorf("a spinner frame after the frame of text: %v", got)
	}
	p.note(delta("x"), false)
	p.keep(tea.NewView("x"), now.Add(-time.Second))
	p.note(spinner.TickMsg{}, false)
	p.keep(tea.NewView("x"), now.Add(-5*time.Millisecond))
	if got := p.gatherUntil(now); !got.Equal(now.Add(streamFrameInterval)) {
		t.Errorf("a fresh spinner frame, text long ago: %v", got)
	}
}

// A frame that only the spinner's turn brought does not hold back the
// streamed text that follows it: the first words after a pause are drawn
// at once, and only the words within an interval of them wait.
func TestPacingSpinnerFramesDoNotHoldText(t *testing.T) {
	m, clock := pacedModel(t)
	m.status.running = true
	_ = shown(m)
	*clock = clock.Add(time.Second)
	m.Update(m.spin.Tick())
	spun := shown(m)
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("first words "))
	got := shown(m)
	if !strings.Contains(got, "first words") {
		t.Fatalf("text 1 ms after a spinner frame waits for a frame:\n%s", got)
	}
	if got == spun {
		t.Fatal("the frame with the text is the spinner's")
	}
	// Within an interval of that frame, the spinner's next turn and more
	// text both wait for the catch-up frame.
	*clock = clock.Add(10 * time.Millisecond)
	m.Update(m.spin.Tick())
	*clock = clock.Add(time.Millisecond)
	m.Update(delta("more"))
	if again := shown(m); again != got {
		t.Fatalf("text 11 ms after a frame of text was drawn at once:\n%s", again)
	}
	wait, ok := m.pace.catchUp(m.now())
	if !ok || wait != streamFrameInterval-11*time.Millisecond {
		t.Fatalf("catchUp = %v, %v; want %v", wait, ok, streamFrameInterval-11*time.Millisecond)
	}
	*clock = clock.Add(wait)
	m.Update(frameMsg{})
	if final := shown(m); !strings.Contains(final, "first words more") {
		t.Fatalf("the catch-up frame lacks the text:\n%s", final)
	}
}

// A spinner tick within a frame interval of the last frame is drawn with
// the next frame, not in a frame of its own, and asks for none: the
// spinner's next tick, more than an interval later, draws it.
func TestPacingDrawsSpinnerTicksWithTheNextFrame(t *testing.T) {
	m, clock := pacedModel(t)
	m.status.running = true
	first := shown(m)
	*clock = clock.Add(time.Millisecond)
	m.Update(m.spin.Tick())
	if got := shown(m); got != first {
		t.Fatalf("a spinner tick 1 ms after a frame was drawn at once:\n%s", got)
	}
	if wait, ok := m.pace.catchUp(m.now()); ok {
		t.Fatalf("a spinner tick asks for a frame of its own in %v", wait)
	}
	*clock = clock.Add(m.spin.Spinner.FPS)
	m.Update(m.spin.Tick())
	if got := shown(m); got == first {
		t.Fatalf("the spinner's next tick does not show its turn:\n%s", got)
	}
}

// In a stream, a spinner tick between two frames of text asks for no
// frame: the text's next frame draws its turn too. A frame of its own
// came when the text's next frame was due, and, drawn just before the
// text, made two frames of one.
func TestPacingDrawsASpinnerTurnWithTheNextText(t *testing.T) {
	m, clock := pacedModel(t)
	m.status.running = true
	*clock = clock.Add(time.Second)
	m.Update(delta("one "))
	first := shown(m)
	*clock = clock.Add(30 * time.Millisecond)
	m.Update(m.spin.Tick())
	if got := shown(m); got != first {
		t.Fatalf("a spinner tick 30 ms after a frame of text was drawn at once:\n%s", got)
	}
	if wait, ok := m.pace.catchUp(m.now()); ok {
		t.Fatalf("a spinner tick between frames of text asks for a frame in %v", wait)
	}
	*clock = clock.Add(streamFrameInterval - 30*time.Millisecond)
	m.Update(delta("two"))
	got := shown(m)
	if !strings.Contains(got, "one two") {
		t.Fatalf("the text's next frame lacks the text:\n%s", got)
	}
	spun := strings.Replace(first, "one", "one two", 1)
	if got == spun {
		t.Fatalf("the text's next frame lacks the spinner's turn:\n%s", got)
	}
}

// A frame tick that follows a stream waits until the kept frame goes
// stale: before then it would be served the kept frame and draw nothing.
func TestUntilFreshIsWhatIsLeftOfTheKeptFrame(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var p framePacer
	if got := p.untilFresh(now); got != 0 {
		t.Errorf("no kept frame: %v, want 0", got)
	}
	p.keep(tea.NewView("x"), now.Add(-10*time.Millisecond))
	if got := p.untilFresh(now); got != streamFrameInterval-10*time.Millisecond {
		t.Errorf("kept 10ms ago: %v, want %v", got, streamFrameInterval-10*time.Millisecond)
	}
	if got := p.untilFresh(now.Add(time.Second)); got != 0 {
		t.Errorf("kept long ago: %v, want 0", got)
	}
	// A key drops the kept frame: the next tick is not held back.
	p.note(tea.KeyPressMsg{Code: 'a'}, false)
	if got := p.untilFresh(now); got != 0 {
		t.Errorf("after a key: %v, want 0", got)
	}
}

// lateSource delivers one delta after a delay, and records the deadline
// the gathering that follows asks for.
type lateSource struct {
	delay    time.Duration
	arrived  time.Time
	deadline time.Time
}

func (s *lateSource) NextBatch(ctx context.Context) ([]engine.Event, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.arrived = time.Now()
	return []engine.Event{{Type: engine.EventTextDelta, TurnID: 1, Text: "late"}}, nil
}

func (s *lateSource) NextBatchBy(ctx context.Context, deadline time.Time) ([]engine.Event, error) {
	s.deadline = deadline
	if wait := time.Until(deadline); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	return nil, nil
}

// Streamed text gathers until the frame that was next when the wait
// began, not for a frame interval from its arrival: text that comes after
// that frame was due is handed on at once, and text that comes within an
// interval waits only for the rest of it.
func TestWaitEventsGathersUntilTheNextFrame(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{
		{"after the frame was due", 2 * streamFrameInterval},
		{"within the interval", streamFrameInterval / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel(t, newFake(), 80, 20)
			m.quiet = false
			m.now = time.Now
			src := &lateSource{delay: tc.delay}
			m.events = src
			before := time.Now()
			cmd := m.waitEvents()
			msg, ok := cmd().(eventsMsg)
			returned := time.Now()
			if !ok || len(msg.events) != 1 || msg.events[0].Text != "late" {
				t.Fatalf("waitEvents gave %#v", msg)
			}
			// No kept frame: the next frame is due an interval after the
			// Cmd was made.
			if due := before.Add(streamFrameInterval); src.deadline.Before(before) || src.deadline.After(due.Add(10*time.Millisecond)) {
				t.Fatalf("gathered until %v after the wait began, want about %v", src.deadline.Sub(before), streamFrameInterval)
			}
			if tc.delay > streamFrameInterval {
				if held := returned.Sub(src.arrived); held > streamFrameInterval-10*time.Millisecond {
					t.Fatalf("text that came after its frame was due was held %v", held)
				}
			}
		})
	}
}

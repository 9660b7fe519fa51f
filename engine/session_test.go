package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memJournal is an in-memory journal that records appends in order.
type memJournal struct {
	mu     sync.Mutex
	events []engine.Event
}

func (j *memJournal) Append(ev engine.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, ev)
	return nil
}

func (j *memJournal) Flush(context.Context) error { return nil }

func (j *memJournal) all() []engine.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]engine.Event(nil), j.events...)
}

func (j *memJournal) types() []engine.EventType {
	var out []engine.EventType
	for _, ev := range j.all() {
		out = append(out, ev.Type)
	}
	return out
}

func script(t *testing.T, name, body string) *scripted.Runtime {
	t.Helper()
	rt, err := scripted.Parse(name, name+".jsonl", strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse script: %v", err)
	}
	return rt
}

func entry(rt engine.Runtime, models ...string) engine.RuntimeEntry {
	return engine.RuntimeEntry{Runtime: rt, Models: models}
}

func newSession(t *testing.T, cfg engine.Config) (*engine.Session, *memJournal) {
	t.Helper()
	j := &memJournal{}
	cfg.Journal = j
	s, err := engine.NewSession(cfg)
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s, j
}

const hello = `{"kz_script":1,"model":"m1","capabilities":["text_completion","streaming_text","native_tool_loop","filesystem_read","filesystem_edit","shell"]}
{"type":"session_started"}
{"cycle":true}
{"type":"text_delta","text":"Hel"}
{"type":"text_delta","text":"lo"}
{"type":"assistant_message","text":"Hello"}
{"type":"usage_updated","usage":{"input_tokens":10,"output_tokens":2},"cost_usd":0.25}
`

func TestTurnCompletesAndSequencesEvents(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "scripted", hello), "m1")}})
	sub := s.Subscribe()
	defer sub.Close()
	final, err := s.RunTurn(context.Background(), "hi")
	if err != nil {
		t.Fatalf("run turn: %v", err)
	}
	if final.Status != string(engine.StatusComplete) || final.Output != "Hello" || final.Cycles != 1 {
		t.Fatalf("final = %+v", final)
	}
	if final.Usage == nil || final.Usage.InputTokens != 10 || final.CostUSD != 0.25 {
		t.Fatalf("usage not summed: %+v cost %v", final.Usage, final.CostUSD)
	}
	want := []engine.EventType{engine.EventUserMessage, engine.EventSessionStarted, engine.EventTextDelta, engine.EventTextDelta,
		engine.EventAssistantMessage, engine.EventUsageUpdated, engine.EventFinalResult}
	got := j.types()
	if strings.Join(typeNames(got), ",") != strings.Join(typeNames(want), ",") {
		t.Fatalf("journal types = %v, want %v", got, want)
	}
	for i, ev := range j.all() {
		if ev.Seq != int64(i+1) || ev.SessionID != s.ID() || ev.Time.IsZero() || ev.TurnID != 1 || ev.Runtime != "scripted" {
			t.Fatalf("event %d badly stamped: %+v", i, ev)
		}
	}
	// The subscriber sees the same stream, possibly with deltas merged.
	var text strings.Builder
	var last engine.Event
	for last.Type != engine.EventFinalResult {
		ev, err := sub.Next(context.Background())
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		if ev.Type == engine.EventTextDelta {
			text.WriteString(ev.Text)
		}
		last = ev
	}
	if text.String() != "Hello" {
		t.Fatalf("subscriber text = %q", text.String())
	}
	tr := s.Transcript()
	if len(tr) != 3 || tr[0].Kind != engine.EntryUser || tr[1].Kind != engine.EntryAssistant || tr[2].Kind != engine.EntryTurnEnd {
		t.Fatalf("transcript = %+v", tr)
	}
}

func typeNames(ts []engine.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

const textOnly = `{"kz_script":1,"model":"t","capabilities":["text_completion"]}
{"type":"assistant_message","text":"ok"}
`

func TestCapabilityCheckFailsFastWithMessage(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "plain", textOnly))}, Mode: engine.ModeFullAutonomous})
	_, err := s.RunTurn(context.Background(), "hi")
	var ce *engine.CapabilityError
	if !errors.As(err, &ce) {
		t.Fatalf("want capability error, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"full-autonomous", "plain", "native_tool_loop, filesystem_edit, shell", "has text_completion", "use patch-proposal or analysis-only mode"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if n := len(j.all()); n != 0 {
		t.Fatalf("a refused turn wrote %d events", n)
	}
	if err := s.SetMode(engine.ModePatchProposal); err != nil {
		t.Fatalf("set mode: %v", err)
	}
	final, err := s.RunTurn(context.Background(), "hi")
	if err != nil || final.Status != "complete" {
		t.Fatalf("patch-proposal turn: %v %+v", err, final)
	}
	if err := s.SetMode(engine.ModeFullAutonomous); !errors.As(err, &ce) {
		t.Fatalf("set mode full-autonomous on a text runtime: %v", err)
	}
}

// modelRuntime fails for the models in fail with the given kind and records
// every attempt.
type modelRuntime struct {
	name string
	fail map[string]engine.ErrorKind
	mu   sync.Mutex
	runs []string
}

func (r *modelRuntime) Name() string { return r.name }
func (r *modelRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *modelRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	r.mu.Lock()
	r.runs = append(r.runs, r.name+"/"+t.Model)
	r.mu.Unlock()
	if k, ok := r.fail[t.Model]; ok {
		return engine.Result{}, &engine.RuntimeError{Kind: k, Runtime: r.name, Model: t.Model, Message: "fake failure"}
	}
	t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: "answer from " + r.name + "/" + t.Model})
	return engine.Result{Output: "answer from " + r.name + "/" + t.Model}, nil
}

func TestFailoverIsRuntimeOuterModelInner(t *testing.T) {
	t.Parallel()
	a := &modelRuntime{name: "a", fail: map[string]engine.ErrorKind{"a1": engine.ErrRateLimit, "a2": engine.ErrOverloaded}}
	b := &modelRuntime{name: "b", fail: map[string]engine.ErrorKind{"b1": engine.ErrAuth}}
	var log []string
	s, j := newSession(t, engine.Config{
		Runtimes: []engine.RuntimeEntry{entry(a, "a1", "a2"), entry(b, "b1", "b2")},
		Failover: []engine.ChainLink{{Runtime: "b"}},
	})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	log = append(append(log, a.runs...), b.runs...)
	if strings.Join(log, " ") != "a/a1 a/a2 b/b1 b/b2" {
		t.Fatalf("attempt order = %v", log)
	}
	if final.Status != "complete" || final.Runtime != "b" || final.Model != "b2" || final.Text != "" || final.ErrorKind != "" {
		t.Fatalf("final = %+v", final)
	}
	var switches []string
	for _, ev := range j.all() {
		if ev.Type == engine.EventRuntimeSwitched {
			if ev.Reason != "failover" {
				t.Fatalf("switch reason %q", ev.Reason)
			}
			switches = append(switches, ev.From+">"+ev.To)
		}
	}
	if strings.Join(switches, " ") != "a/a1>a/a2 a/a2>b/b1 b/b1>b/b2" {
		t.Fatalf("switches = %v", switches)
	}
	if st := s.State(); st.Runtime != "b" || st.Model != "b2" {
		t.Fatalf("session did not stay on the runtime that answered: %+v", st)
	}
}

func TestNonRetryableFailuresDoNotFailOver(t *testing.T) {
	t.Parallel()
	for _, kind := range []engine.ErrorKind{engine.ErrDenied, engine.ErrBadRequest, engine.ErrContextTooLong} {
		t.Run(string(kind), func(t *testing.T) {
			a := &modelRuntime{name: "a", fail: map[string]engine.ErrorKind{"a1": kind}}
			b := &modelRuntime{name: "b"}
			s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(a, "a1"), entry(b, "b1")}, Failover: []engine.ChainLink{{Runtime: "b"}}})
			final, err := s.RunTurn(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if final.Status != "error" || len(b.runs) != 0 {
				t.Fatalf("final %+v, b runs %v", final, b.runs)
			}
			// The final result alone says why the turn failed.
			if !strings.Contains(final.Text, "fake failure") || final.ErrorKind != kind {
				t.Fatalf("final_result text %q kind %q, want the error", final.Text, final.ErrorKind)
			}
			var sawErr bool
			for _, ev := range j.all() {
				if ev.Type == engine.EventRuntimeSwitched {
					t.Fatalf("switched on %s", kind)
				}
				if ev.Type == engine.EventError && ev.ErrorKind == kind && !ev.Retryable && ev.Runtime == "a" {
					sawErr = true
				}
			}
			if !sawErr {
				t.Fatal("no error event with the failure kind")
			}
		})
	}
}

const permScript = `{"type":"permission_requested","tool":"bash","command":"rm -rf build","tool_call_id":"t1"}
{"type":"text_delta","text":"allowed","when":"allow"}
{"type":"text_delta","text":"denied","when":"deny"}
{"type":"assistant_message","text":"done"}
`

func TestHeadlessAskBecomesDenyAndDoesNotFailOver(t *testing.T) {
	t.Parallel()
	b := &modelRuntime{name: "b"}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript)), entry(b, "b1")},
		Failover: []engine.ChainLink{{Runtime: "b"}}, Interactive: false})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != "complete" || final.Runtime != "a" || len(b.runs) != 0 {
		t.Fatalf("final %+v, b runs %v", final, b.runs)
	}
	var decided engine.Event
	var text string
	for _, ev := range j.all() {
		switch ev.Type {
		case engine.EventPermissionRequested:
			t.Fatal("headless session asked a person")
		case engine.EventPermissionDecided:
			decided = ev
		case engine.EventTextDelta:
			text += ev.Text
		}
	}
	// The session's own events name the runtime in charge, like the
	// runtime's events do.
	if decided.Decision != engine.DecisionDeny || decided.Stage != "headless" || decided.Command != "rm -rf build" || decided.Runtime != "a" {
		t.Fatalf("decision = %+v", decided)
	}
	if text != "denied" {
		t.Fatalf("script branch = %q", text)
	}
}

func TestPermissionModeYoloAllowsHeadless(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript))}, PermissionMode: engine.PermissionYolo})
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	var text string
	for _, ev := range j.all() {
		if ev.Type == engine.EventTextDelta {
			text += ev.Text
		}
	}
	if text != "allowed" {
		t.Fatalf("branch = %q", text)
	}
}

func TestInteractiveAnswerFirstWins(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript))}, Interactive: true})
	sub := s.Subscribe()
	defer sub.Close()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit("again"); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("second submit while running: %v", err)
	}
	req := awaitEvent(t, sub, isType(engine.EventPermissionRequested))
	if req.RequestID == "" || req.Command != "rm -rf build" || req.Stage == "" {
		t.Fatalf("request = %+v", req)
	}
	if err := s.Answer("nope", engine.Answer{Decision: engine.DecisionAllow}); !errors.Is(err, engine.ErrUnknownRequest) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := s.Answer(req.RequestID, engine.Answer{Decision: "maybe"}); err == nil {
		t.Fatal("bad decision accepted")
	}
	if err := s.Answer(req.RequestID, engine.Answer{Decision: engine.DecisionDeny, Feedback: "use make clean"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Answer(req.RequestID, engine.Answer{Decision: engine.DecisionAllow}); !errors.Is(err, engine.ErrUnknownRequest) {
		t.Fatalf("late answer: %v", err)
	}
	awaitEvent(t, sub, func(ev engine.Event) bool {
		if ev.Type == engine.EventPermissionDecided && (ev.Decision != engine.DecisionDeny || ev.Feedback != "use make clean" || ev.RequestID != req.RequestID) {
			t.Fatalf("decided = %+v", ev)
		}
		return ev.Type == engine.EventFinalResult
	})
	var text string
	for _, ev := range j.all() {
		if ev.Type == engine.EventTextDelta {
			text += ev.Text
		}
	}
	if text != "denied" {
		t.Fatalf("branch = %q", text)
	}
}

func TestPendingRequestDeniedWhenTurnInterrupted(t *testing.T) {
	t.Parallel()
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", permScript))}, Interactive: true})
	sub := s.Subscribe()
	defer sub.Close()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	final := awaitEvent(t, sub, func(ev engine.Event) bool {
		if ev.Type == engine.EventPermissionRequested {
			s.Interrupt(true)
		}
		return ev.Type == engine.EventFinalResult
	})
	if final.Status != "interrupted" {
		t.Fatalf("status %s", final.Status)
	}
	var decided *engine.Event
	for _, ev := range j.all() {
		if ev.Type == engine.EventPermissionDecided {
			decided = &ev
		}
	}
	if decided == nil || decided.Decision != engine.DecisionDeny {
		t.Fatalf("pending request not denied: %+v", decided)
	}
	if len(s.Pending()) != 0 {
		t.Fatal("request still pending")
	}
}

func scriptedRuntime(name, body string) (*scripted.Runtime, error) {
	return scripted.Parse(name, name+".jsonl", strings.NewReader(body))
}

// TestRuntimesCarryTheirDescription: the runtime picker's one-line
// description travels from the registration to Runtimes().
func TestRuntimesCarryTheirDescription(t *testing.T) {
	t.Parallel()
	e := entry(script(t, "scripted", hello), "m1")
	e.Description = "scripted replay · m1"
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{e}})
	if infos := s.Runtimes(); len(infos) != 1 || infos[0].Description != "scripted replay · m1" || !infos[0].Current {
		t.Fatalf("runtimes %+v", infos)
	}
}

package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

func TestEachLimitEndsWithItsOwnStatus(t *testing.T) {
	t.Parallel()
	cycles := strings.Repeat(`{"cycle":true}`+"\n"+`{"type":"text_delta","text":"x"}`+"\n", 5)
	spend := strings.Repeat(`{"type":"usage_updated","usage":{"output_tokens":5},"cost_usd":0.4}`+"\n", 5) + `{"type":"text_delta","text":"never"}` + "\n"
	slow := `{"type":"text_delta","text":"a"}` + "\n" + `{"type":"text_delta","text":"b","delay_ms":60000}` + "\n"
	cases := []struct {
		name   string
		script string
		limits engine.Limits
		want   engine.Status
	}{
		{"max_cycles", cycles, engine.Limits{MaxCycles: 2}, engine.StatusMaxCycles},
		{"budget", spend, engine.Limits{BudgetUSD: 1.0}, engine.StatusBudgetExceeded},
		{"timeout", slow, engine.Limits{Timeout: 50 * time.Millisecond}, engine.StatusTimeout},
		{"no limit", cycles, engine.Limits{}, engine.StatusComplete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", c.script))}, Limits: c.limits})
			final, err := s.RunTurn(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if final.Status != string(c.want) {
				t.Fatalf("status %s, want %s", final.Status, c.want)
			}
			text := ""
			for _, ev := range j.all() {
				if ev.Type == engine.EventTextDelta {
					text += ev.Text
				}
			}
			switch c.want {
			case engine.StatusMaxCycles:
				if text != "xx" || final.Cycles != 2 {
					t.Fatalf("ran %q over %d cycles", text, final.Cycles)
				}
			case engine.StatusComplete:
				// Streamed text that no whole message closed is the answer of
				// a complete turn, not one cut short.
				tr := s.Transcript()
				if a := tr[len(tr)-2]; a.Kind != engine.EntryAssistant || a.Status == "partial" || a.Text != "xxxxx" {
					t.Fatalf("transcript = %+v", tr)
				}
			case engine.StatusBudgetExceeded:
				if strings.Contains(text, "never") || final.CostUSD <= 1.0 || final.CostUSD > 1.3 {
					t.Fatalf("kept going after the budget: text %q cost %v", text, final.CostUSD)
				}
			case engine.StatusTimeout:
				if text != "a" {
					t.Fatalf("text %q", text)
				}
				// The streamed text is kept as a partial answer.
				tr := s.Transcript()
				if tr[1].Kind != engine.EntryAssistant || tr[1].Status != "partial" || tr[1].Text != "a" {
					t.Fatalf("transcript = %+v", tr)
				}
			}
		})
	}
}

func TestInterruptGracefulAndImmediate(t *testing.T) {
	t.Parallel()
	body := `{"type":"tool_call_started","tool_call_id":"c1","tool":"bash","input":{"command":"sleep 100"}}` + "\n" +
		`{"type":"command_started","tool_call_id":"c1","tool":"bash","command":"sleep 100"}` + "\n" +
		`{"type":"tool_call_progress","tool_call_id":"c1","tool":"bash","output":"zzz\n"}` + "\n" +
		`{"type":"text_delta","text":"late","delay_ms":60000}` + "\n"
	for _, immediate := range []bool{false, true} {
		t.Run(fmt.Sprint("immediate=", immediate), func(t *testing.T) {
			s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body))}})
			sub := s.Subscribe()
			defer sub.Close()
			if err := s.Submit("go"); err != nil {
				t.Fatal(err)
			}
			final := awaitEvent(t, sub, func(ev engine.Event) bool {
				if ev.Type == engine.EventToolCallProgress {
					s.Interrupt(immediate)
				}
				return ev.Type == engine.EventFinalResult
			})
			if final.Status != "interrupted" {
				t.Fatalf("status %s", final.Status)
			}
			var closed, command bool
			for _, ev := range j.all() {
				// The closing events carry what the call showed, which the
				// store does not keep as progress.
				if ev.Type == engine.EventToolCallFinished && ev.ToolCallID == "c1" && ev.Output == engine.InterruptedNotRerun && ev.Text == "zzz\n" {
					closed = true
				}
				if ev.Type == engine.EventCommandFinished && ev.ToolCallID == "c1" && ev.Command == "sleep 100" && ev.IsError && ev.Text == "zzz\n" {
					command = true
				}
			}
			if !closed {
				t.Fatal("open tool call not closed as interrupted, not re-run")
			}
			if !command {
				t.Fatal("running command not closed with the turn")
			}
			if s.State().Running {
				t.Fatal("still running")
			}
		})
	}
}

// An interrupt that names a turn stops only that turn: one meant for a
// turn that has ended (the person pressed esc as it finished, and a
// queued message started the next) leaves the next turn alone, while one
// naming the running turn stops it.
func TestInterruptTurnStopsOnlyTheTurnNamed(t *testing.T) {
	t.Parallel()
	body := `{"type":"text_delta","text":"a"}` + "\n" + `{"type":"text_delta","text":"late","delay_ms":60000}` + "\n"
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", body))}})
	sub := s.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runUntilDelta := func() int64 {
		t.Helper()
		if err := s.Submit("go"); err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == engine.EventTextDelta {
				return ev.TurnID
			}
		}
	}
	waitEnd := func() engine.Event {
		t.Helper()
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == engine.EventFinalResult {
				return ev
			}
		}
	}
	first := runUntilDelta()
	s.InterruptTurn(first, true)
	if ev := waitEnd(); ev.Status != "interrupted" {
		t.Fatalf("first turn %s", ev.Status)
	}
	second := runUntilDelta()
	if second == first {
		t.Fatalf("the second turn has the first one's id %d", first)
	}
	// The stale stop, for the first turn, arrives late.
	s.InterruptTurn(first, true)
	s.InterruptTurn(first, false)
	time.Sleep(50 * time.Millisecond)
	if !s.State().Running {
		t.Fatal("a stop for an ended turn stopped the next one")
	}
	s.InterruptTurn(second, true)
	if ev := waitEnd(); ev.Status != "interrupted" || ev.TurnID != second {
		t.Fatalf("second turn %+v", ev)
	}
}

func TestSlowSubscriberNeverStallsAndLosesNothing(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	// A subscriber that could stall the runtime would deadlock the turn,
	// whatever the count; 20,000 deltas keep the test quick under -race on
	// a loaded machine while still far exceeding any fixed queue.
	const deltas = 20000
	_, _ = fmt.Fprintf(&b, `{"type":"text_delta","text":"a","repeat":%d}`+"\n", deltas)
	b.WriteString(`{"type":"error","text":"must arrive","error_kind":"internal"}` + "\n")
	b.WriteString(`{"type":"tool_call_progress","tool_call_id":"c","output":"p","repeat":1000}` + "\n")
	b.WriteString(`{"type":"text_delta","text":"b","repeat":10}` + "\n")
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "s", b.String()))}})
	slow := s.Subscribe() // never read until the turn is over
	defer slow.Close()
	done := make(chan engine.Event, 1)
	go func() {
		final, _ := s.RunTurn(context.Background(), "go")
		done <- final
	}()
	select {
	case final := <-done:
		if final.Status != "complete" {
			t.Fatalf("status %s", final.Status)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("runtime stalled behind a subscriber that does not read")
	}
	var text strings.Builder
	var n, errs, finals int
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for finals == 0 {
		batch, err := slow.NextBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range batch {
			n++
			switch ev.Type {
			case engine.EventTextDelta:
				text.WriteString(ev.Text)
			case engine.EventError:
				errs++
			case engine.EventFinalResult:
				finals++
			}
		}
	}
	if text.String() != strings.Repeat("a", deltas)+strings.Repeat("b", 10) {
		t.Fatalf("text lost or reordered: %d bytes", text.Len())
	}
	if errs != 1 || finals != 1 {
		t.Fatalf("must-deliver events: errors %d finals %d", errs, finals)
	}
	if n > 20 {
		t.Fatalf("queue did not coalesce: %d events", n)
	}
}

func TestSwitchRuntimeCarriesHistory(t *testing.T) {
	t.Parallel()
	a := script(t, "a", hello)
	b := &historyRuntime{name: "b"}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(a, "m1"), entry(b, "b1")}})
	if _, err := s.RunTurn(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	if err := s.SwitchRuntime("nope", ""); err == nil {
		t.Fatal("unknown runtime accepted")
	}
	if err := s.SwitchRuntime("b", ""); err != nil {
		t.Fatal(err)
	}
	final, err := s.RunTurn(context.Background(), "second")
	if err != nil || final.Runtime != "b" {
		t.Fatalf("%v %+v", err, final)
	}
	if len(b.history) < 2 || b.history[0].Text != "first" || b.history[1].Text != "Hello" || b.prompt != "second" {
		t.Fatalf("history = %+v prompt %q", b.history, b.prompt)
	}
	var sw *engine.Event
	for _, ev := range j.all() {
		if ev.Type == engine.EventRuntimeSwitched {
			sw = &ev
		}
	}
	if sw == nil || sw.Reason != "user" || sw.From != "a/m1" || sw.To != "b/b1" {
		t.Fatalf("switch event = %+v", sw)
	}
	if err := s.SwitchRuntime("a", "m1"); err != nil {
		t.Fatal(err)
	}
}

// TestSwitchToAModelARuntimeDoesNotHave: a runtime whose models are a
// fixed list (a scripted one) refuses another name; others take any.
func TestSwitchToAModelARuntimeDoesNotHave(t *testing.T) {
	t.Parallel()
	fixed := entry(script(t, "a", hello), "m1", "m2")
	fixed.FixedModels = true
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{fixed, entry(&historyRuntime{name: "b"}, "b1")}})
	if err := s.SwitchRuntime("a", "nosuch"); err == nil || !strings.Contains(err.Error(), `a has no model "nosuch" (it has m1, m2)`) {
		t.Fatalf("switch to a model the runtime does not have: %v", err)
	}
	if err := s.SwitchRuntime("a", "m2"); err != nil {
		t.Fatal(err)
	}
	if err := s.SwitchRuntime("b", "any-model-name"); err != nil {
		t.Fatalf("a runtime without a fixed list refused a model: %v", err)
	}
}

type historyRuntime struct {
	name    string
	history []engine.TranscriptEntry
	prompt  string
}

func (r *historyRuntime) Name() string { return r.name }
func (r *historyRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell)}
}
func (r *historyRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	r.history, r.prompt = t.History, t.Prompt
	return engine.Result{}, nil
}

type panicRuntime struct{}

func (panicRuntime) Name() string { return "boom" }
func (panicRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: ^engine.CapSet(0)}
}
func (panicRuntime) Run(context.Context, *engine.Turn) (engine.Result, error) {
	panic("bug")
}

func TestRuntimePanicBecomesCrashedAndFailsOver(t *testing.T) {
	t.Parallel()
	b := &modelRuntime{name: "b"}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(panicRuntime{}), entry(b, "b1")}, Failover: []engine.ChainLink{{Runtime: "b"}}})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil || final.Status != "complete" || final.Runtime != "b" {
		t.Fatalf("%v %+v", err, final)
	}
}

// nativeRuntime hands out its own session id and records the one it was
// asked to resume.
type nativeRuntime struct {
	name    string
	resumed []string
}

func (r *nativeRuntime) Name() string { return r.name }
func (r *nativeRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell, engine.CapResume)}
}
func (r *nativeRuntime) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	r.resumed = append(r.resumed, t.NativeID)
	return engine.Result{NativeID: r.name + "-native"}, nil
}

func TestNativeSessionResumesOnlyWhenNothingHappenedElsewhere(t *testing.T) {
	t.Parallel()
	a, b := &nativeRuntime{name: "a"}, &nativeRuntime{name: "b"}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(a, "m"), entry(b, "m")}})
	run := func() {
		if _, err := s.RunTurn(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
	}
	run()
	run()
	if err := s.SwitchRuntime("b", ""); err != nil {
		t.Fatal(err)
	}
	run()
	if err := s.SwitchRuntime("a", ""); err != nil {
		t.Fatal(err)
	}
	run()
	run()
	if fmt.Sprint(a.resumed) != "[ a-native  a-native]" || fmt.Sprint(b.resumed) != "[]" {
		t.Fatalf("a resumed %q, b resumed %q", a.resumed, b.resumed)
	}
}

func TestStateTotalsCoverResumedAndFinishedTurns(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "a", hello), "m1")},
		Prior: &engine.Prior{LastSeq: 10, LastTurn: 2, Usage: engine.Usage{InputTokens: 100}, CostUSD: 1}})
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if st.TotalCostUSD != 1.25 || st.TotalUsage.InputTokens != 110 || st.Running {
		t.Fatalf("state = %+v", st)
	}
}

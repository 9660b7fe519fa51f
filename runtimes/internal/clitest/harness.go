package clitest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// Journal keeps every event of a session in order (an engine.Journal).
type Journal struct {
	mu  sync.Mutex
	evs []engine.Event
}

// Append implements engine.Journal.
func (j *Journal) Append(ev engine.Event) error {
	j.mu.Lock()
	j.evs = append(j.evs, ev)
	j.mu.Unlock()
	return nil
}

// Flush implements engine.Journal.
func (j *Journal) Flush(context.Context) error { return nil }

// Events returns every event so far.
func (j *Journal) Events() []engine.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]engine.Event(nil), j.evs...)
}

// OfType returns the events of type t so far.
func (j *Journal) OfType(t engine.EventType) []engine.Event {
	var out []engine.Event
	for _, ev := range j.Events() {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// Decided returns kz's permission decisions so far about the shell
// command command.
func (j *Journal) Decided(command string) []engine.Event {
	var out []engine.Event
	for _, ev := range j.OfType(engine.EventPermissionDecided) {
		if ev.Command == command {
			out = append(out, ev)
		}
	}
	return out
}

// Harness is a kz session around runtimes, with a person who answers
// permission requests and a hook that sees every event.
type Harness struct {
	Session *engine.Session
	Journal *Journal
	stop    func()
}

// Options configure a Harness.
type Options struct {
	Gate           engine.Gate
	Failover       []engine.ChainLink
	PermissionMode engine.PermissionMode
	Mode           engine.Mode
	Prior          *engine.Prior
	// Patcher reviews proposals in patch-proposal mode.
	Patcher engine.Patcher
	// Limits bound each turn; Pricer prices tokens reported without a
	// cost.
	Limits engine.Limits
	Pricer engine.Pricer
	// Answer is the person: it answers every permission request.
	Answer func(ev engine.Event) engine.Answer
	// OnEvent sees every event the session publishes.
	OnEvent func(h *Harness, ev engine.Event)
	// Context is the session's Config.Context (memory and environment).
	Context func(ctx context.Context, workspace string) engine.TurnContext
	// Checkpoints records what each tool call changes (Config.Checkpoints).
	Checkpoints engine.Checkpointer
	// ID is the session's id; a new one when empty.
	ID string
}

// NewHarness starts a session in workspace ws over runtimes; it is closed
// when the test ends (or by Stop).
func NewHarness(t testing.TB, ws string, runtimes []engine.RuntimeEntry, o Options) *Harness {
	t.Helper()
	j := &Journal{}
	s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: j, Runtimes: runtimes, Gate: o.Gate,
		Interactive: true, PermissionMode: o.PermissionMode, Mode: o.Mode, Failover: o.Failover, Prior: o.Prior, Patcher: o.Patcher,
		Limits: o.Limits, Pricer: o.Pricer, Context: o.Context, Checkpoints: o.Checkpoints, ID: o.ID})
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{Session: s, Journal: j}
	sub := s.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if o.OnEvent != nil {
				o.OnEvent(h, ev)
			}
			if ev.Type == engine.EventPermissionRequested && o.Answer != nil {
				_ = s.Answer(ev.RequestID, o.Answer(ev))
			}
		}
	}()
	h.stop = sync.OnceFunc(func() {
		cancel()
		sub.Close()
		<-done
		_ = s.Close(context.Background())
	})
	t.Cleanup(h.stop)
	return h
}

// Stop closes the session before the test ends.
func (h *Harness) Stop() { h.stop() }

// Run runs one turn and returns its final_result event.
func (h *Harness) Run(t testing.TB, ctx context.Context, prompt string) engine.Event {
	t.Helper()
	final, err := h.Session.RunTurn(ctx, prompt)
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	return final
}

// ProbeTurn runs one turn of rt in the workspace ws with prompt, in which
// the fake model has the CLI run its probes, one command at a time, and
// then answers "done"; a person allows every request. It fails the test
// now unless the turn completes with that answer (through the credential
// proxy, which every real-CLI test uses), and returns the harness for the
// checks that follow.
func ProbeTurn(t testing.TB, ws string, rt engine.Runtime, prompt string) *Harness {
	t.Helper()
	h := NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, Options{Answer: AllowOnce})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	final := h.Run(t, ctx, prompt)
	if final.Status != string(engine.StatusComplete) || final.Output != "done" {
		t.Fatalf("the probe turn did not complete through the proxy: %+v", final)
	}
	return h
}

// AllowOnce is a person who allows every request once.
func AllowOnce(engine.Event) engine.Answer { return engine.Answer{Decision: engine.DecisionAllow} }

// DenyOnce is a person who denies every request.
func DenyOnce(engine.Event) engine.Answer { return engine.Answer{Decision: engine.DecisionDeny} }

// Person records the permission requests a person saw and answers each
// with Reply.
type Person struct {
	Reply func(engine.Event) engine.Answer
	mu    sync.Mutex
	evs   []engine.Event
}

// Answer records ev and answers it (an Options.Answer).
func (p *Person) Answer(ev engine.Event) engine.Answer {
	p.mu.Lock()
	p.evs = append(p.evs, ev)
	p.mu.Unlock()
	return p.Reply(ev)
}

// Seen returns the requests the person answered.
func (p *Person) Seen() []engine.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]engine.Event(nil), p.evs...)
}

// Commands returns the shell command of each request the person
// answered, in order.
func (p *Person) Commands() []string {
	var out []string
	for _, ev := range p.Seen() {
		out = append(out, ev.Command)
	}
	return out
}

// Other is a minimal runtime that is not the CLI under test, for
// switching and failover: it answers every turn with Answer.
type Other struct{ Answer string }

// Name implements engine.Runtime.
func (o *Other) Name() string { return "other" }

// Capabilities implements engine.Runtime.
func (o *Other) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell)}
}

// Run implements engine.Runtime.
func (o *Other) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: o.Answer})
	return engine.Result{Status: engine.StatusComplete, Output: o.Answer}, nil
}

// BenchLatency runs one turn of rts in ws and reports the latency from a
// line the fake CLI writes to the matching text_delta at a subscriber:
// each delta's text starts with its send time in nanoseconds (the stream
// action). Reported: p50 and p99 in microseconds.
func BenchLatency(b *testing.B, ws string, rts []engine.RuntimeEntry) {
	var mu sync.Mutex
	var lat []time.Duration
	s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: &Journal{}, Runtimes: rts, Interactive: true})
	if err != nil {
		b.Fatal(err)
	}
	sub := s.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			now := time.Now()
			if ev.Type != engine.EventTextDelta {
				continue
			}
			// A merged delta holds several stamps; the first is the
			// oldest, so its latency is the batch's worst.
			first, _, _ := strings.Cut(ev.Text, ";")
			ns, err := strconv.ParseInt(first, 10, 64)
			if err != nil {
				continue
			}
			mu.Lock()
			lat = append(lat, now.Sub(time.Unix(0, ns)))
			mu.Unlock()
		}
	}()
	b.ResetTimer()
	final, err := s.RunTurn(context.Background(), "go")
	b.StopTimer()
	cancel()
	sub.Close()
	<-done
	_ = s.Close(context.Background())
	if err != nil || final.Status != string(engine.StatusComplete) {
		b.Fatalf("turn: %v %+v", err, final)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("no deltas measured")
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50_us")
	b.ReportMetric(q(0.99), "p99_us")
	b.ReportMetric(float64(len(lat)), "events")
}

package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// commandGate decides by the request's command and counts its checks.
type commandGate struct {
	mu       sync.Mutex
	verdicts map[string]engine.Verdict
	checks   map[string]int
}

func (g *commandGate) Check(_ context.Context, q engine.GateQuery) engine.Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checks[q.Request.Command]++
	return g.verdicts[q.Request.Command]
}

func (g *commandGate) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error {
	return nil
}

// unaskedRuntime asks DecideUnasked about each command, then, for those it
// did not decide, RequestPermission about the same request, and records
// what each said.
type unaskedRuntime struct {
	reqs    []engine.PermissionRequest
	decided []bool
	answers []engine.Answer
}

func (*unaskedRuntime) Name() string { return "u" }
func (*unaskedRuntime) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scripted.FullAgent}
}
func (r *unaskedRuntime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	for _, req := range r.reqs {
		a, ok := t.DecideUnasked(ctx, req)
		if !ok {
			// The same call as the CLI asks it again; the last one with
			// another input than the gate judged.
			if req.Command == "again" {
				req.Input = json.RawMessage(`{"command":"again","changed":true}`)
			}
			a = t.RequestPermission(ctx, req)
		}
		r.decided, r.answers = append(r.decided, ok), append(r.answers, a)
	}
	return engine.Result{Output: "ok"}, nil
}

// DecideUnasked decides only what the gate allows by itself, logging it
// once; an ask or a deny is logged by the RequestPermission that follows,
// which takes the gate's verdict instead of running the gate (and its
// hooks) again, unless the request changed.
func TestDecideUnasked(t *testing.T) {
	t.Parallel()
	g := &commandGate{checks: map[string]int{}, verdicts: map[string]engine.Verdict{
		"ls":    {Decision: engine.DecisionAllow, Stage: "read_only", Reason: "read-only"},
		"rm -r": {Decision: engine.DecisionDeny, Stage: "deny_rule", Reason: "rule"},
		"make":  {Decision: engine.DecisionAsk, Stage: "default", Reason: "runs a program"},
		"again": {Decision: engine.DecisionAsk, Stage: "default", Reason: "runs a program"},
	}}
	rt := &unaskedRuntime{}
	for i, cmd := range []string{"ls", "rm -r", "make", "again"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		rt.reqs = append(rt.reqs, engine.PermissionRequest{ToolCallID: string(rune('a' + i)), Tool: "Bash", Command: cmd, Input: in})
	}
	// Headless: a question is denied without anyone asked.
	s, j := newSession(t, engine.Config{Gate: g, Runtime: "u", Runtimes: []engine.RuntimeEntry{entry(rt)}})
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	wantDecided := []bool{true, false, false, false}
	wantAnswer := []engine.Decision{engine.DecisionAllow, engine.DecisionDeny, engine.DecisionDeny, engine.DecisionDeny}
	for i := range rt.reqs {
		if rt.decided[i] != wantDecided[i] || rt.answers[i].Decision != wantAnswer[i] {
			t.Errorf("%s: decided %v answer %+v, want %v %s", rt.reqs[i].Command, rt.decided[i], rt.answers[i], wantDecided[i], wantAnswer[i])
		}
	}
	for cmd, want := range map[string]int{"ls": 1, "rm -r": 1, "make": 1, "again": 2} {
		if got := g.checks[cmd]; got != want {
			t.Errorf("the gate checked %q %d times, want %d", cmd, got, want)
		}
	}
	decisions := map[string]int{}
	for _, ev := range j.all() {
		if ev.Type == engine.EventPermissionDecided {
			decisions[ev.ToolCallID]++
		}
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if decisions[id] != 1 {
			t.Errorf("call %s logged %d decisions, want 1", id, decisions[id])
		}
	}
}

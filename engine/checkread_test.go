package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// pathGate decides by the request's first path and records each query.
type pathGate struct {
	mu       sync.Mutex
	verdicts map[string]engine.Verdict
	queries  []engine.GateQuery
}

func (g *pathGate) Check(_ context.Context, q engine.GateQuery) engine.Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queries = append(g.queries, q)
	return g.verdicts[q.Request.Paths[0]]
}

func (g *pathGate) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error { return nil }

// TestCheckReadJournalsTheDecision: a read kz makes outside a turn (an @
// mention) is decided by the session's gate with the session's mode and
// permission mode and no runtime capabilities, and each decision is a
// permission_decided event; an ask is recorded as a deny, and a request
// that writes never reaches the gate.
func TestCheckReadJournalsTheDecision(t *testing.T) {
	t.Parallel()
	g := &pathGate{verdicts: map[string]engine.Verdict{
		"a.txt":      {Decision: engine.DecisionAllow, Stage: "default", Reason: "read inside the workspace"},
		"secret.txt": {Decision: engine.DecisionDeny, Stage: "deny_rule", Rule: "Read(./secret.txt)", Reason: "denied by rule"},
		"ask.txt":    {Decision: engine.DecisionAsk, Stage: "ask_rule", Reason: "asked by rule"},
	}}
	s, j := newSession(t, engine.Config{Gate: g, Workspace: "/w", Runtime: "s", Runtimes: []engine.RuntimeEntry{entry(script(t, "s", hello), "m1")},
		Mode: engine.ModeAnalysisOnly, PermissionMode: engine.PermissionAsk, Interactive: true})
	ctx := context.Background()
	read := func(path string) engine.Verdict {
		return s.CheckRead(ctx, engine.PermissionRequest{ToolCallID: "mention", Tool: "read_file", Paths: []string{path}})
	}
	if v := read("a.txt"); v.Decision != engine.DecisionAllow {
		t.Fatalf("a.txt: %+v", v)
	}
	if v := read("secret.txt"); v.Decision != engine.DecisionDeny || v.Rule != "Read(./secret.txt)" {
		t.Fatalf("secret.txt: %+v", v)
	}
	if v := read("ask.txt"); v.Decision != engine.DecisionAsk {
		t.Fatalf("ask.txt: %+v, want the gate's ask", v)
	}
	if v := s.CheckRead(ctx, engine.PermissionRequest{Tool: "write_file", Paths: []string{"a.txt"}, Write: true}); v.Decision != engine.DecisionDeny {
		t.Fatalf("a write passed as a read: %+v", v)
	}
	if len(g.queries) != 3 {
		t.Fatalf("the gate saw %d queries, want 3 (a write never reaches it)", len(g.queries))
	}
	q := g.queries[0]
	if q.SessionID != s.ID() || q.Mode != engine.ModeAnalysisOnly || q.PermissionMode != engine.PermissionAsk || q.Workspace != "/w" ||
		q.Runtime != "s" || q.Capabilities.Set != 0 {
		t.Fatalf("query %+v", q)
	}

	var got []string
	for _, ev := range j.all() {
		if ev.Type != engine.EventPermissionDecided {
			continue
		}
		if ev.Seq == 0 || ev.SessionID != s.ID() || ev.TurnID != 0 || ev.RequestID != "" {
			t.Fatalf("decision outside a turn %+v", ev)
		}
		got = append(got, ev.Paths[0]+" "+string(ev.Decision)+" "+ev.Stage)
		if ev.Paths[0] == "ask.txt" && !strings.Contains(ev.Reason, "asked by rule") {
			t.Fatalf("the recorded deny of an ask lost the gate's reason: %q", ev.Reason)
		}
	}
	want := []string{"a.txt allow default", "secret.txt deny deny_rule", "ask.txt deny ask_rule", "a.txt deny session"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("journaled decisions\n %q\nwant\n %q", got, want)
	}
}

package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// The tests of subagents: a parent turn spawns child turns through
// Turn.SpawnChild (the scripted runtime's task lines, the person's
// SubmitTask, or a test runtime calling it directly).

// childScript is a child that answers with one text reply.
const childScript = `{"kz_script":1,"model":"cm",` + agentCaps + `}
{"type":"session_started"}
{"cycle":true}
{"type":"assistant_message","text":"child answer"}
{"type":"usage_updated","usage":{"input_tokens":5,"output_tokens":1},"cost_usd":0.01}
`

// parentScript delegates once, then answers with what it got.
func parentScript(task string) string {
	return `{"kz_script":1,"model":"pm",` + agentCaps + `}
{"type":"session_started"}
{"cycle":true}
{"task":` + task + `,"tool_call_id":"call-1"}
{"type":"assistant_message","text":"parent done"}
`
}

// openStore opens a real SQLite store in a temp dir with a writer.
func openStore(t *testing.T) (*store.Store, *store.Writer) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	w := st.NewWriter()
	t.Cleanup(func() {
		_ = w.Close()
		_ = st.Close()
	})
	return st, w
}

// storedSession builds a session journaled in the store, registered as
// a new session the way the app does.
func storedSession(t *testing.T, w *store.Writer, cfg engine.Config) *engine.Session {
	t.Helper()
	cfg.Journal = w
	s, err := engine.NewSession(cfg)
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	st := s.State()
	w.CreateLazily(store.SessionInfo{ID: s.ID(), Workspace: cfg.Workspace, Runtime: st.Runtime, Model: st.Model, Mode: st.Mode})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// finishedCall returns the turn's tool_call_finished event of id.
func finishedCall(t *testing.T, evs []engine.Event, id string) engine.Event {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == engine.EventToolCallFinished && ev.ToolCallID == id {
			return ev
		}
	}
	t.Fatalf("no tool_call_finished for %s in %v", id, evs)
	return engine.Event{}
}

func storedEvents(t *testing.T, st *store.Store, id string) []engine.Event {
	t.Helper()
	var out []engine.Event
	if err := st.Events(context.Background(), id, func(ev engine.Event) error {
		out = append(out, ev)
		return nil
	}); err != nil {
		t.Fatalf("events of %s: %v", id, err)
	}
	return out
}

func TestSpawnChildScriptedStoresAndForwards(t *testing.T) {
	st, w := openStore(t)
	parent := script(t, "parent", parentScript(`{"prompt":"look around","runtime":"child","description":"look","read_only":true}`))
	child := script(t, "child", childScript)
	s := storedSession(t, w, engine.Config{Workspace: t.TempDir(), Runtimes: []engine.RuntimeEntry{entry(parent), entry(child)}})
	sub := s.Subscribe()
	defer sub.Close()

	final, err := s.RunTurn(context.Background(), "delegate")
	if err != nil || final.Status != string(engine.StatusComplete) {
		t.Fatalf("parent turn: %v %+v", err, final)
	}
	parentEvents := storedEvents(t, st, s.ID())
	call := finishedCall(t, parentEvents, "call-1")
	if call.IsError || !strings.Contains(call.Output, "child answer") {
		t.Fatalf("task result = %+v, want the child's answer", call)
	}
	if final.CostUSD < 0.01 {
		t.Errorf("parent cost %v does not include the child's 0.01", final.CostUSD)
	}

	kids, err := st.ListChildren(context.Background(), s.ID())
	if err != nil || len(kids) != 1 {
		t.Fatalf("children = %v, %v; want one", kids, err)
	}
	k := kids[0]
	if k.Parent != s.ID() || k.ParentToolCallID != "call-1" || k.Runtime != "child" || k.Mode != engine.ModeAnalysisOnly || k.Title != "look" {
		t.Errorf("child row = %+v", k)
	}
	childEvents := storedEvents(t, st, k.ID)
	last := childEvents[len(childEvents)-1]
	if last.Type != engine.EventFinalResult || last.Output != "child answer" {
		t.Errorf("child's last stored event = %+v", last)
	}
	list, err := st.ListSessions(context.Background(), "", 0)
	if err != nil || len(list) != 1 || list[0].ID != s.ID() || list[0].Children != 1 {
		t.Errorf("sessions list = %+v, %v; want the parent alone with one child", list, err)
	}

	// The live subscriber saw the child's events, wrapped, between the
	// task call's start and its end.
	var seen []engine.EventType
	started, finished := -1, -1
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; finished < 0; i++ {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("subscription: %v (saw %v)", err, seen)
		}
		switch {
		case ev.Type == engine.EventToolCallStarted && ev.ToolCallID == "call-1":
			started = i
		case ev.Type == engine.EventToolCallFinished && ev.ToolCallID == "call-1":
			finished = i
		case ev.Type == engine.EventChild:
			if ev.Child == nil || ev.Child.SessionID != k.ID || ev.ToolCallID != "call-1" || ev.Child.Description != "look" || !ev.Child.ReadOnly {
				t.Fatalf("wrapper = %+v", ev)
			}
			if started < 0 {
				t.Fatalf("child event %s before the task call started", ev.Child.Event.Type)
			}
			seen = append(seen, ev.Child.Event.Type)
		}
	}
	if len(seen) == 0 || seen[len(seen)-1] != engine.EventFinalResult {
		t.Errorf("forwarded child events = %v, want them to end with final_result", seen)
	}
}

// recordingGate is the permission-mode gate that records the queries.
type recordingGate struct {
	engine.PermissionModeGate
	deny string // a command the rules deny
	mu   sync.Mutex
	qs   []engine.GateQuery
}

func (g *recordingGate) Check(ctx context.Context, q engine.GateQuery) engine.Verdict {
	g.mu.Lock()
	g.qs = append(g.qs, q)
	g.mu.Unlock()
	if g.deny != "" && q.Request.Command == g.deny {
		return engine.Verdict{Decision: engine.DecisionDeny, Stage: "deny_rule", Rule: "Bash(" + g.deny + ")", Reason: "denied by rule"}
	}
	return g.PermissionModeGate.Check(ctx, q)
}

func (g *recordingGate) queries() []engine.GateQuery {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]engine.GateQuery(nil), g.qs...)
}

func TestChildCallsPassTheSameGate(t *testing.T) {
	const childAsks = `{"kz_script":1,"model":"cm",` + agentCaps + `}
{"type":"permission_requested","tool_call_id":"c1","tool":"bash","command":"rm -rf build"}
{"type":"assistant_message","text":"was denied","when":"deny"}
{"type":"assistant_message","text":"was allowed","when":"allow"}
{"type":"permission_requested","tool_call_id":"c2","tool":"write_file","paths":["a.txt"],"diff":"+x"}
{"type":"assistant_message","text":"write denied","when":"deny"}
{"type":"assistant_message","text":"write allowed","when":"allow"}
`
	for _, tc := range []struct {
		name     string
		readOnly bool
		want     []engine.Decision
	}{
		// A denied command stays denied in a child even under yolo.
		{"writer", false, []engine.Decision{engine.DecisionDeny, engine.DecisionAllow}},
		// A read-only child runs in analysis-only mode: its write is
		// denied although the parent's yolo would allow it.
		{"read-only", true, []engine.Decision{engine.DecisionDeny, engine.DecisionDeny}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &recordingGate{deny: "rm -rf build"}
			parent := script(t, "parent", parentScript(fmt.Sprintf(`{"prompt":"go","runtime":"child","read_only":%v}`, tc.readOnly)))
			s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(parent), entry(script(t, "child", childAsks))},
				Gate: g, PermissionMode: engine.PermissionYolo})
			if _, err := s.RunTurn(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			qs := g.queries()
			if len(qs) != 2 {
				t.Fatalf("gate saw %d queries, want the child's 2", len(qs))
			}
			wantMode := engine.ModeFullAutonomous
			if tc.readOnly {
				wantMode = engine.ModeAnalysisOnly
			}
			for _, q := range qs {
				if q.SessionID != s.ID() || q.Mode != wantMode || q.PermissionMode != engine.PermissionYolo || q.Runtime != "child" {
					t.Errorf("query = session %s mode %s pmode %s runtime %s; want the parent's session, mode %s, yolo, child",
						q.SessionID, q.Mode, q.PermissionMode, q.Runtime, wantMode)
				}
			}
			// The child's decisions are journaled in the child's session
			// (the journal is shared, as the store's writer is).
			var got []engine.Decision
			for _, ev := range j.all() {
				if ev.Type == engine.EventPermissionDecided {
					if ev.SessionID == s.ID() {
						t.Errorf("a child's decision was journaled in the parent: %+v", ev)
					}
					got = append(got, ev.Decision)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("child decisions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChildNeverLooserThanParent(t *testing.T) {
	const writes = `{"kz_script":1,"model":"cm",` + agentCaps + `}
{"type":"permission_requested","tool_call_id":"c1","tool":"write_file","paths":["a.txt"],"diff":"+x"}
{"type":"assistant_message","text":"write denied","when":"deny"}
{"type":"assistant_message","text":"write allowed","when":"allow"}
`
	g := &recordingGate{}
	parent := script(t, "parent", parentScript(`{"prompt":"go","runtime":"child","read_only":false}`))
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(parent), entry(script(t, "child", writes))},
		Gate: g, PermissionMode: engine.PermissionYolo, Mode: engine.ModeAnalysisOnly})
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	qs := g.queries()
	if len(qs) != 1 || qs[0].Mode != engine.ModeAnalysisOnly {
		t.Fatalf("queries = %+v, want one in analysis-only mode", qs)
	}
	if out := s.Transcript(); !strings.Contains(fmt.Sprint(out), "write denied") {
		t.Errorf("an analysis-only parent's writing child could write: %v", out)
	}
}

func TestChildAskReachesThePersonThroughTheParent(t *testing.T) {
	const asks = `{"kz_script":1,"model":"cm",` + agentCaps + `}
{"type":"permission_requested","tool_call_id":"c1","tool":"write_file","paths":["a.txt"],"diff":"+x"}
{"type":"assistant_message","text":"write allowed","when":"allow"}
{"type":"assistant_message","text":"write denied","when":"deny"}
`
	parent := script(t, "parent", parentScript(`{"prompt":"go","runtime":"child","description":"writer"}`))
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(parent), entry(script(t, "child", asks))}, Interactive: true})
	sub := s.Subscribe()
	defer sub.Close()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	ev := awaitEvent(t, sub, func(ev engine.Event) bool {
		return ev.Type == engine.EventChild && ev.Child.Event.Type == engine.EventPermissionRequested
	})
	if ev.Child.Description != "writer" {
		t.Errorf("request's child description = %q", ev.Child.Description)
	}
	if p := s.Pending(); len(p) != 1 || p[0] != ev.Child.Event.RequestID {
		t.Errorf("pending = %v, want the child's request %s", p, ev.Child.Event.RequestID)
	}
	if err := s.Answer(ev.Child.Event.RequestID, engine.Answer{Decision: engine.DecisionAllow}); err != nil {
		t.Fatalf("answer through the parent: %v", err)
	}
	awaitEvent(t, sub, isType(engine.EventFinalResult))
	if out := fmt.Sprint(s.Transcript()); !strings.Contains(out, "write allowed") {
		t.Errorf("the person's yes did not reach the child: %s", out)
	}
}

// spawner is a parent runtime that spawns children from Go: n at once,
// each with the request req.
type spawner struct {
	n   int
	req engine.ChildRequest
	// results collects what each spawn returned.
	mu      sync.Mutex
	results []engine.ChildResult
	errs    []error
}

func (*spawner) Name() string { return "spawner" }
func (*spawner) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scriptedFull()}
}

func (r *spawner) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	var wg sync.WaitGroup
	for i := range r.n {
		wg.Go(func() {
			req := r.req
			req.ToolCallID = fmt.Sprintf("call-%d", i)
			res, err := t.SpawnChild(ctx, req)
			r.mu.Lock()
			r.results = append(r.results, res)
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		})
	}
	wg.Wait()
	return engine.Result{Status: engine.StatusComplete, Output: "spawned"}, nil
}

func scriptedFull() engine.CapSet {
	return engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop,
		engine.CapFilesystemRead, engine.CapFilesystemEdit, engine.CapShell, engine.CapInterrupt)
}

// gauge is a child runtime that measures how many of its turns overlap.
type gauge struct {
	active, peak atomic.Int32
	hold         time.Duration
}

func (*gauge) Name() string { return "gauge" }
func (*gauge) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scriptedFull()}
}

func (g *gauge) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	n := g.active.Add(1)
	defer g.active.Add(-1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-time.After(g.hold):
	case <-ctx.Done():
		return engine.Result{Status: engine.StatusInterrupted}, ctx.Err()
	}
	t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: "measured"})
	return engine.Result{Status: engine.StatusComplete}, nil
}

func TestParallelChildrenBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		parallel int
		want     int32
	}{
		{"read-only default", true, 0, 3},
		{"read-only configured", true, 2, 2},
		{"writers one at a time", false, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gauge{hold: 40 * time.Millisecond}
			sp := &spawner{n: 7, req: engine.ChildRequest{Prompt: "measure", Runtime: "gauge", ReadOnly: tc.readOnly}}
			s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(sp), entry(g)},
				Subagents: engine.SubagentConfig{MaxParallel: tc.parallel}})
			final, err := s.RunTurn(context.Background(), "go")
			if err != nil || final.Status != string(engine.StatusComplete) {
				t.Fatalf("parent: %v %+v", err, final)
			}
			if got := g.peak.Load(); got != tc.want {
				t.Errorf("peak concurrent children = %d, want %d", got, tc.want)
			}
			for i, res := range sp.results {
				if sp.errs[i] != nil || res.Status != engine.StatusComplete || res.Output != "measured" {
					t.Errorf("child %d: %v %+v", i, sp.errs[i], res)
				}
			}
		})
	}
}

func TestChildBudgetExceededIsAnErrorResult(t *testing.T) {
	const spends = `{"kz_script":1,"model":"cm",` + agentCaps + `}
{"type":"session_started"}
{"cycle":true}
{"type":"usage_updated","usage":{"input_tokens":5,"output_tokens":1},"cost_usd":0.40}
{"sleep_ms":50}
{"type":"assistant_message","text":"never"}
`
	parent := script(t, "parent", parentScript(`{"prompt":"spend","runtime":"child","budget_usd":0.25}`))
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(parent), entry(script(t, "child", spends))},
		Limits: engine.Limits{BudgetUSD: 5}})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Errorf("parent status = %s, want complete (the child's overspend is the child's)", final.Status)
	}
	var res engine.TranscriptEntry
	for _, e := range s.Transcript() {
		if e.ToolCallID == "call-1" {
			res = e
		}
	}
	if !res.IsError || !strings.Contains(res.Output, string(engine.StatusBudgetExceeded)) {
		t.Errorf("task result = %+v, want an error naming budget_exceeded", res)
	}
}

func TestChildLimitsNeverExceedTheParent(t *testing.T) {
	for _, tc := range []struct {
		name               string
		defaults, req, par engine.Limits
		want               engine.Limits
	}{
		{"defaults apply", engine.Limits{MaxCycles: 4, BudgetUSD: 1, Timeout: time.Minute}, engine.Limits{}, engine.Limits{},
			engine.Limits{MaxCycles: 4, BudgetUSD: 1, Timeout: time.Minute}},
		{"request lowers", engine.Limits{MaxCycles: 4, BudgetUSD: 1}, engine.Limits{MaxCycles: 2, BudgetUSD: 0.5}, engine.Limits{},
			engine.Limits{MaxCycles: 2, BudgetUSD: 0.5}},
		{"request cut to parent", engine.Limits{}, engine.Limits{MaxCycles: 50, BudgetUSD: 9, Timeout: time.Hour},
			engine.Limits{MaxCycles: 5, BudgetUSD: 2, Timeout: time.Minute},
			engine.Limits{MaxCycles: 5, BudgetUSD: 2, Timeout: time.Minute}},
		{"unlimited child gets the parent's", engine.Limits{}, engine.Limits{}, engine.Limits{MaxCycles: 3, BudgetUSD: 1},
			engine.Limits{MaxCycles: 3, BudgetUSD: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &spawner{n: 1, req: engine.ChildRequest{Prompt: "x", Runtime: "gauge", Limits: tc.req}}
			s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(sp), entry(&gauge{})},
				Limits: tc.par, Subagents: engine.SubagentConfig{Limits: tc.defaults}})
			if _, err := s.RunTurn(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			got := sp.results[0].Limits
			// The parent's timeout reaches the child as what is left of
			// it, a little less than the whole.
			if tc.want.Timeout > 0 && got.Timeout > tc.want.Timeout-time.Second && got.Timeout <= tc.want.Timeout {
				got.Timeout = tc.want.Timeout
			}
			if got != tc.want {
				t.Errorf("child limits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestChildSpawnRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  engine.ChildRequest
		want string
	}{
		{"empty prompt", engine.ChildRequest{Prompt: "  ", Runtime: "gauge"}, "needs a prompt"},
		{"unknown runtime", engine.ChildRequest{Prompt: "x", Runtime: "nope"}, `no runtime "nope"`},
		{"negative limit", engine.ChildRequest{Prompt: "x", Runtime: "gauge", Limits: engine.Limits{MaxCycles: -1}}, "cannot be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &spawner{n: 1, req: tc.req}
			s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(sp), entry(&gauge{})}})
			if _, err := s.RunTurn(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			if err := sp.errs[0]; err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("spawn error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// nester is a child runtime that tries to spawn a child of its own.
type nester struct{ err error }

func (*nester) Name() string { return "nester" }
func (*nester) Capabilities(string) engine.Capabilities {
	return engine.Capabilities{Set: scriptedFull()}
}

func (n *nester) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	_, n.err = t.SpawnChild(ctx, engine.ChildRequest{Prompt: "deeper"})
	return engine.Result{Status: engine.StatusComplete, Output: "tried"}, nil
}

func TestChildCannotSpawnChildren(t *testing.T) {
	n := &nester{}
	sp := &spawner{n: 1, req: engine.ChildRequest{Prompt: "x", Runtime: "nester"}}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(sp), entry(n)}})
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if n.err == nil || !strings.Contains(n.err.Error(), engine.ErrNestedChild.Error()) {
		t.Errorf("nested spawn error = %v", n.err)
	}
}

func TestParentInterruptStopsChildren(t *testing.T) {
	g := &gauge{hold: time.Minute}
	sp := &spawner{n: 3, req: engine.ChildRequest{Prompt: "wait", Runtime: "gauge", ReadOnly: true}}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(sp), entry(g)}})
	done := make(chan engine.Event, 1)
	go func() {
		final, _ := s.RunTurn(context.Background(), "go")
		done <- final
	}()
	deadline := time.Now().Add(5 * time.Second)
	for g.active.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("children did not start")
		}
		time.Sleep(time.Millisecond)
	}
	s.Interrupt(true)
	select {
	case final := <-done:
		if final.Status != string(engine.StatusInterrupted) {
			t.Errorf("parent status = %s", final.Status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the parent's interrupt did not stop its children")
	}
	if n := g.active.Load(); n != 0 {
		t.Errorf("%d children still running", n)
	}
	for i, res := range sp.results {
		if res.Status != engine.StatusInterrupted {
			t.Errorf("child %d status = %s, want interrupted", i, res.Status)
		}
	}
}

func TestSubmitTaskRecordsATaskCall(t *testing.T) {
	st, w := openStore(t)
	main := script(t, "main", hello)
	s := storedSession(t, w, engine.Config{Workspace: t.TempDir(), Runtimes: []engine.RuntimeEntry{entry(main), entry(script(t, "child", childScript))}})
	sub := s.SubscribeStored()
	defer sub.Close()
	if err := s.SubmitTask(engine.ChildRequest{Runtime: "child", Prompt: "summarise", Description: "summary"}); err != nil {
		t.Fatal(err)
	}
	final := awaitEvent(t, sub, isType(engine.EventFinalResult))
	if final.Status != string(engine.StatusComplete) || final.Output != "child answer" || final.Runtime != "main" {
		t.Errorf("task turn final = %+v", final)
	}
	if st := s.State(); st.Runtime != "main" {
		t.Errorf("the session's runtime changed to %s", st.Runtime)
	}
	// The history holds the task call with its result, as any tool call,
	// for a resume or a runtime switch to carry.
	prior, err := stPrior(st, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	var call engine.TranscriptEntry
	for _, e := range prior.Transcript {
		if e.Tool == engine.TaskToolName {
			call = e
		}
	}
	var in engine.TaskInput
	if err := json.Unmarshal(call.Input, &in); err != nil || in.Runtime != "child" || in.Prompt != "summarise" || call.Output != "child answer" {
		t.Errorf("stored task call = %+v (%v)", call, err)
	}
	kids, err := st.ListChildren(context.Background(), s.ID())
	if err != nil || len(kids) != 1 || kids[0].ParentToolCallID != call.ToolCallID {
		t.Errorf("children = %+v, %v", kids, err)
	}
	if err := s.SubmitTask(engine.ChildRequest{Runtime: "nope", Prompt: "x"}); err == nil {
		t.Error("a task on an unknown runtime started")
	}
}

func stPrior(st *store.Store, id string) (*engine.Prior, error) {
	return st.Prior(context.Background(), id)
}

// TestRuntimeSwitchCarriesTheTaskCall: after a turn that delegated, the
// runtime switched to is primed with the task call and its result, like
// any tool call.
func TestRuntimeSwitchCarriesTheTaskCall(t *testing.T) {
	parent := script(t, "parent", parentScript(`{"prompt":"look around","runtime":"child","read_only":true}`))
	next := &historyRuntime{name: "next"}
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(parent), entry(script(t, "child", childScript)), entry(next)}})
	if _, err := s.RunTurn(context.Background(), "delegate"); err != nil {
		t.Fatal(err)
	}
	if err := s.SwitchRuntime("next", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunTurn(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	var call *engine.TranscriptEntry
	for i, e := range next.history {
		if e.ToolCallID == "call-1" {
			call = &next.history[i]
		}
	}
	if call == nil || call.Tool != engine.TaskToolName || !strings.Contains(call.Output, "child answer") || !strings.Contains(string(call.Input), "look around") {
		t.Fatalf("history given to the next runtime lacks the task call: %+v", next.history)
	}
	// The child's own events are not the parent's conversation.
	for _, e := range next.history {
		if e.Kind == engine.EntryAssistant && e.Text == "child answer" {
			t.Errorf("the child's message leaked into the parent's history: %+v", e)
		}
	}
}

package permission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func bashQuery(ws, cmd string) engine.GateQuery {
	return engine.GateQuery{Workspace: ws, Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk,
		Request: engine.PermissionRequest{Tool: "bash", Command: cmd}}
}

func TestSessionGrantIsScopedToTheCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := snapshot(t, f.root)
	g := f.gate(t, Options{})
	ctx := context.Background()
	touch := bashQuery(f.ws, "touch a.txt")
	if d := g.Check(ctx, touch).Decision; d != engine.DecisionAsk {
		t.Fatalf("touch before grant: %s, want ask", d)
	}
	if err := g.Remember(ctx, touch, engine.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if d := g.Check(ctx, touch).Decision; d != engine.DecisionAllow {
		t.Fatalf("touch after grant: %s, want allow", d)
	}
	for _, cmd := range []string{"rm ~/x", "touch b.txt", "touch a.txt b.txt", "rm a.txt", "touch a.txt && rm -rf build", "make"} {
		if d := g.Check(ctx, bashQuery(f.ws, cmd)).Decision; d == engine.DecisionAllow {
			t.Errorf("%q after granting `touch a.txt`: allowed", cmd)
		}
	}
	if snap := snapshot(t, f.root); len(snap) != len(before) {
		t.Errorf("files changed")
	}
}

func TestRememberRefusesDeniedAndUnprovable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: Rules{Deny: []string{"Bash(rm:*)"}}})
	ctx := context.Background()
	for _, cmd := range []string{"rm -rf build", "echo x > .git/config", "a=rm; $a x", "git reset --hard"} {
		err := g.Remember(ctx, bashQuery(f.ws, cmd), engine.ScopeSession)
		if !errors.Is(err, ErrNotGrantable) {
			t.Errorf("Remember(%q) = %v, want ErrNotGrantable", cmd, err)
		}
	}
	// A grant on a dynamic command never grants a pattern.
	q := bashQuery(f.ws, "ls | xargs rm")
	_ = g.Remember(ctx, q, engine.ScopeSession)
	if d := g.Check(ctx, bashQuery(f.ws, "ls | xargs rm")).Decision; d == engine.DecisionAllow {
		t.Errorf("xargs rm allowed after a grant")
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	for k := range g.grants {
		if strings.Contains(k, "rm") {
			t.Errorf("grant key %q covers rm", k)
		}
	}
}

type memWriter struct {
	mu    sync.Mutex
	rules []string
}

func (m *memWriter) AddAllowRule(_ context.Context, r string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = append(m.rules, r)
	return nil
}

func TestAlwaysGrantPersistsExactRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := &memWriter{}
	g := f.gate(t, Options{Writer: w})
	ctx := context.Background()
	q := bashQuery(f.ws, "go test ./... | tee out.log")
	if err := g.Remember(ctx, q, engine.ScopeAlways); err != nil {
		t.Fatal(err)
	}
	want := []string{"Bash(go test ./...)", "Bash(tee out.log)", "Edit(./out.log)"}
	if strings.Join(w.rules, "|") != strings.Join(want, "|") {
		t.Fatalf("persisted %q, want %q", w.rules, want)
	}
	// A fresh gate built from the persisted rules allows the same command
	// and nothing broader.
	g2 := f.gate(t, Options{User: Rules{Allow: w.rules}})
	if d := g2.Check(ctx, q).Decision; d != engine.DecisionAllow {
		t.Errorf("persisted rules: %s, want allow", d)
	}
	if d := g2.Check(ctx, bashQuery(f.ws, "go test ./... | tee /tmp/x")).Decision; d == engine.DecisionAllow {
		t.Errorf("persisted rules allowed a different target")
	}
	if d := g2.Check(ctx, bashQuery(f.ws, "go test -run X ./...")).Decision; d == engine.DecisionAllow {
		t.Errorf("persisted rules allowed a different command")
	}
	// Without a writer, always falls back to the session with an error.
	g3 := f.gate(t, Options{})
	if err := g3.Remember(ctx, q, engine.ScopeAlways); err == nil {
		t.Errorf("always without a writer: no error")
	}
	if d := g3.Check(ctx, q).Decision; d != engine.DecisionAllow {
		t.Errorf("always without writer still grants the session: %s", d)
	}
}

func TestFileGrant(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{})
	ctx := context.Background()
	q := engine.GateQuery{Workspace: f.ws, Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk,
		Request: engine.PermissionRequest{Tool: "write_file", Paths: []string{"src/main.go"}, Write: true}}
	if err := g.Remember(ctx, q, engine.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if d := g.Check(ctx, q).Decision; d != engine.DecisionAllow {
		t.Errorf("granted path: %s", d)
	}
	q.Request.Paths = []string{"src/other.go"}
	if d := g.Check(ctx, q).Decision; d != engine.DecisionAsk {
		t.Errorf("other path: %s, want ask", d)
	}
}

func TestConcurrentCheckAndRemember(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{Writer: &memWriter{}})
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			q := bashQuery(f.ws, "make target"+string(rune('a'+i)))
			for k := 0; k < 20; k++ {
				g.Check(ctx, q)
				if k == 10 {
					_ = g.Remember(ctx, q, engine.ScopeAlways)
				}
			}
		}(i)
	}
	wg.Wait()
}

func TestNewRejectsBadRules(t *testing.T) {
	t.Parallel()
	for _, r := range []string{"Bash(ls", "(ls)", "Ba sh(ls)", "Bash(:*)", "WebFetch(example.com)", "Bash(a\x00b)"} {
		if _, err := New(Options{User: Rules{Allow: []string{r}}}); err == nil {
			t.Errorf("rule %q accepted", r)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{User: rmRules})
	ctx := context.Background()
	cases := []struct {
		tool, input string
		mode        engine.Mode
		pm          engine.PermissionMode
		want        engine.Decision
		stage       Stage
		subs        int
	}{
		{"bash", `{"command":"git status && rm -rf build"}`, "", "", engine.DecisionDeny, StageDenyRule, 2},
		{"bash", `{"command":"git status"}`, "", "", engine.DecisionAllow, StageAllow, 1},
		{"bash", `{"command":"make"}`, "", engine.PermissionDeny, engine.DecisionDeny, StagePermissionMode, 1},
		{"bash", `{"command":"echo x > f"}`, engine.ModeAnalysisOnly, "", engine.DecisionDeny, StageMode, 1},
		{"read_file", `{"path":"../outside/x"}`, "", "", engine.DecisionDeny, StageSafety, 0},
		{"Write", `{"file_path":"src/a.go","content":"x"}`, "", engine.PermissionAcceptEdits, engine.DecisionAllow, StageAllow, 0},
	}
	for _, c := range cases {
		rep, err := g.PolicyCheck(ctx, PolicyInput{Tool: c.tool, Input: json.RawMessage(c.input), Mode: c.mode, PermissionMode: c.pm, Workspace: f.ws})
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.input, err)
		}
		if rep.Decision != c.want || rep.Stage != c.stage || len(rep.Subcommands) != c.subs {
			t.Errorf("%s %s: %s/%s %q, want %s/%s with %d sub-commands", c.tool, c.input, rep.Decision, rep.Stage, rep.Subcommands, c.want, c.stage, c.subs)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"decision", "stage", "reason"} {
			if _, ok := m[k]; !ok {
				t.Errorf("JSON lacks %q: %s", k, b)
			}
		}
		if !strings.Contains(rep.Text(), "decision: "+string(c.want)) {
			t.Errorf("text report: %s", rep.Text())
		}
	}
	for _, bad := range []struct{ tool, input string }{{"bash", `{}`}, {"bash", `{"command":1}`}, {"write_file", `{}`}, {"", `{}`}, {"bash", `not json`}} {
		if _, err := g.PolicyCheck(ctx, PolicyInput{Tool: bad.tool, Input: json.RawMessage(bad.input), Workspace: f.ws}); err == nil {
			t.Errorf("%s %s: no error", bad.tool, bad.input)
		}
	}
}

func TestCancelledContextDenies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := g.Check(ctx, bashQuery(f.ws, "ls")).Decision; d != engine.DecisionDeny {
		t.Errorf("cancelled: %s, want deny", d)
	}
}

func TestDeniesTool(t *testing.T) {
	t.Parallel()
	g, err := New(Options{User: Rules{Deny: []string{"Bash", "mcp__net", "Edit", "Read(./.env)"}}})
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]bool{
		"bash": true, "Bash": true, "mcp__net__get": true, "mcp__fs__read": false, "write_file": true,
		"edit_file": true, "read_file": false, "WebFetch": false,
	} {
		if got := g.DeniesTool(tool); got != want {
			t.Errorf("DeniesTool(%s) = %v, want %v", tool, got, want)
		}
	}
}

// TestSessionGrantNeverCoversPatterns answers "allow for this session" on
// commands that could only be remembered as a pattern: rm with a glob, a
// variable, or a whole tool. Nothing broader than the exact command is
// ever granted, and `rm *` stays not allowed.
func TestSessionGrantNeverCoversPatterns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{})
	ctx := context.Background()
	for _, cmd := range []string{"rm *.o", "rm -f $f", "rm *", "bash -c \"$x\""} {
		err := g.Remember(ctx, bashQuery(f.ws, cmd), engine.ScopeSession)
		if err == nil {
			t.Errorf("Remember(%q) granted something", cmd)
		}
	}
	g.mu.RLock()
	n := len(g.grants)
	g.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d grants recorded", n)
	}
	for _, cmd := range []string{"rm *.o", "rm *", "rm -rf build", "ls"} {
		if d := g.Check(ctx, bashQuery(f.ws, cmd)).Decision; d == engine.DecisionAllow && cmd != "ls" {
			t.Errorf("%q allowed after refused grants", cmd)
		}
	}
	// A grant on one command is exactly that command: not the program, not
	// other arguments.
	if err := g.Remember(ctx, bashQuery(f.ws, "rm build/out.o"), engine.ScopeSession); err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]engine.Decision{
		"rm build/out.o": engine.DecisionAllow, "rm -rf build": engine.DecisionAsk, "rm build/out.o README.md": engine.DecisionAsk,
		"rm README.md": engine.DecisionAsk,
	} {
		if d := g.Check(ctx, bashQuery(f.ws, cmd)).Decision; d != want {
			t.Errorf("%q after granting `rm build/out.o`: %s, want %s", cmd, d, want)
		}
	}
}

// TestAskSaysWhatAlwaysWouldSave: an ask carries the rules "always allow"
// would save, so the prompt can show them; the rules Remember saves are
// exactly those; a request that cannot be granted for good carries none.
func TestAskSaysWhatAlwaysWouldSave(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := &memWriter{}
	g := f.gate(t, Options{Writer: w})
	ctx := context.Background()
	q := bashQuery(f.ws, "touch a.txt")
	v := g.Check(ctx, q)
	if v.Decision != engine.DecisionAsk || len(v.Grants) != 2 || v.Grants[0] != "Bash(touch a.txt)" || !strings.HasPrefix(v.Grants[1], "Edit(") {
		t.Fatalf("verdict %+v", v)
	}
	if err := g.Remember(ctx, q, engine.ScopeAlways); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	saved := strings.Join(w.rules, "|")
	w.mu.Unlock()
	if saved != strings.Join(v.Grants, "|") {
		t.Fatalf("saved %v, the prompt said %v", saved, v.Grants)
	}
	if v := g.Check(ctx, bashQuery(f.ws, "a=rm; $a x")); len(v.Grants) != 0 {
		t.Fatalf("an unprovable command offers grants %v", v.Grants)
	}
}

package permission_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/hooks"
	"github.com/kaizen-code/kz/tools/permission"
)

// hookGate is a gate with one real PreToolUse hook for every tool that
// answers decision (allow, deny or ask) in JSON, and counts its runs in
// a file.
func hookGate(t *testing.T, decision string, opts permission.Options) (*permission.Gate, string, func() int) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(root, "runs")
	cmd := `cat >/dev/null; echo x >> ` + count + `; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` +
		decision + `","permissionDecisionReason":"the hook says ` + decision + `"}}'`
	r, err := hooks.New(hooks.Options{Workspace: ws, User: hooks.Config{"PreToolUse": {{Hooks: []hooks.Command{{Command: cmd}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Hooks, opts.Home = r, filepath.Join(root, "home")
	g, err := permission.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	return g, ws, runs
}

func query(ws string, mode engine.Mode, pm engine.PermissionMode, req engine.PermissionRequest) engine.GateQuery {
	return engine.GateQuery{SessionID: "s", Runtime: "native", Mode: mode, PermissionMode: pm, Workspace: ws, Request: req,
		Capabilities: engine.Capabilities{Set: engine.NewCapSet(engine.CapFilesystemEdit, engine.CapShell, engine.CapFilesystemRead)}}
}

// A hook's allow answers only "nothing allowed this": a safety check, the
// mode, a deny or ask rule and a validation question all stand.
func TestHookAllowNeverLiftsASafetyCheck(t *testing.T) {
	ctx := context.Background()
	g, ws, runs := hookGate(t, "allow", permission.Options{User: permission.Rules{Deny: []string{"Bash(curl:*)"}, Ask: []string{"Bash(make deploy)"}}})
	for _, tc := range []struct {
		name  string
		mode  engine.Mode
		req   engine.PermissionRequest
		want  engine.Decision
		stage permission.Stage
	}{
		{"lifts the allow stage's question", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "bash", Command: "make build"}, engine.DecisionAllow, permission.StageHook},
		{"a write the person would be asked about", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "write_file", Paths: []string{"a.txt"}, Write: true}, engine.DecisionAllow, permission.StageHook},
		{"write into .git", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "write_file", Paths: []string{".git/config"}, Write: true}, engine.DecisionDeny, permission.StageSafety},
		{"write outside the workspace", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "Write", Paths: []string{"/etc/passwd"}, Write: true}, engine.DecisionDeny, permission.StageSafety},
		{"destructive git", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "Bash", Command: "git push --force origin main"}, engine.DecisionDeny, permission.StageSafety},
		{"analysis-only write", engine.ModeAnalysisOnly, engine.PermissionRequest{Tool: "write_file", Paths: []string{"a.txt"}, Write: true}, engine.DecisionDeny, permission.StageMode},
		{"patch-proposal shell write", engine.ModePatchProposal, engine.PermissionRequest{Tool: "bash", Command: "touch a"}, engine.DecisionDeny, permission.StageMode},
		{"deny rule", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "bash", Command: "curl example.com"}, engine.DecisionDeny, permission.StageDenyRule},
		{"ask rule", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "bash", Command: "make deploy"}, engine.DecisionAsk, permission.StageAskRule},
		{"unprovable command", engine.ModeFullAutonomous, engine.PermissionRequest{Tool: "bash", Command: "eval \"$X\""}, engine.DecisionAsk, permission.StageValidation},
	} {
		before := runs()
		rep := g.Judge(ctx, query(ws, tc.mode, engine.PermissionAsk, tc.req))
		if rep.Decision != tc.want || rep.Stage != tc.stage {
			t.Errorf("%s: %s at %s (%s), want %s at %s", tc.name, rep.Decision, rep.Stage, rep.Reason, tc.want, tc.stage)
		}
		if runs() != before+1 {
			t.Errorf("%s: the hook ran %d times", tc.name, runs()-before)
		}
		if tc.stage == permission.StageHook && (!strings.HasPrefix(rep.Rule, "PreToolUse hook `") || rep.Reason != "the hook says allow") {
			t.Errorf("%s: rule %q reason %q", tc.name, rep.Rule, rep.Reason)
		}
	}
	// Nor does it give a runtime a capability it lacks.
	q := query(ws, engine.ModeFullAutonomous, engine.PermissionAsk, engine.PermissionRequest{Tool: "bash", Command: "make build"})
	q.Capabilities.Set = engine.NewCapSet(engine.CapFilesystemRead)
	if rep := g.Judge(ctx, q); rep.Decision != engine.DecisionDeny || rep.Stage != permission.StageCapability {
		t.Errorf("a runtime without shell: %s at %s", rep.Decision, rep.Stage)
	}
	// The hook-free evaluation (what Remember and the patch guard use)
	// starts no process.
	before := runs()
	if rep := g.Evaluate(ctx, query(ws, engine.ModeFullAutonomous, engine.PermissionAsk, engine.PermissionRequest{Tool: "bash", Command: "make build"})); rep.Decision != engine.DecisionAsk {
		t.Errorf("Evaluate without hooks: %s", rep.Decision)
	}
	if runs() != before {
		t.Error("Evaluate ran the hook")
	}
}

// A hook's deny is final and its ask asks, whatever a rule, a grant or
// the permission mode allowed; headless, the ask becomes a deny.
func TestHookDenyAndAskOverrideAllows(t *testing.T) {
	ctx := context.Background()
	allowAll := permission.Options{User: permission.Rules{Allow: []string{"Bash(make build)", "Edit"}}}
	g, ws, _ := hookGate(t, "deny", allowAll)
	for _, pm := range []engine.PermissionMode{engine.PermissionAsk, engine.PermissionYolo, engine.PermissionAcceptEdits} {
		for _, req := range []engine.PermissionRequest{{Tool: "bash", Command: "make build"}, {Tool: "edit_file", Paths: []string{"a.txt"}, Write: true},
			{Tool: "read_file", Paths: []string{"a.txt"}}} {
			v := g.Check(ctx, query(ws, engine.ModeFullAutonomous, pm, req))
			if v.Decision != engine.DecisionDeny || v.Stage != "hook" || v.Reason != "the hook says deny" || !strings.Contains(v.Rule, "PreToolUse hook") {
				t.Errorf("%s %s: %+v", pm, req.Tool, v)
			}
		}
	}
	g, ws, _ = hookGate(t, "ask", allowAll)
	v := g.Check(ctx, query(ws, engine.ModeFullAutonomous, engine.PermissionYolo, engine.PermissionRequest{Tool: "bash", Command: "make build"}))
	if v.Decision != engine.DecisionAsk || v.Stage != "hook" {
		t.Errorf("ask over an allow rule in yolo: %+v", v)
	}
	allowAll.Headless = true
	g, ws, _ = hookGate(t, "ask", allowAll)
	v = g.Check(ctx, query(ws, engine.ModeFullAutonomous, engine.PermissionAsk, engine.PermissionRequest{Tool: "bash", Command: "make build"}))
	if v.Decision != engine.DecisionDeny || v.Stage != string(permission.StageHeadless) || !strings.Contains(v.Reason, "the hook says ask") {
		t.Errorf("headless ask: %+v", v)
	}
}

// kz policy check shows the hook stage with what the hook said.
func TestPolicyCheckShowsTheHook(t *testing.T) {
	g, ws, runs := hookGate(t, "deny", permission.Options{})
	rep, err := g.PolicyCheck(context.Background(), permission.PolicyInput{Tool: "Bash", Input: []byte(`{"command":"git push"}`), Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	var hook *permission.StageResult
	for i := range rep.Stages {
		if rep.Stages[i].Stage == permission.StageHook {
			hook = &rep.Stages[i]
		}
	}
	if hook == nil || hook.Decision != engine.DecisionDeny || rep.Stage != permission.StageHook || runs() != 1 {
		t.Fatalf("report %+v", rep)
	}
	if txt := rep.Text(); !strings.Contains(txt, "stage:    hook") || !strings.Contains(txt, "rule:     PreToolUse hook `") {
		t.Errorf("text:\n%s", txt)
	}
}

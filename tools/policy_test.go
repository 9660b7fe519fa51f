package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// TestPolicyCheckUsesTheToolsDecoder checks that `kz policy check` judges a
// kz tool's input exactly as a real call: strictly decoded by the tool,
// paths resolved by the tool, then the same gate. Input the tool rejects is
// denied at the validation stage; the decision on valid input equals the
// one the Executor gets for the same call.
func TestPolicyCheckUsesTheToolsDecoder(t *testing.T) {
	e := newE2E(t)
	if err := os.Symlink(".git", filepath.Join(e.ws.Dir(), "notgit")); err != nil {
		t.Fatal(err)
	}
	g, err := permission.New(permission.Options{User: statusRm, Home: e.home})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		tool, input string
		pm          engine.PermissionMode
		want        engine.Decision
		stage       permission.Stage
		subs        int
	}{
		{"bash", `{"command":"git status && rm -rf build"}`, "", engine.DecisionDeny, permission.StageDenyRule, 2},
		{"bash", `{"command":"git status"}`, "", engine.DecisionAllow, permission.StageAllow, 1},
		{"bash", `{"command":"git status","cwd":"/"}`, "", engine.DecisionDeny, permission.StageValidation, 0},
		{"bash", `{"command":["git","status"]}`, "", engine.DecisionDeny, permission.StageValidation, 0},
		{"bash", `{"command":"true","command":"rm -rf build"}`, "", engine.DecisionDeny, permission.StageValidation, 0},
		{"write_file", `{"path":"a.txt","content":"x","mode":"0777"}`, engine.PermissionYolo, engine.DecisionDeny, permission.StageValidation, 0},
		{"write_file", `{"path":1,"content":"x"}`, engine.PermissionYolo, engine.DecisionDeny, permission.StageValidation, 0},
		{"write_file", `{"PATH":"a.txt","content":"x"}`, engine.PermissionYolo, engine.DecisionDeny, permission.StageValidation, 0},
		{"write_file", `{"path":"a.txt","content":"x"}`, "", engine.DecisionAsk, permission.StageAllow, 0},
		{"write_file", `{"path":"notgit/config","content":"x"}`, engine.PermissionYolo, engine.DecisionDeny, permission.StageSafety, 0},
		{"read_file", `{"path":"../outside/x"}`, "", engine.DecisionDeny, permission.StageValidation, 0},
		{"edit_file", `{"path":"README.md","old_string":"readme","new_string":"x"}`, engine.PermissionAcceptEdits, engine.DecisionAllow, permission.StageAllow, 0},
		{"edit_file", `{"path":"README.md","old_string":"absent","new_string":"x"}`, engine.PermissionAcceptEdits, engine.DecisionDeny, permission.StageValidation, 0},
		// Another runtime's tool name: decoded by the gate's own reader.
		{"Write", `{"file_path":".git/hooks/pre-commit","content":"x"}`, engine.PermissionYolo, engine.DecisionDeny, permission.StageSafety, 0},
	}
	// The session has read README.md, so edit_file's own check passes in
	// the Executor as it does in policy check (which has no session).
	if r := e.call(t, "read_file", map[string]any{"path": "README.md"}); r.IsError {
		t.Fatal(r.Output)
	}
	before := e.tree(t)
	for _, c := range cases {
		in := permission.PolicyInput{Tool: c.tool, Input: json.RawMessage(c.input), Mode: engine.ModeFullAutonomous,
			PermissionMode: c.pm, Workspace: e.ws.Dir()}
		rep, err := PolicyCheck(ctx, g, in)
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.input, err)
		}
		if rep.Decision != c.want || rep.Stage != c.stage || len(rep.Subcommands) != c.subs {
			t.Errorf("%s %s: %s/%s %q (%s), want %s/%s", c.tool, c.input, rep.Decision, rep.Stage, rep.Subcommands, rep.Reason, c.want, c.stage)
		}
		b, _ := json.Marshal(rep)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"decision", "stage", "reason"} {
			if v, ok := m[k].(string); !ok || v == "" {
				t.Errorf("%s %s: JSON field %q missing or empty: %s", c.tool, c.input, k, b)
			}
		}
		if _, ok := e.ex.Registry().Lookup(c.tool); !ok {
			continue
		}
		// The Executor's gate sees the same decision for the same call.
		p := &gatePermitter{g: g, base: engine.GateQuery{Mode: engine.ModeFullAutonomous, PermissionMode: orAsk(c.pm), Workspace: e.ws.Dir()}}
		tl, _ := e.ex.Registry().Lookup(c.tool)
		call, err := tl.Prepare(ctx, e.env, json.RawMessage(c.input))
		if err != nil {
			if rep.Stage != permission.StageValidation || !strings.Contains(rep.Reason, err.Error()) {
				t.Errorf("%s %s: the tool rejects it (%v) but policy check says %s/%s", c.tool, c.input, err, rep.Decision, rep.Stage)
			}
			continue
		}
		if a := p.RequestPermission(ctx, gateRequest(call, "id", c.tool, json.RawMessage(c.input))); a.Decision != rep.Decision && !(rep.Decision == engine.DecisionAsk && a.Decision == engine.DecisionDeny) {
			t.Errorf("%s %s: executor gate %s, policy check %s", c.tool, c.input, a.Decision, rep.Decision)
		}
	}
	if d := diffTrees(before, e.tree(t)); len(d) > 0 {
		t.Errorf("policy check changed files: %v", d)
	}
}

func orAsk(pm engine.PermissionMode) engine.PermissionMode {
	if pm == "" {
		return engine.PermissionAsk
	}
	return pm
}

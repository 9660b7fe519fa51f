package permission

import (
	"context"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// MCP tools are judged by name: a trusted read-only one runs like a read,
// any other is asked, and outside full-autonomous mode only the read-only
// ones run at all, whatever a rule or the permission mode says.
func TestMCPToolsByModeAndReadOnly(t *testing.T) {
	f := newFixture(t)
	ro := "mcp__docs__search"
	cases := []gateCase{
		{name: "read-only runs", tool: ro, want: engine.DecisionAllow, stage: StageAllow},
		{name: "other is asked", tool: "mcp__docs__write", want: engine.DecisionAsk, stage: StageAllow},
		{name: "unknown server is asked", tool: "mcp__other__search", want: engine.DecisionAsk, stage: StageAllow},
		{name: "allow rule", tool: "mcp__docs__write", rules: Rules{Allow: []string{"mcp__docs"}}, want: engine.DecisionAllow, stage: StageAllow},
		{name: "deny rule beats read-only", tool: ro, rules: Rules{Deny: []string{"mcp__docs__search"}}, want: engine.DecisionDeny, stage: StageDenyRule},
		{name: "analysis-only read-only", tool: ro, mode: engine.ModeAnalysisOnly, want: engine.DecisionAllow, stage: StageAllow},
		{name: "analysis-only other refused despite rule", tool: "mcp__docs__write", mode: engine.ModeAnalysisOnly,
			rules: Rules{Allow: []string{"mcp__docs__write"}}, want: engine.DecisionDeny, stage: StageMode},
		{name: "analysis-only other refused in yolo", tool: "mcp__docs__write", mode: engine.ModeAnalysisOnly, pm: engine.PermissionYolo,
			want: engine.DecisionDeny, stage: StageMode},
		{name: "patch-proposal other refused", tool: "mcp__docs__write", mode: engine.ModePatchProposal, want: engine.DecisionDeny, stage: StageMode},
		{name: "runtime without mcp", tool: ro, caps: []engine.Capability{engine.CapShell}, want: engine.DecisionDeny, stage: StageCapability},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.gate(t, Options{User: c.rules})
			g.SetMCPReadOnly(func(tool string) bool { return tool == ro })
			v := g.Check(context.Background(), c.query(f.ws))
			if v.Decision != c.want || Stage(v.Stage) != c.stage {
				t.Errorf("got %s at %s (%s), want %s at %s", v.Decision, v.Stage, v.Reason, c.want, c.stage)
			}
		})
	}
	// Without the client's word, no MCP tool is read-only.
	g := f.gate(t, Options{})
	if v := g.Check(context.Background(), gateCase{tool: ro, mode: engine.ModeAnalysisOnly}.query(f.ws)); v.Decision != engine.DecisionDeny {
		t.Errorf("unknown read-only status: %+v", v)
	}
	g.SetMCPReadOnly(func(string) bool { return true })
	g.SetMCPReadOnly(nil)
	if v := g.Check(context.Background(), gateCase{tool: ro}.query(f.ws)); v.Decision != engine.DecisionAsk {
		t.Errorf("after forgetting: %+v", v)
	}
}

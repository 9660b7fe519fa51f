package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestToolSpecs (class: tool specs): tools other agents send that kz
// does not run get a decision by their declared class, never "unknown
// tool": session, read-only and subagent tools run, network, write,
// execute and interaction tools are asked unless a rule allows them, and
// the modes and capabilities still apply.
func TestToolSpecs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name     string
		tool     string
		mode     engine.Mode
		pm       engine.PermissionMode
		rules    Rules
		caps     []engine.Capability
		headless bool
		want     engine.Decision
		class    ToolClass
		reason   string
	}{
		{name: "TodoWrite runs", tool: "TodoWrite", want: engine.DecisionAllow, class: ClassSession, reason: "task list"},
		{name: "TaskUpdate runs", tool: "TaskUpdate", want: engine.DecisionAllow, class: ClassSession},
		{name: "BashOutput runs", tool: "BashOutput", want: engine.DecisionAllow, class: ClassSession, reason: "background command"},
		{name: "KillShell runs", tool: "KillShell", want: engine.DecisionAllow, class: ClassSession},
		{name: "KillBash runs", tool: "KillBash", want: engine.DecisionAllow, class: ClassSession},
		{name: "Task runs a subagent", tool: "Task", want: engine.DecisionAllow, class: ClassSubagent, reason: "each of its tool calls passes this gate"},
		{name: "Task in analysis-only", tool: "Task", mode: engine.ModeAnalysisOnly, want: engine.DecisionAllow, class: ClassSubagent},
		{name: "Task without the subagents capability", tool: "Task", caps: []engine.Capability{engine.CapShell}, want: engine.DecisionDeny, class: ClassSubagent, reason: "subagents"},
		{name: "Task with the subagents capability", tool: "Task", caps: []engine.Capability{engine.CapSubagents}, want: engine.DecisionAllow},
		{name: "Task denied by rule", tool: "Task", rules: Rules{Deny: []string{"Task"}}, want: engine.DecisionDeny},
		{name: "ListMcpResourcesTool runs", tool: "ListMcpResourcesTool", want: engine.DecisionAllow, class: ClassReadOnly},
		{name: "WebSearch asks", tool: "WebSearch", want: engine.DecisionAsk, class: ClassNetwork, reason: "searches the web"},
		{name: "WebSearch allowed by rule", tool: "WebSearch", rules: allow("WebSearch"), want: engine.DecisionAllow},
		{name: "WebSearch yolo", tool: "WebSearch", pm: engine.PermissionYolo, want: engine.DecisionAllow},
		{name: "WebSearch headless denied", tool: "WebSearch", headless: true, want: engine.DecisionDeny, reason: "headless"},
		{name: "web_search (Codex) asks", tool: "web_search", want: engine.DecisionAsk, class: ClassNetwork},
		{name: "google_web_search (Gemini) asks", tool: "google_web_search", want: engine.DecisionAsk, class: ClassNetwork},
		{name: "ReadMcpResourceTool asks", tool: "ReadMcpResourceTool", want: engine.DecisionAsk, class: ClassNetwork},
		{name: "SlashCommand asks", tool: "SlashCommand", want: engine.DecisionAsk, class: ClassExecute, reason: "do not pass this gate"},
		{name: "Skill asks", tool: "Skill", want: engine.DecisionAsk, class: ClassExecute},
		{name: "Skill in patch-proposal denied", tool: "Skill", mode: engine.ModePatchProposal, pm: engine.PermissionYolo, want: engine.DecisionDeny, reason: "patch-proposal mode"},
		{name: "write_stdin asks", tool: "write_stdin", want: engine.DecisionAsk, class: ClassExecute},
		{name: "EnterWorktree asks", tool: "EnterWorktree", want: engine.DecisionAsk, class: ClassWrite},
		{name: "EnterWorktree in analysis-only denied", tool: "EnterWorktree", mode: engine.ModeAnalysisOnly, rules: allow("EnterWorktree"), want: engine.DecisionDeny},
		{name: "CronCreate asks", tool: "CronCreate", want: engine.DecisionAsk, class: ClassWrite, reason: "without the person"},
		{name: "save_memory (Gemini) asks", tool: "save_memory", want: engine.DecisionAsk, class: ClassWrite},
		{name: "ExitPlanMode asks the person", tool: "ExitPlanMode", want: engine.DecisionAsk, class: ClassInteraction, reason: "only the person"},
		{name: "ExitPlanMode in analysis-only denied", tool: "ExitPlanMode", mode: engine.ModeAnalysisOnly, want: engine.DecisionDeny, reason: "analysis-only"},
		{name: "EnterPlanMode runs", tool: "EnterPlanMode", want: engine.DecisionAllow, class: ClassSession},
		{name: "AskUserQuestion asks", tool: "AskUserQuestion", want: engine.DecisionAsk, class: ClassInteraction},
		{name: "update_plan (Codex) runs", tool: "update_plan", want: engine.DecisionAllow, class: ClassSession},
		{name: "write_todos (Gemini) runs", tool: "write_todos", want: engine.DecisionAllow, class: ClassSession},
		{name: "unknown tool asks and says so", tool: "FrobnicateTool", want: engine.DecisionAsk, reason: "does not know what this tool does"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.gate(t, Options{User: c.rules, Headless: c.headless})
			q := gateCase{tool: c.tool, mode: c.mode, pm: c.pm, caps: c.caps}.query(f.ws)
			q.Request.Input = []byte(`{}`)
			rep := g.Evaluate(context.Background(), q)
			if rep.Decision != c.want {
				t.Fatalf("decision %s, want %s (stage %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Reason)
			}
			if c.class != "" && rep.Class != c.class {
				t.Errorf("class %q, want %q", rep.Class, c.class)
			}
			if !strings.Contains(rep.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", rep.Reason, c.reason)
			}
			if strings.Contains(rep.Reason, "unknown tool") {
				t.Errorf("reason %q", rep.Reason)
			}
			if !rep.Confinement.IsZero() {
				t.Errorf("a tool that starts no command got confinement %v", rep.Confinement)
			}
		})
	}
}

// TestToolSpecsAreKnown: every declared spec is a known tool with a valid
// class, and none shadows a tool whose input the gate reads.
func TestToolSpecsAreKnown(t *testing.T) {
	t.Parallel()
	valid := map[ToolClass]bool{ClassReadOnly: true, ClassSession: true, ClassSubagent: true, ClassNetwork: true,
		ClassWrite: true, ClassExecute: true, ClassInteraction: true}
	specs := ToolSpecs()
	if len(specs) < 20 {
		t.Fatalf("only %d specs", len(specs))
	}
	for _, s := range specs {
		if !KnownTool(s.Name) || !valid[s.Class] || s.Does == "" {
			t.Errorf("spec %+v", s)
		}
		if _, ok := toolKinds()[s.Name]; ok {
			t.Errorf("%s has a kind and a spec", s.Name)
		}
	}
	if _, ok := SpecOf("Bash"); ok {
		t.Error("Bash has a spec")
	}
}

package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestReasonNamesTheDecidingPart (class: reasons): the reason of an ask
// or a deny names the sub-command that decided, never a proven read-only
// one that happens to come first.
func TestReasonNamesTheDecidingPart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name    string
		cmd     string
		mode    engine.Mode
		rules   Rules
		enf     Enforcement
		want    engine.Decision
		names   string
		notName string
	}{
		{name: "ls && rm", cmd: "ls && rm -rf build", want: engine.DecisionAsk, names: "`rm -rf build`", notName: "`ls`"},
		{name: "three parts", cmd: "ls; cat README.md; make", want: engine.DecisionAsk, names: "`make`", notName: "`cat"},
		{name: "rule-allowed first", cmd: "git status && npm publish", rules: allow("Bash(git status:*)"), want: engine.DecisionAsk, names: "`npm publish`", notName: "git status"},
		{name: "subshell then make", cmd: "(cd src && ls) && make test", want: engine.DecisionAsk, names: "`make test`", notName: "`ls`"},
		{name: "pipeline", cmd: "cat README.md | python3 x.py", want: engine.DecisionAsk, names: "`python3 x.py`", notName: "`cat"},
		{name: "read-only outside named by safety", cmd: "ls && cat /etc/hostname", want: engine.DecisionAsk, names: "/etc/hostname", notName: "`ls`"},
		{name: "deny rule names rm", cmd: "ls && rm -rf build", rules: Rules{Deny: []string{"Bash(rm:*)"}}, want: engine.DecisionDeny, names: "`rm -rf build`", notName: "`ls`"},
		{name: "deny rule names git push", cmd: "git status && git push origin main", rules: Rules{Deny: []string{"Bash(git push:*)"}}, want: engine.DecisionDeny, names: "`git push origin main`", notName: "`git status`"},
		{name: "ask rule names git push", cmd: "ls && git push", rules: Rules{Ask: []string{"Bash(git push:*)"}, Allow: []string{"Bash(*)"}}, want: engine.DecisionAsk, names: "`git push`", notName: "`ls`"},
		{name: "maybe names the dynamic command", cmd: "ls && git $sub origin", rules: Rules{Deny: []string{"Bash(git push:*)"}, Allow: []string{"Bash(git:*)"}}, want: engine.DecisionAsk, names: "`git $sub origin`", notName: "`ls`"},
		{name: "analysis-only names the writer", cmd: "ls && rm -rf build", mode: engine.ModeAnalysisOnly, want: engine.DecisionDeny, names: "`rm -rf build`", notName: "`ls`"},
		{name: "analysis-only names a redirect", cmd: "ls > out.txt", mode: engine.ModeAnalysisOnly, want: engine.DecisionDeny, names: "the write to out.txt"},
		{name: "patch-proposal names the writer", cmd: "ls && cp a b", mode: engine.ModePatchProposal, want: engine.DecisionDeny, names: "`cp a b`", notName: "`ls`"},
		{name: "no sandbox names the unlisted part", cmd: "ls && git log", enf: EnforcementNone, want: engine.DecisionAsk, names: "`git log`", notName: "`ls`"},
		{name: "only read-only parts: the first unallowed one", cmd: "ls && cat /etc/hostname && wc -l README.md", want: engine.DecisionAsk, names: "/etc/hostname"},
		{name: "rm named after several read-only parts", cmd: "pwd && ls && wc -l README.md && rm -rf build && make", want: engine.DecisionAsk, names: "`rm -rf build`", notName: "`pwd`"},
		{name: "deny WebFetch names the host", cmd: "", want: engine.DecisionDeny, names: "the host evil.com"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.gate(t, Options{User: c.rules, Enforcement: c.enf})
			q := gateCase{cmd: c.cmd, mode: c.mode}.query(f.ws)
			if c.cmd == "" {
				g = f.gate(t, Options{User: Rules{Deny: []string{"WebFetch(domain:evil.com)"}}})
				q = fetchQuery(f.ws, "WebFetch", urlInput("https://EVIL.com./x"))
			}
			rep := g.Evaluate(context.Background(), q)
			if rep.Decision != c.want {
				t.Fatalf("decision %s, want %s (stage %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Reason)
			}
			if !strings.Contains(rep.Reason, c.names) {
				t.Errorf("reason %q does not name %s", rep.Reason, c.names)
			}
			if c.notName != "" && strings.Contains(rep.Reason, c.notName) {
				t.Errorf("reason %q names %s", rep.Reason, c.notName)
			}
		})
	}
}

package permission

import (
	"context"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestBashRuleEquivalences (class: rule equivalences for deny, ask and
// allow): a Bash rule matches the parsed command whatever the flag order,
// grouping, spelling or path of the program; deny and ask rules match what
// could be the rule's command, allow rules only what certainly is.
func TestBashRuleEquivalences(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Edit(**) lets the allowed rm write its operands.
	denyRm := Rules{Deny: []string{"Bash(rm -rf:*)"}, Allow: []string{"Bash(*)", "Edit(**)"}}
	askRm := Rules{Ask: []string{"Bash(rm -rf:*)"}, Allow: []string{"Bash(*)", "Edit(**)"}}
	allowRm := allow("Bash(rm -rf:*)", "Edit(**)")
	cases := []struct {
		name  string
		cmd   string
		rules Rules
		want  engine.Decision
		stage Stage
	}{
		// Deny rm -rf.
		{"deny rm -rf", "rm -rf build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm -fr", "rm -fr build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm -r -f", "rm -r -f build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm -f -r", "rm -f -r build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm --recursive --force", "rm --recursive --force build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm --rec --forc", "rm --rec --forc build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm -Rf", "rm -Rf build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm -rfv", "rm -rfv build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny rm options after operand", "rm build -rf", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny /bin/rm -rf", "/bin/rm -rf build", denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny command rm -rf", "command rm -rf build", denyRm, engine.DecisionDeny, StageDenyRule},
		{`deny \rm -rf`, `\rm -rf build`, denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny quoted flags", `rm "-r" '-f' build`, denyRm, engine.DecisionDeny, StageDenyRule},
		{"deny inside bash -c", "bash -c 'rm -fr build'", denyRm, engine.DecisionDeny, StageDenyRule},
		{"rm -r alone is not rm -rf", "rm -r build", denyRm, engine.DecisionAllow, ""},
		{"rm -f alone is not rm -rf", "rm -f build.o", denyRm, engine.DecisionAllow, ""},
		{"deny maybe: unknown option", "rm -r --frobnicate build", denyRm, engine.DecisionAsk, StageDenyRule},
		{"deny maybe: variable option", "rm -r $opt build", denyRm, engine.DecisionAsk, StageDenyRule},
		// Ask rm -rf.
		{"ask rm -fr", "rm -fr build", askRm, engine.DecisionAsk, StageAskRule},
		{"ask rm --recursive --force", "rm --recursive --force build", askRm, engine.DecisionAsk, StageAskRule},
		{"ask /bin/rm -Rf", "/bin/rm -Rf build", askRm, engine.DecisionAsk, StageAskRule},
		{"ask rm -r not asked", "rm -r build", askRm, engine.DecisionAllow, ""},
		// Allow rm -rf: only when certain, only bare.
		{"allow rm -fr", "rm -fr build", allowRm, engine.DecisionAllow, StageAllow},
		{"allow rm -r -f", "rm -r -f build", allowRm, engine.DecisionAllow, StageAllow},
		{"allow rm --recursive --force", "rm --recursive --force build", allowRm, engine.DecisionAllow, StageAllow},
		{"allow not /bin/rm", "/bin/rm -rf build", allowRm, engine.DecisionAsk, ""},
		{"allow not with an unknown option", "rm -rf --frobnicate build", allowRm, engine.DecisionAsk, ""},
		{"allow not rm -r", "rm -r build", allowRm, engine.DecisionAsk, ""},
		{"allow not a variable option", "rm $opt build", allowRm, engine.DecisionAsk, ""},
		// Exact rules.
		{"exact deny any order", "rm -fr build", Rules{Deny: []string{"Bash(rm -rf build)"}, Allow: []string{"Bash(*)"}}, engine.DecisionDeny, StageDenyRule},
		{"exact deny other operand", "rm -rf dist", Rules{Deny: []string{"Bash(rm -rf build)"}, Allow: []string{"Bash(*)", "Edit(**)"}}, engine.DecisionAllow, ""},
		{"exact allow reordered", "rm -f -r build", allow("Bash(rm -r -f build)", "Edit(**)"), engine.DecisionAllow, StageAllow},
		{"exact allow grouped", "rm -fr build", allow("Bash(rm -r -f build)", "Edit(**)"), engine.DecisionAllow, StageAllow},
		{"exact allow extra option asks", "rm -frv build", allow("Bash(rm -r -f build)", "Edit(**)"), engine.DecisionAsk, ""},
		{"exact allow extra operand asks", "rm -fr build dist", allow("Bash(rm -r -f build)", "Edit(**)"), engine.DecisionAsk, ""},
		// Option values.
		{"value spelled attached", "cut --fields=2 README.md", Rules{Deny: []string{"Bash(cut -f:*)"}, Allow: []string{"Bash(*)"}}, engine.DecisionDeny, StageDenyRule},
		{"value abbreviated", "sort --out=x README.md", Rules{Deny: []string{"Bash(sort -o:*)"}, Allow: []string{"Bash(*)"}, Ask: nil}, engine.DecisionDeny, StageDenyRule},
		{"value compared", "head -n 5 README.md", Rules{Deny: []string{"Bash(head -n 10:*)"}, Allow: []string{"Bash(*)"}}, engine.DecisionAllow, ""},
		{"value other spelling", "head --lines=10 README.md", Rules{Deny: []string{"Bash(head -n 10:*)"}, Allow: []string{"Bash(*)"}}, engine.DecisionDeny, StageDenyRule},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.gate(t, Options{User: c.rules})
			rep := g.Evaluate(context.Background(), gateCase{cmd: c.cmd}.query(f.ws))
			if rep.Decision != c.want {
				t.Fatalf("decision %s, want %s (stage %s, rule %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Rule, rep.Reason)
			}
			if c.stage != "" && rep.Stage != c.stage {
				t.Errorf("stage %s, want %s (%s)", rep.Stage, c.stage, rep.Reason)
			}
		})
	}
}

// TestBashRuleGlobalOptions (class: global options): options before a
// sub-command do not hide it from deny and ask rules; allow rules do not
// cover global options they do not name.
func TestBashRuleGlobalOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	denyPush := Rules{Deny: []string{"Bash(git push:*)"}, Allow: []string{"Bash(*)"}}
	askPublish := Rules{Ask: []string{"Bash(npm publish:*)"}, Allow: []string{"Bash(*)"}}
	cases := []struct {
		name  string
		cmd   string
		rules Rules
		want  engine.Decision
	}{
		{"git push", "git push origin main", denyPush, engine.DecisionDeny},
		{"git -C . push", "git -C . push", denyPush, engine.DecisionDeny},
		{"git --no-pager -c push", "git --no-pager -c a=b push", denyPush, engine.DecisionDeny},
		{"git --git-dir=.git push", "git --git-dir=.git push", denyPush, engine.DecisionDeny},
		{"git --git-dir .git push", "git --git-dir .git push origin", denyPush, engine.DecisionDeny},
		{"git -p push", "git -p push", denyPush, engine.DecisionDeny},
		{"/usr/bin/git -C src push", "/usr/bin/git -C src push", denyPush, engine.DecisionDeny},
		{"git push in a subshell", "(cd src && git -C .. push)", denyPush, engine.DecisionDeny},
		{"git $sub is a maybe", "git $sub origin", denyPush, engine.DecisionAsk},
		{"git -C $d push", "git -C $d push", denyPush, engine.DecisionDeny},
		{"git pull is not push", "git -C . pull", denyPush, engine.DecisionAllow},
		{"git log --grep push is not push", "git log --grep push", denyPush, engine.DecisionAllow},
		{"npm publish", "npm publish", askPublish, engine.DecisionAsk},
		{"npm --prefix . publish", "npm --prefix . publish", askPublish, engine.DecisionAsk},
		{"npm -w pkg publish", "npm -w pkg publish", askPublish, engine.DecisionAsk},
		{"npm --workspace=pkg publish", "npm --workspace=pkg publish --tag next", askPublish, engine.DecisionAsk},
		{"npm run publish is not publish", "npm run publish", askPublish, engine.DecisionAllow},
		{"deny pattern sees through globals", "git -C . push origin", Rules{Deny: []string{"Bash(git push *)"}, Allow: []string{"Bash(*)"}}, engine.DecisionDeny},
		{"allow git push: plain", "git push origin main", allow("Bash(git push:*)"), engine.DecisionAllow},
		{"allow git push: not with -C", "git -C src push", allow("Bash(git push:*)"), engine.DecisionAsk},
		{"allow git push: not with -c", "git -c core.sshCommand=x push", allow("Bash(git push:*)"), engine.DecisionAsk},
		{"allow naming the global option", "git --no-pager log", allow("Bash(git --no-pager log:*)"), engine.DecisionAllow},
		{"allow npm publish: not with --prefix", "npm --prefix ../other publish", allow("Bash(npm publish:*)"), engine.DecisionAsk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.gate(t, Options{User: c.rules})
			rep := g.Evaluate(context.Background(), gateCase{cmd: c.cmd}.query(f.ws))
			if rep.Decision != c.want {
				t.Fatalf("decision %s, want %s (stage %s, rule %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Rule, rep.Reason)
			}
		})
	}
}

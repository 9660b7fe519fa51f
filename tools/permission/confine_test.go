package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

var (
	roNoNet = engine.Confinement{Profile: engine.ProfileReadOnly}
	wwNet   = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: true}
	wwGit   = engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: true, Git: true}
)

// TestConfinement (class: confinement per mode, permission mode and
// decision): every verdict on a shell command says which OS sandbox
// profile it runs under, and on an ask, which one the person's yes gives.
func TestConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name      string
		cmd       string
		mode      engine.Mode
		pm        engine.PermissionMode
		rules     Rules
		internal  bool
		noNetwork bool
		headless  bool
		want      engine.Decision
		conf      engine.Confinement
	}{
		{name: "proven read-only runs read-only", cmd: "ls -la src && wc -l README.md", want: engine.DecisionAllow, conf: roNoNet},
		{name: "proven read-only pipeline", cmd: "git log --oneline | head -5", want: engine.DecisionAllow, conf: roNoNet},
		{name: "read-only allowed by rule gets what the rule grants", cmd: "git status", rules: allow("Bash(git status:*)"), want: engine.DecisionAllow, conf: wwNet},
		{name: "git commit by rule may write .git", cmd: "git commit -m x", rules: allow("Bash(git commit:*)"), want: engine.DecisionAllow, conf: wwGit},
		{name: "git -C commit in yolo may write .git", cmd: "git -C src commit -m x", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwGit},
		{name: "git add && git commit", cmd: "git add . && git commit -m x", rules: allow("Bash(git add:*)", "Bash(git commit:*)"), want: engine.DecisionAllow, conf: wwGit},
		{name: "make in yolo", cmd: "make", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwNet},
		{name: "proven read-only in yolo gets what yolo grants", cmd: "ls", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwNet},
		{name: "make asked: the yes gives workspace-write", cmd: "make", want: engine.DecisionAsk, conf: wwNet},
		{name: "network off by config", cmd: "make", noNetwork: true, want: engine.DecisionAsk, conf: engine.Confinement{Profile: engine.ProfileWorkspaceWrite}},
		{name: "git push asked by rule may write .git", cmd: "git push origin main", rules: Rules{Ask: []string{"Bash(git push:*)"}}, want: engine.DecisionAsk, conf: wwGit},
		{name: "git fetch asked", cmd: "git fetch", want: engine.DecisionAsk, conf: wwGit},
		{name: "plain git apply writes the work tree only", cmd: "git apply p.diff", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwNet},
		{name: "git apply --index writes the index", cmd: "git apply --index p.diff", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwGit},
		{name: "git diff in yolo does not write .git", cmd: "git diff && make", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwNet},
		{name: "proven read-only but reads outside: asked, read-only", cmd: "cat /etc/hostname", want: engine.DecisionAsk, conf: roNoNet},
		{name: "redirect in accept-edits with a rule", cmd: "echo x > out.txt", pm: engine.PermissionAcceptEdits, rules: allow("Bash(echo:*)"), want: engine.DecisionAllow, conf: wwNet},
		{name: "proven read-only in accept-edits", cmd: "cat README.md", pm: engine.PermissionAcceptEdits, want: engine.DecisionAllow, conf: roNoNet},
		{name: "analysis-only, whatever allowed it", cmd: "git status", mode: engine.ModeAnalysisOnly, pm: engine.PermissionYolo, rules: allow("Bash(*)"), want: engine.DecisionAllow, conf: roNoNet},
		{name: "analysis-only read-only", cmd: "grep -r x src", mode: engine.ModeAnalysisOnly, want: engine.DecisionAllow, conf: roNoNet},
		{name: "patch-proposal model shell", cmd: "go test ./...", mode: engine.ModePatchProposal, rules: allow("Bash(go test:*)"), want: engine.DecisionAllow, conf: roNoNet},
		{name: "patch-proposal model shell in yolo", cmd: "go vet ./...", mode: engine.ModePatchProposal, pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: roNoNet},
		{name: "patch-proposal VERIFY", cmd: "go test ./...", mode: engine.ModePatchProposal, internal: true, rules: allow("Bash(go test:*)"), want: engine.DecisionAllow, conf: wwNet},
		{name: "patch-proposal VERIFY asked", cmd: "make check", mode: engine.ModePatchProposal, internal: true, want: engine.DecisionAsk, conf: wwNet},
		{name: "denied gets the strictest", cmd: "rm -rf build", rules: Rules{Deny: []string{"Bash(rm:*)"}}, pm: engine.PermissionYolo, want: engine.DecisionDeny, conf: roNoNet},
		{name: "headless ask denied", cmd: "make", headless: true, want: engine.DecisionDeny, conf: roNoNet},
		{name: "bash -c git commit", cmd: "bash -c 'git commit -m x'", pm: engine.PermissionYolo, want: engine.DecisionAllow, conf: wwGit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.gate(t, Options{User: c.rules, Network: !c.noNetwork, Headless: c.headless})
			q := gateCase{cmd: c.cmd, mode: c.mode, pm: c.pm}.query(f.ws)
			q.Request.Internal = c.internal
			rep := g.Evaluate(context.Background(), q)
			if rep.Decision != c.want {
				t.Fatalf("decision %s, want %s (stage %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Reason)
			}
			if rep.Confinement != c.conf {
				t.Errorf("confinement %+v, want %+v", rep.Confinement, c.conf)
			}
			if v := g.Check(context.Background(), q); v.Confinement != rep.Confinement {
				t.Errorf("Check carries %+v, Evaluate %+v", v.Confinement, rep.Confinement)
			}
		})
	}
}

// TestConfinementOnFileTools: requests that start no process carry none.
func TestConfinementOnFileTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{Network: true})
	for _, q := range []engine.GateQuery{
		gateCase{tool: "read_file", paths: []string{"README.md"}}.query(f.ws),
		gateCase{tool: "write_file", paths: []string{"a.txt"}, write: true, pm: engine.PermissionYolo}.query(f.ws),
		gateCase{tool: "mcp__fs__read"}.query(f.ws),
	} {
		if rep := g.Evaluate(context.Background(), q); !rep.Confinement.IsZero() {
			t.Errorf("%s: confinement %+v", q.Request.Tool, rep.Confinement)
		}
	}
}

// TestConfinementAfterGrant: a session grant lets the command run under
// workspace-write, as the person's yes did.
func TestConfinementAfterGrant(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{Network: true})
	ctx := context.Background()
	q := bashQuery(f.ws, "git commit -m x")
	if v := g.Check(ctx, q); v.Decision != engine.DecisionAsk || v.Confinement != wwGit {
		t.Fatalf("before the grant: %+v", v)
	}
	if err := g.Remember(ctx, q, engine.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if v := g.Check(ctx, q); v.Decision != engine.DecisionAllow || v.Confinement != wwGit {
		t.Fatalf("after the grant: %+v", v)
	}
}

// TestPolicyShowsConfinement: kz policy check prints the profile in text
// and JSON.
func TestPolicyShowsConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gate(t, Options{Network: true})
	rep, err := g.PolicyCheck(context.Background(), PolicyInput{Tool: "bash", Input: []byte(`{"command":"git commit -m x"}`), Workspace: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	if txt := rep.Text(); !strings.Contains(txt, "sandbox:  workspace-write (.git writable but its config and hooks), network") {
		t.Errorf("text:\n%s", txt)
	}
	rep, err = g.PolicyCheck(context.Background(), PolicyInput{Tool: "bash", Input: []byte(`{"command":"ls"}`), Workspace: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	if txt := rep.Text(); !strings.Contains(txt, "sandbox:  read-only, no network") {
		t.Errorf("text:\n%s", txt)
	}
	if js, err := json.Marshal(rep); err != nil || !strings.Contains(string(js), `"confinement":{"profile":"read-only"}`) {
		t.Errorf("json %s %v", js, err)
	}
	rep, err = g.PolicyCheck(context.Background(), PolicyInput{Tool: "Task", Input: []byte(`{}`), Workspace: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	if txt := rep.Text(); !strings.Contains(txt, "class:    subagent") || strings.Contains(txt, "sandbox:") {
		t.Errorf("text:\n%s", txt)
	}
}

// TestNoSandboxFallback (class: no-sandbox fallback): without full
// enforcement, only commands on the short list with known options run
// without asking; everything else the analysis proved read-only is asked,
// saying that no sandbox is active. Rules, grants and yolo still allow.
func TestNoSandboxFallback(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name   string
		cmd    string
		enf    Enforcement
		mode   engine.Mode
		pm     engine.PermissionMode
		rules  Rules
		want   engine.Decision
		reason string
	}{
		{name: "ls", cmd: "ls", enf: EnforcementNone, want: engine.DecisionAllow},
		{name: "cat in the workspace", cmd: "cat README.md", enf: EnforcementNone, want: engine.DecisionAllow},
		{name: "pwd && wc", cmd: "pwd && wc README.md", enf: EnforcementPartial, want: engine.DecisionAllow},
		{name: "grep pipeline", cmd: "cat README.md | grep readme | sort | uniq", enf: EnforcementNone, want: engine.DecisionAllow},
		{name: "cd then ls", cmd: "cd src && ls", enf: EnforcementNone, want: engine.DecisionAllow},
		{name: "zero value is none", cmd: "git status", enf: "", want: engine.DecisionAsk, reason: "no OS sandbox is active (enforcement none)"},
		{name: "git status not on the list", cmd: "git status", enf: EnforcementNone, want: engine.DecisionAsk, reason: "`git status` is not on it"},
		{name: "partial names itself", cmd: "git log", enf: EnforcementPartial, want: engine.DecisionAsk, reason: "the OS sandbox is partial"},
		{name: "find not on the list", cmd: "find . -name x", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "sed -n not on the list", cmd: "sed -n 1p README.md", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "one unlisted part asks", cmd: "ls && awk '{print $1}' README.md", enf: EnforcementNone, want: engine.DecisionAsk, reason: "awk"},
		{name: "wrapper asks", cmd: "timeout 5 ls", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "env assignment asks", cmd: "LC_ALL=C ls", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "./cat is not cat", cmd: "./cat README.md", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "bash -c asks", cmd: "bash -c ls", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "analysis-only asks too", cmd: "git status", enf: EnforcementNone, mode: engine.ModeAnalysisOnly, want: engine.DecisionAsk, reason: "no OS sandbox"},
		{name: "analysis-only listed runs", cmd: "ls src", enf: EnforcementNone, mode: engine.ModeAnalysisOnly, want: engine.DecisionAllow},
		{name: "known options", cmd: "ls -la src && head -n 5 README.md", enf: EnforcementNone, want: engine.DecisionAllow},
		{name: "grouped and long options", cmd: "grep -rn --ignore-case readme src | sort -r | cut -d: -f1", enf: EnforcementNone, want: engine.DecisionAllow},
		{name: "abbreviated long option", cmd: "cat --number README.md && wc --lin README.md", enf: EnforcementPartial, want: engine.DecisionAllow},
		{name: "ambiguous abbreviation asks", cmd: "ls --al src", enf: EnforcementNone, want: engine.DecisionAsk, reason: "`ls --al src`"},
		{name: "unknown option asks", cmd: "ls --frobnicate", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "list of files asks", cmd: "wc --files0-from=list.txt", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "glob may expand to an option", cmd: "cat *.md", enf: EnforcementNone, want: engine.DecisionAsk},
		{name: "rule still allows", cmd: "git status", enf: EnforcementNone, rules: allow("Bash(git status:*)"), want: engine.DecisionAllow},
		{name: "yolo still allows", cmd: "git status", enf: EnforcementNone, pm: engine.PermissionYolo, want: engine.DecisionAllow},
		{name: "full enforcement allows", cmd: "git status", enf: EnforcementFull, want: engine.DecisionAllow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{User: c.rules, Enforcement: c.enf}
			if c.enf == "" {
				// f.gate fills in full for the other tests; this case is
				// about the zero value.
				opts.Home = f.home
				g, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				rep := g.Evaluate(context.Background(), gateCase{cmd: c.cmd}.query(f.ws))
				if rep.Decision != c.want || !strings.Contains(rep.Reason, c.reason) {
					t.Fatalf("%s (%s), want %s saying %q", rep.Decision, rep.Reason, c.want, c.reason)
				}
				return
			}
			g := f.gate(t, opts)
			rep := g.Evaluate(context.Background(), gateCase{cmd: c.cmd, mode: c.mode, pm: c.pm}.query(f.ws))
			if rep.Decision != c.want {
				t.Fatalf("decision %s, want %s (stage %s, reason %s)", rep.Decision, c.want, rep.Stage, rep.Reason)
			}
			if !strings.Contains(rep.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", rep.Reason, c.reason)
			}
			if strings.Contains(rep.Reason, "short list of commands") && rep.Confinement != roNoNet {
				t.Errorf("a read-only command asked for want of a sandbox gets %+v", rep.Confinement)
			}
		})
	}
}

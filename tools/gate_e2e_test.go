package tools

// The adversarial suite of issue 3, end to end: every case is a real tool
// call through the Executor, judged by the real permission gate, run (when
// allowed) by the real bash and file tools in a real workspace. Each case
// asserts the gate's decision AND that nothing changed on disk: the whole
// temp tree (workspace, its siblings, a fake home) is hashed before and
// after. A control case shows the harness does see a side effect when one
// happens, so the no-side-effect assertions can fail.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// gatePermitter answers like a session with nobody at the keyboard: the
// real gate decides, and an ask is recorded and then denied, so an asked
// call never runs.
type gatePermitter struct {
	g    *permission.Gate
	base engine.GateQuery

	mu       sync.Mutex
	verdicts []engine.Verdict
}

func (p *gatePermitter) RequestPermission(ctx context.Context, req engine.PermissionRequest) engine.Answer {
	q := p.base
	q.Request = req
	v := p.g.Check(ctx, q)
	p.mu.Lock()
	p.verdicts = append(p.verdicts, v)
	p.mu.Unlock()
	if v.Decision == engine.DecisionAsk {
		return engine.Answer{Decision: engine.DecisionDeny, Stage: v.Stage, Rule: v.Rule, Reason: "asked (the test answers no): " + v.Reason}
	}
	return engine.Answer{Decision: v.Decision, Stage: v.Stage, Rule: v.Rule, Reason: v.Reason}
}

// last returns the last verdict, or a zero verdict when the gate was never
// asked (the call was rejected while it was decoded and validated).
func (p *gatePermitter) last() (engine.Verdict, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.verdicts) == 0 {
		return engine.Verdict{}, 0
	}
	return p.verdicts[len(p.verdicts)-1], len(p.verdicts)
}

// e2e is a workspace <base>/proj with real content, a fake home, and the
// siblings of newFixture; HOME points at the fake home for the gate and for
// bash alike.
type e2e struct {
	*fixture
	home string
}

// rejected is the decision of a call refused before the gate (invalid or
// outside path): nothing ran and the gate was never asked.
const rejected engine.Decision = "rejected"

func newE2E(t *testing.T) *e2e {
	t.Helper()
	f := newFixture(t)
	e := &e2e{fixture: f, home: filepath.Join(f.base, "home")}
	t.Setenv("HOME", e.home)
	for p, c := range map[string]string{
		"home/.bashrc":              "# rc\n",
		"home/x":                    "home file\n",
		"proj/README.md":            "readme a\n",
		"proj/build/out.o":          "obj\n",
		"proj/src/x.py":             "open('python-ran', 'w')\n",
		"proj/vendor/x/.git/config": "[core]\n",
		"proj/f":                    "keep\n",
	} {
		full := filepath.Join(f.base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// ./cat is the workspace's own program, not cat: running it leaves a mark.
	if err := os.WriteFile(filepath.Join(f.ws.Dir(), "cat"), []byte("#!/bin/sh\necho pwned > cat-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.base, "outside"), filepath.Join(f.ws.Dir(), "outbox")); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q")
	git.Dir = f.ws.Dir()
	if out, err := git.CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(f.ws.Dir(), ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

// tree hashes every entry below the base directory: path, type, mode,
// content and link target.
func (e *e2e) tree(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		case info.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffTrees lists what differs between two tree snapshots.
func diffTrees(before, after map[string]string) []string {
	var d []string
	for p, v := range before {
		if w, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		} else if w != v {
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	return d
}

// e2eCase is one tool call judged in a session context.
type e2eCase struct {
	name  string
	tool  string // "bash" when empty
	cmd   string // the bash command
	input map[string]any
	mode  engine.Mode
	pm    engine.PermissionMode
	rules permission.Rules
	want  engine.Decision
}

func (c e2eCase) call() (string, map[string]any) {
	if c.tool == "" {
		return "bash", map[string]any{"command": c.cmd}
	}
	return c.tool, c.input
}

// run executes the case through the Executor with a real gate and returns
// the decision (rejected when the gate was never asked) and the result.
func (e *e2e) run(t *testing.T, g *permission.Gate, c e2eCase, headless bool) (engine.Decision, ToolResult) {
	t.Helper()
	mode, pm := c.mode, c.pm
	if mode == "" {
		mode = engine.ModeFullAutonomous
	}
	if pm == "" {
		pm = engine.PermissionAsk
	}
	if g == nil {
		var err error
		g, err = permission.New(permission.Options{User: c.rules, Home: e.home, Headless: headless,
			ConfigDir: filepath.Join(e.home, ".config", "kz"), DataDir: filepath.Join(e.home, ".local", "share", "kz")})
		if err != nil {
			t.Fatal(err)
		}
	}
	p := &gatePermitter{g: g, base: engine.GateQuery{SessionID: "sess1", Runtime: "native", Mode: mode, PermissionMode: pm, Workspace: e.ws.Dir()}}
	tool, in := c.call()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	res := e.ex.Execute(context.Background(), p, e.rec, []ToolCall{{ID: fmt.Sprintf("e2e-%d", callSeq.Add(1)), Name: tool, Input: raw}})
	v, n := p.last()
	if n == 0 {
		return rejected, res[0]
	}
	return v.Decision, res[0]
}

var (
	statusRm  = permission.Rules{Allow: []string{"Bash(git status:*)"}, Deny: []string{"Bash(rm:*)"}}
	allowAnyE = permission.Rules{Allow: []string{"Bash(*)", "Edit(**)", "Write(**)"}}
)

func adversarialE2ECases(e *e2e) []e2eCase {
	evil := filepath.Join(e.base, "proj-evil", "x")
	cs := []e2eCase{
		// Paths leaving the workspace.
		{name: "read_file ../outside/x", tool: "read_file", input: map[string]any{"path": "../outside/x"}, pm: engine.PermissionYolo, want: rejected},
		{name: "write_file sub/../../x", tool: "write_file", input: map[string]any{"path": "sub/../../x", "content": "pwned"}, pm: engine.PermissionYolo, want: rejected},
		{name: "write_file sibling proj-evil", tool: "write_file", input: map[string]any{"path": evil, "content": "pwned"}, pm: engine.PermissionYolo, want: rejected},
		{name: "read_file sibling proj-evil", tool: "read_file", input: map[string]any{"path": evil}, pm: engine.PermissionYolo, want: rejected},
		{name: "bash write sibling proj-evil", cmd: "echo pwned > " + evil, pm: engine.PermissionYolo, want: engine.DecisionDeny},
		{name: "bash write ../proj-evil", cmd: "echo pwned > ../proj-evil/x", pm: engine.PermissionYolo, want: engine.DecisionDeny},
		{name: "bash cat ../outside asked", cmd: "cat ../outside/x", want: engine.DecisionAsk},
		// The symlink outbox -> outside.
		{name: "write_file through outbox", tool: "write_file", input: map[string]any{"path": "outbox/x", "content": "pwned"}, pm: engine.PermissionYolo, want: rejected},
		{name: "write_file new file in outbox", tool: "write_file", input: map[string]any{"path": "outbox/new", "content": "pwned"}, pm: engine.PermissionYolo, want: rejected},
		{name: "edit_file through outbox", tool: "edit_file", input: map[string]any{"path": "outbox/x", "old_string": "secret", "new_string": "pwned"}, pm: engine.PermissionYolo, want: rejected},
		{name: "read_file through outbox", tool: "read_file", input: map[string]any{"path": "outbox/x"}, pm: engine.PermissionYolo, want: rejected},
		{name: "bash redirect through outbox", cmd: "echo pwned > outbox/new", pm: engine.PermissionYolo, want: engine.DecisionDeny},
		{name: "bash cp through outbox", cmd: "cp README.md outbox/x", pm: engine.PermissionYolo, want: engine.DecisionDeny},
		{name: "bash cat through outbox asked", cmd: "cat outbox/x", want: engine.DecisionAsk},
		// Control characters.
		{name: "write_file NUL", tool: "write_file", input: map[string]any{"path": "a\x00b", "content": "x"}, pm: engine.PermissionYolo, want: rejected},
		{name: "write_file newline", tool: "write_file", input: map[string]any{"path": "a\nb", "content": "x"}, pm: engine.PermissionYolo, want: rejected},
		{name: "write_file escape", tool: "write_file", input: map[string]any{"path": "a\x1b[2Jb", "content": "x"}, pm: engine.PermissionYolo, want: rejected},
		{name: "bash NUL", cmd: "touch a\x00b", pm: engine.PermissionYolo, want: rejected},
		{name: "bash redirect to newline name", cmd: "echo x > $'a\\nb'", pm: engine.PermissionYolo, want: engine.DecisionDeny},
		// Compound commands with allow git status, deny rm.
		{name: "&& rm", cmd: "git status && rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "; rm", cmd: "git status; rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "& rm", cmd: "git status & rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "newline rm", cmd: "git status\nrm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "|| rm", cmd: "git status || rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "| rm", cmd: "git status | rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "&& rm yolo", cmd: "git status && rm -rf build", rules: statusRm, pm: engine.PermissionYolo, want: engine.DecisionDeny},
		{name: "cd src && python3", cmd: "cd src && python3 x.py", rules: permission.Rules{Allow: []string{"Bash(cd:*)"}}, want: engine.DecisionAsk},
		// rm hidden in substitutions, scripts, wrappers, paths and quotes.
		{name: "echo $(rm)", cmd: "echo $(rm -rf build)", rules: statusRm, want: engine.DecisionDeny},
		{name: "echo backticks rm", cmd: "echo `rm -rf build`", rules: statusRm, want: engine.DecisionDeny},
		{name: "bash -c rm", cmd: "bash -c 'rm -rf build'", rules: statusRm, want: engine.DecisionDeny},
		{name: "sh -c rm", cmd: "sh -c 'rm -rf build'", rules: statusRm, want: engine.DecisionDeny},
		{name: "eval rm", cmd: "eval 'rm -rf build'", rules: statusRm, want: engine.DecisionDeny},
		{name: "timeout 5 rm", cmd: "timeout 5 rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "env rm", cmd: "env rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "/bin/rm", cmd: "/bin/rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: `"rm"`, cmd: `"rm" -rf build`, rules: statusRm, want: engine.DecisionDeny},
		{name: "r''m", cmd: "r''m -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "nohup nice rm", cmd: "nohup nice -n 5 rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "xargs rm", cmd: "echo build | xargs rm -rf", rules: statusRm, want: engine.DecisionDeny},
		{name: "sudo rm", cmd: "sudo rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "VAR= rm", cmd: "FOO=1 rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "stdbuf rm", cmd: "stdbuf -oL rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "command rm", cmd: "command rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "time rm", cmd: "time rm -rf build", rules: statusRm, want: engine.DecisionDeny},
		{name: "${IFS} rm", cmd: "rm${IFS}-rf${IFS}build", rules: statusRm, want: engine.DecisionDeny},
		{name: "variable program", cmd: "a=rm; $a -rf build", rules: permission.Rules{Allow: []string{"Bash(*)"}, Deny: []string{"Bash(rm:*)"}}, want: engine.DecisionAsk},
		{name: "process substitution rm", cmd: "cat <(rm -rf build)", rules: statusRm, want: engine.DecisionDeny},
		{name: "find -exec rm", cmd: `find build -exec rm {} \;`, rules: statusRm, want: engine.DecisionDeny},
		// ./cat is not cat.
		{name: "./cat README.md", cmd: "./cat README.md", rules: permission.Rules{Allow: []string{"Bash(cat:*)"}}, want: engine.DecisionAsk},
		{name: "./cat README.md yolo-free accept-edits", cmd: "./cat README.md", rules: permission.Rules{Allow: []string{"Bash(cat:*)"}}, pm: engine.PermissionAcceptEdits, want: engine.DecisionAsk},
		// Precedence.
		{name: "ask git push beats allow git", cmd: "git push", rules: permission.Rules{Ask: []string{"Bash(git push:*)"}, Allow: []string{"Bash(git:*)"}}, want: engine.DecisionAsk},
		{name: "deny aws beats allow aws s3 ls", cmd: "aws s3 ls", rules: permission.Rules{Deny: []string{"Bash(aws:*)"}, Allow: []string{"Bash(aws s3 ls)"}}, want: engine.DecisionDeny},
		// Analysis-only, whatever the allow rules say.
		{name: "analysis write_file", tool: "write_file", input: map[string]any{"path": "new.txt", "content": "x"}, mode: engine.ModeAnalysisOnly, rules: allowAnyE, pm: engine.PermissionYolo, want: engine.DecisionDeny},
		{name: "analysis echo > f", cmd: "echo x > f", mode: engine.ModeAnalysisOnly, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "analysis sed -i", cmd: "sed -i 's/a/b/' README.md", mode: engine.ModeAnalysisOnly, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "analysis git commit", cmd: "git commit --allow-empty -m x", mode: engine.ModeAnalysisOnly, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "analysis python", cmd: "python3 src/x.py", mode: engine.ModeAnalysisOnly, rules: allowAnyE, pm: engine.PermissionYolo, want: engine.DecisionDeny},
		// Patch-proposal: no writes through the shell.
		{name: "patch cp", cmd: "cp README.md copy.md", mode: engine.ModePatchProposal, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "patch python -c", cmd: `python3 -c "open('w','w')"`, mode: engine.ModePatchProposal, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "patch write_file", tool: "write_file", input: map[string]any{"path": "new.txt", "content": "x"}, mode: engine.ModePatchProposal, pm: engine.PermissionYolo, want: engine.DecisionDeny},
		// A nested .git is protected.
		{name: "write_file vendor/x/.git/config", tool: "write_file", input: map[string]any{"path": "vendor/x/.git/config", "content": "pwned"}, pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "bash vendor/x/.git/config", cmd: "echo pwned >> vendor/x/.git/config", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		// Destructive git and catastrophic rm in yolo.
		{name: "git reset --hard yolo", cmd: "git reset --hard", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "git clean -fdx yolo", cmd: "git clean -fdx", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "rm -rf ~ yolo", cmd: "rm -rf ~", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "rm -rf . yolo", cmd: "rm -rf .", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "rm -rf .git yolo", cmd: "rm -rf .git", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "rm ~/x yolo", cmd: "rm ~/x", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		// Links created on the way: what they point to is judged.
		{name: "ln -s .git/hooks then write yolo", cmd: "ln -s .git/hooks h && echo x > h/pre-commit", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "ln -s outside then write yolo", cmd: "ln -s ../outside o && echo pwned > o/new", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "ln hard link outside then write yolo", cmd: "ln ../outside/x hl && echo pwned > hl", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "cp -a a link then write yolo", cmd: "cp -a outbox o2 && echo pwned > o2/new", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionAsk},
		{name: "git config hooksPath yolo", cmd: "git config core.hooksPath hooks", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "git worktree outside yolo", cmd: "git worktree add ../evil", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
		{name: "cd .claude settings yolo", cmd: "mkdir -p .claude && cd .claude && echo '{}' > settings.json", pm: engine.PermissionYolo, rules: allowAnyE, want: engine.DecisionDeny},
	}
	// Protected writes are denied in every mode and permission mode.
	for _, cmd := range []string{"echo x > ~/.bashrc", "echo x >> .git/hooks/pre-commit", "cd .git/hooks && echo x > pre-commit"} {
		for _, m := range engine.Modes {
			for _, pm := range []engine.PermissionMode{engine.PermissionAsk, engine.PermissionAcceptEdits, engine.PermissionYolo, engine.PermissionDeny} {
				cs = append(cs, e2eCase{name: fmt.Sprintf("protected %q %s %s", cmd, m, pm), cmd: cmd, mode: m, pm: pm,
					rules: allowAnyE, want: engine.DecisionDeny})
			}
		}
	}
	return cs
}

// TestAdversarialEndToEnd runs every case through the Executor and the real
// gate, then checks the decision and that the tree is byte for byte what it
// was.
func TestAdversarialEndToEnd(t *testing.T) {
	e := newE2E(t)
	for _, c := range adversarialE2ECases(e) {
		t.Run(c.name, func(t *testing.T) {
			before := e.tree(t)
			got, res := e.run(t, nil, c, false)
			if got != c.want {
				t.Errorf("decision %s, want %s (result %q)", got, c.want, res.Output)
			}
			if !res.IsError {
				t.Errorf("the call succeeded: %q", res.Output)
			}
			if strings.Contains(res.Output, "secret outside") || strings.Contains(res.Output, "secret proj-evil") {
				t.Errorf("outside content leaked: %q", res.Output)
			}
			if d := diffTrees(before, e.tree(t)); len(d) > 0 {
				t.Errorf("side effects: %v", d)
			}
		})
	}
	if len(e.snaps.all()) != 0 {
		t.Errorf("snapshots were taken for refused writes: %d", len(e.snaps.all()))
	}
}

// TestEndToEndHarnessSeesSideEffects is the control: calls the gate allows
// do run and their effects show in the tree, so the no-side-effect checks
// above are not vacuous. It also covers "an absolute path inside the
// workspace works" and "git status is allowed by rule in analysis-only".
func TestEndToEndHarnessSeesSideEffects(t *testing.T) {
	e := newE2E(t)
	before := e.tree(t)
	if got, res := e.run(t, nil, e2eCase{cmd: "rm -rf build", pm: engine.PermissionYolo}, false); got != engine.DecisionAllow || res.IsError {
		t.Fatalf("rm -rf build in yolo: %s %+v", got, res)
	}
	abs := filepath.Join(e.ws.Dir(), "src", "abs.txt")
	if got, res := e.run(t, nil, e2eCase{tool: "write_file", input: map[string]any{"path": abs, "content": "abs\n"}, pm: engine.PermissionAcceptEdits}, false); got != engine.DecisionAllow || res.IsError {
		t.Fatalf("absolute path inside: %s %+v", got, res)
	}
	d := strings.Join(diffTrees(before, e.tree(t)), "\n")
	for _, want := range []string{"removed " + filepath.Join(e.ws.Dir(), "build", "out.o"), "created " + abs} {
		if !strings.Contains(d, want) {
			t.Errorf("tree diff lacks %q:\n%s", want, d)
		}
	}
	got, res := e.run(t, nil, e2eCase{cmd: "git status", mode: engine.ModeAnalysisOnly, rules: allowAnyE}, false)
	if got != engine.DecisionAllow || res.IsError || !strings.Contains(res.Output, "branch") {
		t.Fatalf("analysis-only git status: %s %+v", got, res)
	}
}

// TestSessionGrantThenOtherCommandAsked answers "allow for this session" on
// `touch a.txt`: the same command then runs without asking, and `rm ~/x`
// is asked again (and, unanswered, changes nothing).
func TestSessionGrantThenOtherCommandAsked(t *testing.T) {
	e := newE2E(t)
	g, err := permission.New(permission.Options{Home: e.home})
	if err != nil {
		t.Fatal(err)
	}
	touch := e2eCase{cmd: "touch a.txt"}
	if got, _ := e.run(t, g, touch, false); got != engine.DecisionAsk {
		t.Fatalf("touch before the grant: %s", got)
	}
	q := engine.GateQuery{Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk, Workspace: e.ws.Dir(),
		Request: engine.PermissionRequest{Tool: "bash", Command: "touch a.txt"}}
	if err := g.Remember(context.Background(), q, engine.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if got, res := e.run(t, g, touch, false); got != engine.DecisionAllow || res.IsError {
		t.Fatalf("touch after the grant: %s %+v", got, res)
	}
	if _, err := os.Stat(filepath.Join(e.ws.Dir(), "a.txt")); err != nil {
		t.Fatalf("granted command did not run: %v", err)
	}
	for _, cmd := range []string{"rm ~/x", "touch b.txt", "touch a.txt && rm -rf build", "rm a.txt"} {
		before := e.tree(t)
		if got, res := e.run(t, g, e2eCase{cmd: cmd}, false); got == engine.DecisionAllow || !res.IsError {
			t.Errorf("%q after granting `touch a.txt`: %s %+v", cmd, got, res)
		}
		if d := diffTrees(before, e.tree(t)); len(d) > 0 {
			t.Errorf("%q: side effects %v", cmd, d)
		}
	}
}

// TestHeadlessAsksBecomeDenials runs every case that would be asked with a
// headless gate while stdin is a pipe nobody writes to: each is denied at
// once, nothing changes, and nothing waits for input.
func TestHeadlessAsksBecomeDenials(t *testing.T) {
	e := newE2E(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close(); _ = r.Close() }()
	oldStdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = oldStdin }()
	asks := 0
	start := time.Now()
	for _, c := range adversarialE2ECases(e) {
		if c.want != engine.DecisionAsk {
			continue
		}
		asks++
		before := e.tree(t)
		got, res := e.run(t, nil, c, true)
		if got != engine.DecisionDeny || !res.IsError {
			t.Errorf("%s headless: %s %+v", c.name, got, res)
		}
		if d := diffTrees(before, e.tree(t)); len(d) > 0 {
			t.Errorf("%s headless: side effects %v", c.name, d)
		}
	}
	for _, cmd := range []string{"make", "python3 -c 'input()'", "npm test"} {
		got, res := e.run(t, nil, e2eCase{cmd: cmd}, true)
		if got != engine.DecisionDeny || !res.IsError {
			t.Errorf("%q headless: %s %+v", cmd, got, res)
		}
		asks++
	}
	// Commands that read stdin and are allowed (read-only) get no stdin
	// at all: they finish instead of waiting on kz's.
	for _, cmd := range []string{"cat", "read x; echo $x", "head -1"} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.run(t, nil, e2eCase{cmd: cmd}, true)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = w.Close()
			<-done
			t.Fatalf("%q waited on stdin", cmd)
		}
	}
	if asks < 8 {
		t.Fatalf("only %d asked cases", asks)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("headless denials took %v: something waited", el)
	}
}

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// fakePatcher accepts answers that start with "PATCH" and fails the
// verification command "false".
type fakePatcher struct {
	mu       sync.Mutex
	prepared []string
	applied  [][]string
	verified []string
	confs    []engine.Confinement
}

func (f *fakePatcher) Prepare(_ context.Context, text string) (engine.PreparedPatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prepared = append(f.prepared, text)
	switch {
	case strings.HasPrefix(text, "BROKEN"):
		return nil, errors.New("edit 1 of a.go matches nothing")
	case !strings.HasPrefix(text, "PATCH"):
		return nil, engine.ErrNoProposal
	}
	verify := strings.Fields(strings.TrimPrefix(text, "PATCH"))
	return &fakePrepared{f: f, verify: verify}, nil
}

func (f *fakePatcher) Feedback(err error) string { return "fix: " + err.Error() }

type fakePrepared struct {
	f      *fakePatcher
	verify []string
}

func (p *fakePrepared) ID() string      { return "chg_1" }
func (p *fakePrepared) Summary() string { return "rename x" }
func (p *fakePrepared) Files() []engine.FileChange {
	return []engine.FileChange{{Path: "a.go", Operation: "modify", Diff: "-x\n+y\n", Added: 1, Removed: 1}, {Path: "b.go", Operation: "add", Diff: "+z\n", Added: 1}}
}
func (p *fakePrepared) Paths() []string        { return []string{"a.go", "b.go"} }
func (p *fakePrepared) Verification() []string { return p.verify }
func (p *fakePrepared) Apply(_ context.Context, sel engine.PatchSelection) ([]engine.FileChange, error) {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	// Each accepted file is recorded with its kept hunks, when it has a
	// list of them.
	var paths []string
	for _, f := range sel.Files {
		s := f.Path
		if f.Hunks != nil {
			s += fmt.Sprint(f.Hunks)
		}
		paths = append(paths, s)
	}
	p.f.applied = append(p.f.applied, paths)
	files := p.Files()
	if len(paths) == 1 {
		files = files[:1]
	}
	return files, nil
}
func (p *fakePrepared) Verify(_ context.Context, c engine.Confinement, cmd string) (string, int, error) {
	p.f.mu.Lock()
	p.f.verified = append(p.f.verified, cmd)
	p.f.confs = append(p.f.confs, c)
	p.f.mu.Unlock()
	if cmd == "false" {
		return "FAIL: TestX", 1, nil
	}
	return "ok", 0, nil
}

// allowAll allows everything; the gate is not what these tests are about.
type allowAll struct{}

func (allowAll) Check(_ context.Context, q engine.GateQuery) engine.Verdict {
	return engine.Verdict{Decision: engine.DecisionAllow, Stage: "test"}
}
func (allowAll) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error { return nil }

func TestPatchProposalAppliesVerifiesAndRetries(t *testing.T) {
	t.Parallel()
	body := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"PATCH false"}
{"end_turn":true}
{"type":"assistant_message","text":"PATCH true"}
`
	p := &fakePatcher{}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body))},
		Mode: engine.ModePatchProposal, Patcher: p, Gate: allowAll{}})
	final, err := s.RunTurn(context.Background(), "rename x to y")
	if err != nil || final.Status != "complete" {
		t.Fatalf("%v %+v", err, final)
	}
	if strings.Join(p.verified, ",") != "false,true" || len(p.applied) != 2 {
		t.Fatalf("verified %v applied %v", p.verified, p.applied)
	}
	var types []string
	for _, ev := range j.all() {
		switch ev.Type {
		case engine.EventPatchProposed, engine.EventPatchApplied, engine.EventCommandFinished, engine.EventFileEdited:
			types = append(types, string(ev.Type))
		}
		if ev.Type == engine.EventPatchProposed && (len(ev.Files) != 2 || ev.PatchID != "chg_1") {
			t.Fatalf("proposed = %+v", ev)
		}
	}
	want := "patch_proposed,patch_applied,file_edited,file_edited,command_finished,patch_proposed,patch_applied,file_edited,file_edited,command_finished"
	if strings.Join(types, ",") != want {
		t.Fatalf("events %v", types)
	}
	// The retry prompt carried only the failure.
	if !strings.Contains(p.prepared[1], "PATCH true") {
		t.Fatalf("second proposal %q", p.prepared[1])
	}
}

func TestPatchProposalHeadlessDeniedAndInvalid(t *testing.T) {
	t.Parallel()
	body := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"BROKEN"}
{"end_turn":true}
{"type":"assistant_message","text":"PATCH"}
{"end_turn":true}
{"type":"assistant_message","text":"just an answer"}
`
	p := &fakePatcher{}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body))},
		Mode: engine.ModePatchProposal, Patcher: p, PatchRetries: 1})
	final, err := s.RunTurn(context.Background(), "go")
	if err != nil || final.Status != "complete" {
		t.Fatalf("%v %+v", err, final)
	}
	if len(p.applied) != 0 {
		t.Fatal("headless ask applied a patch")
	}
	var rejected []string
	for _, ev := range j.all() {
		if ev.Type == engine.EventPatchRejected {
			rejected = append(rejected, ev.Reason)
		}
	}
	if strings.Join(rejected, ",") != "invalid,declined" {
		t.Fatalf("rejections %v", rejected)
	}
	// accept-edits applies without a person.
	if err := s.SetPermissionMode(engine.PermissionAcceptEdits); err != nil {
		t.Fatal(err)
	}
	body2 := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"PATCH"}
`
	s2, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body2))},
		Mode: engine.ModePatchProposal, Patcher: p, PermissionMode: engine.PermissionAcceptEdits})
	if _, err := s2.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if len(p.applied) != 1 {
		t.Fatalf("accept-edits did not apply: %v", p.applied)
	}
}

// TestPatchProposalRetriesAreBounded: a model that keeps proposing
// something that does not apply is asked again DefaultPatchRetries times
// by default, as many times as configured otherwise, and never when
// retries are disabled; each failure is reported as a rejection.
func TestPatchProposalRetriesAreBounded(t *testing.T) {
	t.Parallel()
	body := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"BROKEN"}
`
	for _, c := range []struct {
		retries, wantPrepared int
	}{{0, 1 + engine.DefaultPatchRetries}, {1, 2}, {4, 5}, {-1, 1}} {
		p := &fakePatcher{}
		s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body))},
			Mode: engine.ModePatchProposal, Patcher: p, Gate: allowAll{}, PatchRetries: c.retries})
		if _, err := s.RunTurn(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		if len(p.prepared) != c.wantPrepared {
			t.Errorf("PatchRetries %d: %d proposals reviewed, want %d", c.retries, len(p.prepared), c.wantPrepared)
		}
		n := 0
		for _, ev := range j.all() {
			if ev.Type == engine.EventPatchRejected && ev.Reason == "invalid" && strings.HasPrefix(ev.Text, "fix: ") {
				n++
			}
		}
		if n != c.wantPrepared || len(p.applied) != 0 {
			t.Errorf("PatchRetries %d: %d rejections, %d applies", c.retries, n, len(p.applied))
		}
	}
}

// askAll leaves every decision to the person.
type askAll struct{}

func (askAll) Check(context.Context, engine.GateQuery) engine.Verdict {
	return engine.Verdict{Decision: engine.DecisionAsk, Stage: "test"}
}
func (askAll) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error { return nil }

// TestPatchProposalPersonAcceptsAllSomeOrNone: the person reviewing a
// patch_proposed answers the apply_patch request with all files, a
// selection of files (of one file's hunks), or a refusal; the outcome is recorded as
// patch_applied (with only the accepted files) or patch_rejected.
func TestPatchProposalPersonAcceptsAllSomeOrNone(t *testing.T) {
	t.Parallel()
	body := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"PATCH"}
`
	for _, c := range []struct {
		name      string
		answer    engine.Answer
		wantApply string // the paths passed to Apply, "-" for no Apply
		wantEvent engine.EventType
		wantFiles int
	}{
		{"all", engine.Answer{Decision: engine.DecisionAllow}, "", engine.EventPatchApplied, 2},
		{"some", engine.Answer{Decision: engine.DecisionAllow, Patch: &engine.PatchSelection{Files: []engine.FileSelection{{Path: "a.go"}}}}, "a.go", engine.EventPatchApplied, 1},
		{"hunks", engine.Answer{Decision: engine.DecisionAllow, Patch: &engine.PatchSelection{Files: []engine.FileSelection{{Path: "a.go", Hunks: []int{0}}, {Path: "b.go"}}}},
			"a.go[0],b.go", engine.EventPatchApplied, 2},
		{"none", engine.Answer{Decision: engine.DecisionDeny, Feedback: "not now"}, "-", engine.EventPatchRejected, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &fakePatcher{}
			s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body))},
				Mode: engine.ModePatchProposal, Patcher: p, Gate: askAll{}, Interactive: true})
			sub := s.Subscribe()
			defer sub.Close()
			if err := s.Submit("go"); err != nil {
				t.Fatal(err)
			}
			awaitEvent(t, sub, func(ev engine.Event) bool {
				if ev.Type == engine.EventPermissionRequested && ev.Tool == engine.ToolApplyPatch {
					if strings.Join(ev.Paths, ",") != "a.go,b.go" {
						t.Fatalf("the gate was asked about %v", ev.Paths)
					}
					if err := s.Answer(ev.RequestID, c.answer); err != nil {
						t.Fatal(err)
					}
				}
				return ev.Type == engine.EventFinalResult
			})
			p.mu.Lock()
			var got string
			switch len(p.applied) {
			case 0:
				got = "-"
			case 1:
				got = strings.Join(p.applied[0], ",")
			default:
				got = fmt.Sprint(p.applied)
			}
			p.mu.Unlock()
			if got != c.wantApply {
				t.Fatalf("Apply called with %q, want %q", got, c.wantApply)
			}
			var outcome *engine.Event
			for _, ev := range j.all() {
				if ev.Type == engine.EventPatchApplied || ev.Type == engine.EventPatchRejected {
					outcome = &ev
				}
			}
			if outcome == nil || outcome.Type != c.wantEvent || len(outcome.Files) != c.wantFiles {
				t.Fatalf("outcome %+v, want %s with %d files", outcome, c.wantEvent, c.wantFiles)
			}
			// The model of the next turn must learn that the change was
			// not applied whole.
			if c.name == "some" && !strings.HasSuffix(outcome.Text, "(applied 1 of 2 files; not applied: b.go)") {
				t.Fatalf("partial apply says %q", outcome.Text)
			}
			if c.name == "hunks" && !strings.HasSuffix(outcome.Text, "(some hunks rejected in a.go)") {
				t.Fatalf("an apply of some hunks says %q", outcome.Text)
			}
			if c.name == "all" && strings.Contains(outcome.Text, "applied 2 of") {
				t.Fatalf("a whole apply says %q", outcome.Text)
			}
			if c.wantEvent == engine.EventPatchRejected && (outcome.Reason != "declined" || outcome.Text != "not now") {
				t.Fatalf("rejection %+v", outcome)
			}
		})
	}
}

// confinementGate allows everything; a verification command (an Internal
// request) gets conf, the confinement the gate decides for it.
type confinementGate struct{ conf engine.Confinement }

func (g confinementGate) Check(_ context.Context, q engine.GateQuery) engine.Verdict {
	v := engine.Verdict{Decision: engine.DecisionAllow, Stage: "test"}
	if q.Request.Internal {
		v.Confinement = g.conf
	}
	return v
}
func (confinementGate) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error {
	return nil
}

// TestVerifyRunsUnderTheAnswersConfinement: each VERIFY command is run
// with the confinement the gate's answer carries for it, so that the
// sandbox applies the same profile as for the bash tool.
func TestVerifyRunsUnderTheAnswersConfinement(t *testing.T) {
	t.Parallel()
	for _, conf := range []engine.Confinement{
		{Profile: engine.ProfileWorkspaceWrite},
		{Profile: engine.ProfileWorkspaceWrite, Network: true, Git: true},
		{Profile: engine.ProfileReadOnly},
		{},
	} {
		body := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"PATCH true true"}
`
		p := &fakePatcher{}
		s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body))},
			Mode: engine.ModePatchProposal, Patcher: p, Gate: confinementGate{conf}})
		if final, err := s.RunTurn(context.Background(), "go"); err != nil || final.Status != "complete" {
			t.Fatalf("%v %+v", err, final)
		}
		if len(p.confs) != 2 || p.confs[0] != conf || p.confs[1] != conf {
			t.Errorf("verify ran under %+v, want %+v twice", p.confs, conf)
		}
	}
}

// TestProposalRequestsNameTheProposal: the apply of a proposal and each of
// its verification commands are asked naming the proposal (PatchID), so
// that a front end shows the first as the proposal's review and the
// others as its verification, not as the model's own calls; the apply
// says it writes.
func TestProposalRequestsNameTheProposal(t *testing.T) {
	t.Parallel()
	body := `{"kz_script":1,"capabilities":["text_completion"]}
{"type":"assistant_message","text":"PATCH true"}
`
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "text", body))},
		Mode: engine.ModePatchProposal, Patcher: &fakePatcher{}, Gate: askAll{}, Interactive: true})
	sub := s.Subscribe()
	defer sub.Close()
	if err := s.Submit("go"); err != nil {
		t.Fatal(err)
	}
	var asked []engine.Event
	awaitEvent(t, sub, func(ev engine.Event) bool {
		if ev.Type == engine.EventPermissionRequested {
			asked = append(asked, ev)
			if err := s.Answer(ev.RequestID, engine.Answer{Decision: engine.DecisionAllow}); err != nil {
				t.Fatal(err)
			}
		}
		return ev.Type == engine.EventFinalResult
	})
	if len(asked) != 2 {
		t.Fatalf("asked %d times: %+v", len(asked), asked)
	}
	apply, verify := asked[0], asked[1]
	if apply.Tool != engine.ToolApplyPatch || apply.PatchID == "" || apply.PatchID != apply.ToolCallID || !apply.Write || apply.Diff == "" {
		t.Errorf("apply asked as %+v", apply)
	}
	if verify.Tool != "bash" || verify.Command != "true" || verify.PatchID != apply.PatchID || verify.Write {
		t.Errorf("verification asked as %+v", verify)
	}
}

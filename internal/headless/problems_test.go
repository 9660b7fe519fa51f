package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// stubPatcher refuses answers starting with "BAD" the way the patch
// package does (its real feedback text), and prepares every other answer
// as a change to greeting.txt whose verification is the answer's text.
type stubPatcher struct{}

func (stubPatcher) Prepare(_ context.Context, text string) (engine.PreparedPatch, error) {
	if strings.HasPrefix(text, "BAD") {
		return nil, &patch.ValidationError{Problems: []patch.Problem{
			{Path: "greeting.txt", Edit: 0, Message: "the search lines were not found in the file", Search: "hello moon"},
			{Path: "other.txt", Edit: -1, Message: "the file does not exist"},
		}}
	}
	return stubPrepared{verify: text}, nil
}

func (stubPatcher) Feedback(err error) string { return patch.FormatFeedback(err) }

type stubPrepared struct{ verify string }

func (stubPrepared) ID() string      { return "chg_1" }
func (stubPrepared) Summary() string { return "greet the world" }
func (stubPrepared) Files() []engine.FileChange {
	return []engine.FileChange{{Path: "greeting.txt", Operation: "modify", Diff: "-hello moon\n+hello world\n"}}
}
func (stubPrepared) Paths() []string          { return []string{"greeting.txt"} }
func (p stubPrepared) Verification() []string { return []string{p.verify} }
func (p stubPrepared) Apply(context.Context, engine.PatchSelection) ([]engine.FileChange, error) {
	return p.Files(), nil
}
func (stubPrepared) Verify(_ context.Context, _ engine.Confinement, cmd string) (string, int, error) {
	if cmd == "false" {
		return "building…\nFAIL: greeting is wrong\n", 1, nil
	}
	return "", 0, nil
}

type allowAll struct{}

func (allowAll) Check(context.Context, engine.GateQuery) engine.Verdict {
	return engine.Verdict{Decision: engine.DecisionAllow, Stage: "test"}
}
func (allowAll) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error { return nil }

type denyAll struct{}

func (denyAll) Check(context.Context, engine.GateQuery) engine.Verdict {
	return engine.Verdict{Decision: engine.DecisionDeny, Stage: "test", Reason: "no writes today"}
}
func (denyAll) Remember(context.Context, engine.GateQuery, engine.AnswerScope) error { return nil }

func proposalSession(t *testing.T, answer string, gate engine.Gate) *engine.Session {
	t.Helper()
	body := `{"kz_script":1,"capabilities":["text_completion","structured_output"]}` + "\n" +
		`{"type":"assistant_message","text":"` + answer + `"}` + "\n"
	rt, err := scripted.Parse("scripted", "s.jsonl", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSession(engine.Config{Journal: &journal{}, Mode: engine.ModePatchProposal,
		Patcher: stubPatcher{}, Gate: gate, PatchRetries: -1,
		Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// TestProposalProblemsGoToStderr: a rejected proposal and a failed
// verification end the turn "complete" (exit 0), so the error stream is
// where a person running kz -p learns of them, one line each, naming the
// files and the reason.
func TestProposalProblemsGoToStderr(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, answer string
		gate         engine.Gate
		want         []string
	}{
		{"rejected", "BAD", allowAll{}, []string{
			"kz: patch rejected (invalid): greeting.txt, edit 1: the search lines were not found in the file\n",
			"kz: patch rejected (invalid): other.txt: the file does not exist\n",
		}},
		{"verify failed", "false", allowAll{}, []string{
			"kz: verification failed after applying greeting.txt: `false` exited with 1: FAIL: greeting is wrong\n",
		}},
		{"declined", "true", denyAll{}, []string{
			"kz: patch rejected (declined): greeting.txt: no writes today\n",
		}},
	}
	for _, c := range cases {
		for _, format := range []Format{FormatText, FormatJSON} {
			t.Run(c.name+"/"+string(format), func(t *testing.T) {
				var out, errOut bytes.Buffer
				final, err := Run(context.Background(), proposalSession(t, c.answer, c.gate), "fix", format, &out, &errOut)
				if err != nil || final.Status != string(engine.StatusComplete) {
					t.Fatalf("%v %+v", err, final)
				}
				for _, w := range c.want {
					if !strings.Contains(errOut.String(), w) {
						t.Errorf("stderr %q lacks %q", errOut.String(), w)
					}
				}
				// The model's search lines and nearest lines are for the
				// model, not for the person's terminal.
				if strings.Contains(errOut.String(), "hello moon") {
					t.Errorf("stderr carries the feedback's details: %q", errOut.String())
				}
			})
		}
	}
	t.Run("success says nothing", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if _, err := Run(context.Background(), proposalSession(t, "true", allowAll{}), "fix", FormatText, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if errOut.Len() != 0 {
			t.Fatalf("stderr %q", errOut.String())
		}
	})
}

func TestRejectionLinesAreBounded(t *testing.T) {
	t.Parallel()
	p := &printer{}
	text := "intro\n" + strings.Repeat("- a.txt: "+strings.Repeat("x", 1000)+"\n", maxProblemLines+3)
	got := p.rejection(engine.Event{Type: engine.EventPatchRejected, Reason: "invalid", Text: text})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != maxProblemLines+1 || !strings.HasSuffix(lines[len(lines)-1], "… and 3 more problems") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > maxLineRunes+len("kz: patch rejected (invalid): ") {
			t.Fatalf("line of %d runes", n)
		}
	}
	if got := p.rejection(engine.Event{Type: engine.EventPatchRejected}); got != "kz: patch rejected: no reason given\n" {
		t.Fatalf("%q", got)
	}
}

// TestFailedTurnResultCarriesTheError: the json format prints only the
// final_result, so it must say why the turn failed.
func TestFailedTurnResultCarriesTheError(t *testing.T) {
	t.Parallel()
	body := `{"kz_script":1,"capabilities":["text_completion"]}` + "\n" +
		`{"fail":{"kind":"overloaded","message":"529 overloaded"}}` + "\n"
	var out, errOut bytes.Buffer
	final, err := Run(context.Background(), session(t, body, engine.ModeAnalysisOnly), "hi", FormatJSON, &out, &errOut)
	if err != nil || ExitCode(engine.Status(final.Status)) != ExitError {
		t.Fatalf("%v %+v", err, final)
	}
	var ev engine.Event
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil {
		t.Fatalf("%v %q", err, out.String())
	}
	if ev.Status != "error" || !strings.Contains(ev.Text, "529 overloaded") || ev.ErrorKind != engine.ErrOverloaded {
		t.Fatalf("final_result %s", out.String())
	}
}

// TestJSONReportsATurnThatCannotStart: the json format still prints one
// final_result, with status error and the reason; Run still returns the
// error, so kz exits 1.
func TestJSONReportsATurnThatCannotStart(t *testing.T) {
	t.Parallel()
	textOnly := `{"kz_script":1,"capabilities":["text_completion"]}` + "\n" + `{"type":"assistant_message","text":"x"}` + "\n"
	s := session(t, textOnly, engine.ModeFullAutonomous)
	var out, errOut bytes.Buffer
	_, err := Run(context.Background(), s, "hi", FormatJSON, &out, &errOut)
	var ce *engine.CapabilityError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v", err)
	}
	var ev engine.Event
	if jerr := json.Unmarshal(out.Bytes(), &ev); jerr != nil {
		t.Fatalf("%v %q", jerr, out.String())
	}
	if ev.Type != engine.EventFinalResult || ev.Status != "error" || ev.Text != err.Error() ||
		ev.ErrorKind != engine.ErrCapability || ev.SessionID != s.ID() || ev.Usage == nil {
		t.Fatalf("final_result %s", out.String())
	}
	var b bytes.Buffer
	if err := WriteNotStarted(&b, FormatText, NotStarted("", "", "", err)); err != nil || b.Len() != 0 {
		t.Fatalf("text: %v %q", err, b.String())
	}
	// stream-json prints the same final_result, as its one line.
	if err := WriteNotStarted(&b, FormatStreamJSON, NotStarted("", "", "", err)); err != nil || strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("stream-json: %v %q", err, b.String())
	}
	var sev engine.Event
	if jerr := json.Unmarshal(b.Bytes(), &sev); jerr != nil || sev.Type != engine.EventFinalResult || sev.ErrorKind != engine.ErrCapability {
		t.Fatalf("stream-json: %v %q", jerr, b.String())
	}
	if err := WriteNotStarted(failWriter{}, FormatJSON, NotStarted("", "", "", err)); err == nil {
		t.Fatal("a failed write was not reported")
	}
}

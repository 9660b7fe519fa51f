package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools/hooks"
)

// stopRunner is a hook runner with one Stop hook, command.
func stopRunner(t *testing.T, ws, command string) *hooks.Runner {
	t.Helper()
	r, err := hooks.New(hooks.Options{Workspace: ws, User: hooks.Config{"Stop": {{Hooks: []hooks.Command{{Command: command}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hookNotices(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == engine.EventNotice && ev.Stage == engine.StageHook {
			out = append(out, ev.Text)
		}
	}
	return out
}

// A Stop hook that blocks the end of the turn sends the model back to
// work with the hook's reason as a user-side message, on every provider;
// the hook's second call says stop_hook_active, and it then lets the
// turn end.
func TestStopHookBlockContinuesTheTurn(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc, llmtest.Reply{Text: "All done."}, llmtest.Reply{Text: "Ran the tests: they pass. Done."})
			rt := nativeFor(t, fake, pc.model, &fsTools{})
			log := filepath.Join(t.TempDir(), "stops")
			// The hook blocks the first time only, as a hook that
			// checks the tests ran would.
			hook := `cat >> ` + log + `; echo >> ` + log + `; [ "$(wc -l < ` + log + `)" -ge 2 ] || echo '{"decision":"block","reason":"run the tests first"}'`
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{pc.model}}}, runtime: "native",
				hooks: stopRunner(t, t.TempDir(), hook)})
			final := h.run("fix it")
			if final.Status != string(engine.StatusComplete) || final.Output != "Ran the tests: they pass. Done." {
				t.Fatalf("final %+v\n%s", final, dump(h.journal.Events()))
			}
			reqs := fake.Requests()
			if len(reqs) != 2 || reqs[0].Contains("run the tests first") || !reqs[1].Contains("run the tests first") || !reqs[1].Contains("All done.") {
				t.Fatalf("%d requests; the second must carry the first answer and the hook's reason", len(reqs))
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], `"stop_hook_active":false`) || !strings.Contains(lines[1], `"stop_hook_active":true`) ||
				!strings.Contains(lines[0], `"hook_event_name":"Stop"`) {
				t.Errorf("stop hook inputs %q", lines)
			}
			if n := hookNotices(h.journal.Events()); len(n) != 1 || !strings.Contains(n[0], "run the tests first") || !strings.Contains(n[0], "continuation 1") {
				t.Errorf("notices %q", n)
			}
		})
	}
}

// What a blocking Stop hook told the model stays in the conversation: the
// next turn's request (which the native runtime builds from kz's
// transcript, as any runtime a switch hands the session to does) carries
// the feedback between the two replies of the continued turn, on the
// user side.
func TestStopHookFeedbackStaysInTheConversation(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			fake := newFake(t, pc, llmtest.Reply{Text: "All done."}, llmtest.Reply{Text: "Tests pass. Done."}, llmtest.Reply{Text: "Nothing else."})
			rt := nativeFor(t, fake, pc.model, &fsTools{})
			log := filepath.Join(t.TempDir(), "stops")
			hook := `cat >> ` + log + `; echo >> ` + log + `; [ "$(wc -l < ` + log + `)" -ge 2 ] || echo '{"decision":"block","reason":"run the tests first"}'`
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{pc.model}}}, runtime: "native",
				hooks: stopRunner(t, t.TempDir(), hook)})
			if final := h.run("fix it"); final.Output != "Tests pass. Done." {
				t.Fatalf("first turn %+v", final)
			}
			if final := h.run("anything else?"); final.Output != "Nothing else." {
				t.Fatalf("second turn %+v", final)
			}
			reqs := fake.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			raw := string(reqs[2].Raw)
			first, told, second := strings.Index(raw, "All done."), strings.Index(raw, "Stop hook feedback"), strings.Index(raw, "Tests pass. Done.")
			if first < 0 || told < 0 || second < 0 || !(first < told && told < second) || !reqs[2].Contains("run the tests first") {
				t.Errorf("the next turn's history lacks the hook's feedback between the two replies: %s", raw)
			}
		})
	}
}

// A Stop hook that always blocks continues the turn at most
// engine.MaxStopContinuations times; the turn then ends complete with a
// notice that says why.
func TestStopHookContinuationsAreBounded(t *testing.T) {
	t.Parallel()
	replies := make([]llmtest.Reply, engine.MaxStopContinuations+2)
	for i := range replies {
		replies[i] = llmtest.Reply{Text: "done " + string(rune('a'+i))}
	}
	fake := llmtest.New(t, cases[0].p, replies...)
	rt := nativeFor(t, fake, cases[0].model, &fsTools{})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native",
		hooks: stopRunner(t, t.TempDir(), `echo never done >&2; exit 2`)})
	final := h.run("go")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	if n := len(fake.Requests()); n != engine.MaxStopContinuations+1 {
		t.Errorf("%d model requests, want %d", n, engine.MaxStopContinuations+1)
	}
	if fake.Pending() != 1 {
		t.Errorf("%d replies left, want 1", fake.Pending())
	}
	n := hookNotices(h.journal.Events())
	if len(n) != engine.MaxStopContinuations+1 || !strings.Contains(n[len(n)-1], "after 3 continuations the turn ends") {
		t.Errorf("notices %q", n)
	}
}

// A turn whose model call fails ends without running the Stop hooks:
// they are asked only when the agent itself ends its turn.
func TestStopHookNotRunWhenTheTurnFails(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, cases[0].p, llmtest.Reply{Status: 400, ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`})
	rt := nativeFor(t, fake, cases[0].model, &fsTools{})
	mark := filepath.Join(t.TempDir(), "ran")
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native",
		hooks: stopRunner(t, t.TempDir(), "touch "+mark)})
	if final := h.run("go"); final.Status != string(engine.StatusError) {
		t.Fatalf("final %+v", final)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the Stop hook ran for a failed turn")
	}
}

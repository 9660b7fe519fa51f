package native

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
)

// TestEndToEndWebFetch drives web_fetch through the native loop, the real
// Executor, the real permission gate and a real session, against every
// provider's fake API and a page server on 127.0.0.1. Loopback is reached
// only because a rule names 127.0.0.1; without it the person's yes is not
// enough and the model hears why.
func TestEndToEndWebFetch(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Release notes</title></head><body><h1>Release 2.0</h1><p>The frobnicator now <b>reloads</b> on SIGHUP.</p></body></html>`))
	}))
	t.Cleanup(page.Close)
	for _, withRule := range []bool{true, false} {
		for _, pc := range cases {
			name := pc.name() + "/no rule"
			if withRule {
				name = pc.name() + "/rule for 127.0.0.1"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				args := `{"url":"` + page.URL + `/notes"}`
				fake := newFake(t, pc,
					llmtest.Reply{Calls: []llmtest.Call{{ID: "f1", Name: "web_fetch", Args: args}}},
					llmtest.Reply{Text: "Done."},
				)
				var rules permission.Rules
				if withRule {
					rules.Allow = []string{"WebFetch(domain:127.0.0.1)"}
				}
				gate, err := permission.New(permission.Options{User: rules, Home: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				et := PerSessionTools(tools.NewBuiltinRegistry(), &memSnapshots{}, nil, nil)
				et.FetchPolicy = gate
				rt := mustNative(t, Config{LLM: fake.Config(), Models: []string{pc.model}, Tools: et})
				// The person answers yes to every question.
				h := clitest.NewHarness(t, t.TempDir(), []engine.RuntimeEntry{{Runtime: rt}},
					clitest.Options{Gate: gate, Mode: engine.ModeAnalysisOnly, Answer: clitest.AllowOnce})
				journal := h.Journal
				final, err := h.Session.RunTurn(context.Background(), "what changed in 2.0?")
				if err != nil || final.Status != "complete" {
					t.Fatalf("turn: %v %+v\n%s", err, final, dump(journal.Events()))
				}
				if !fake.Requests()[0].Contains(`"web_fetch"`) {
					t.Errorf("web_fetch was not offered in analysis-only mode: %s", fake.Requests()[0].Raw)
				}
				fin := journal.OfType(engine.EventToolCallFinished)
				if len(fin) != 1 {
					t.Fatalf("tool_call_finished: %d\n%s", len(fin), dump(journal.Events()))
				}
				back := fake.Requests()[1]
				if withRule {
					if fin[0].IsError || !strings.Contains(fin[0].Output, "UNTRUSTED WEB CONTENT") ||
						!strings.Contains(fin[0].Output, "The frobnicator now **reloads** on SIGHUP.") {
						t.Errorf("result: %s", fin[0].Output)
					}
					if !back.Contains("UNTRUSTED WEB CONTENT") || !back.Contains("reloads") {
						t.Errorf("the page was not sent back to the model: %s", back.Raw)
					}
					if n := len(journal.OfType(engine.EventPermissionRequested)); n != 0 {
						t.Errorf("the rule did not spare the question: %d asks", n)
					}
					return
				}
				if !fin[0].IsError || !strings.Contains(fin[0].Output, "refused to connect to 127.0.0.1") {
					t.Errorf("result: %s", fin[0].Output)
				}
				if !back.Contains("WebFetch(domain:127.0.0.1)") || back.Contains("reloads") {
					t.Errorf("the model did not hear how to allow it, or got the page: %s", back.Raw)
				}
				if n := len(journal.OfType(engine.EventPermissionRequested)); n != 1 {
					t.Errorf("want one question (the default asks), got %d", n)
				}
			})
		}
	}
}

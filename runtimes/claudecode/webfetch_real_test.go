package claudecode

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/permission"
)

// Claude Code lets its WebFetch reach some documentation hosts without
// asking its permission tool. Under kz every fetch, to such a host too,
// must reach kz's gate (kz's PreToolUse hook answers "ask" for every
// call), so that the person's rules and answers decide: here the person
// denies each one, and the model hears the denial.
func TestRealWebFetchOfAnyHostPassesKzGate(t *testing.T) {
	urls := map[string]string{
		"KZ:docs":    "https://docs.anthropic.com/en/docs/claude-code/overview",
		"KZ:golang":  "https://go.dev/doc/",
		"KZ:example": "https://example.com/",
	}
	api := newFakeAPI(t, func(r *apiRequest) fakeReply {
		if res, ok := r.toolResult(); ok {
			return fakeReply{Text: "result: " + contentText(res.Content)}
		}
		for marker, u := range urls {
			if strings.Contains(r.lastUserText(), marker) {
				return fakeReply{Tools: []fakeTool{{ID: "toolu_" + strings.TrimPrefix(marker, "KZ:"), Name: "WebFetch",
					Input: map[string]string{"url": u, "prompt": "summarise"}}}}
			}
		}
		return fakeReply{Text: "nothing scripted"}
	})
	rt, _ := realSetup(t, api)
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{}), Answer: clitest.DenyOnce})
	for marker, u := range urls {
		before := len(h.Journal.OfType(engine.EventPermissionRequested))
		final := h.Run(t, context.Background(), marker)
		asked := h.Journal.OfType(engine.EventPermissionRequested)[before:]
		if len(asked) != 1 || asked[0].Tool != "WebFetch" || !strings.Contains(string(asked[0].Input), u) {
			t.Errorf("%s: the fetch of %s did not reach kz's gate: asked %+v, final %+v", marker, u, asked, final)
		}
		// The CLI never fetched: the result is kz's denial, not the
		// CLI's own domain check (which runs only once a call is allowed).
		res := lastToolResult(t, api)
		if got := contentText(res.Content); !res.IsError || strings.Contains(got, "Unable to verify") {
			t.Errorf("%s: the denied fetch's result: %+v", marker, res)
		}
	}
}

package native

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// fakeSecret stands for a credential a tool call carried; redactSecret is
// the session's redaction in these tests.
const fakeSecret = "sk-live-0123456789abcdef"

func redactSecret(s string) string { return strings.ReplaceAll(s, fakeSecret, "[REDACTED]") }

// TestFailoverCarriesTheTurnSoFar is the case, native to native on
// every provider: the first runtime edits a file, then its API answers 529
// until kz fails over. The runtime taking over gets, in its first request,
// the request, the edit call with its result and its decision, redacted,
// and is asked to continue; the edit is not run again, and
// runtime_switched says what was carried.
func TestFailoverCarriesTheTurnSoFar(t *testing.T) {
	t.Parallel()
	for _, pc := range cases {
		t.Run(pc.name(), func(t *testing.T) {
			args := `{"path":"a.txt","old":"alpha","new":"beta ` + fakeSecret + `"}`
			failing := newFake(t, pc,
				llmtest.Reply{Text: "I'll edit a.txt.", Calls: []llmtest.Call{{ID: "t1", Name: "edit_file", Args: args}}},
				llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529})
			backup := newFake(t, pc, llmtest.Reply{Text: "a.txt is done."})
			tools := &fsTools{}
			a := nativeFor(t, failing, pc.model, tools, func(c *Config) { c.Name = "primary" })
			b := nativeFor(t, backup, pc.model, tools, func(c *Config) { c.Name = "backup" })
			h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: a}, {Runtime: b}}, runtime: "primary",
				failover: []engine.ChainLink{{Runtime: "backup"}}, tools: tools, redact: redactSecret})
			h.write("a.txt", "alpha")
			final := h.run("change alpha in a.txt")
			if final.Status != "complete" || final.Output != "a.txt is done." {
				t.Fatalf("final %s %q\n%s", final.Status, final.Output, dump(h.journal.Events()))
			}
			if ex := tools.Executed(); len(ex) != 1 || ex[0] != "edit_file:a.txt" {
				t.Fatalf("executed %v, want the edit once", ex)
			}
			reqs := backup.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests to the backup", len(reqs))
			}
			first := reqs[0]
			for _, want := range []string{"change alpha in a.txt", "I'll edit a.txt.", "edit_file", "t1", "edited a.txt",
				"permission allow", "do not run them again", "[REDACTED]"} {
				if !first.Contains(want) && !first.Contains(jsonEscaped(want)) {
					t.Errorf("the backup's first request lacks %q:\n%s", want, first.Raw)
				}
			}
			if first.Contains(fakeSecret) {
				t.Errorf("the secret reached the backup:\n%s", first.Raw)
			}
			sw := h.journal.OfType(engine.EventRuntimeSwitched)
			if len(sw) != 1 || !strings.Contains(sw[0].Text, "carried") || !strings.Contains(sw[0].Text, "1 tool call") || !strings.Contains(sw[0].Text, "edit_file") {
				t.Fatalf("runtime_switched = %+v", sw)
			}
		})
	}
}

// TestFailoverBeforeAnyWorkCarriesOnlyTheRequest: a runtime that fails
// before doing anything hands over the request as it was.
func TestFailoverBeforeAnyWorkCarriesOnlyTheRequest(t *testing.T) {
	t.Parallel()
	pc := cases[0]
	failing := newFake(t, pc, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529})
	backup := newFake(t, pc, llmtest.Reply{Text: "ok"})
	a := nativeFor(t, failing, pc.model, nil, func(c *Config) { c.Name = "primary" })
	b := nativeFor(t, backup, pc.model, nil, func(c *Config) { c.Name = "backup" })
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: a}, {Runtime: b}}, runtime: "primary",
		mode: engine.ModeAnalysisOnly, failover: []engine.ChainLink{{Runtime: "backup"}}})
	if final := h.run("hello there"); final.Status != "complete" {
		t.Fatalf("final %+v", final)
	}
	first := backup.Requests()[0]
	if !first.Contains("hello there") || first.Contains("[kz]") {
		t.Fatalf("the backup's request is not the plain request:\n%s", first.Raw)
	}
	if sw := h.journal.OfType(engine.EventRuntimeSwitched); len(sw) != 1 || !strings.Contains(sw[0].Text, "nothing had been done") {
		t.Fatalf("runtime_switched = %+v", sw)
	}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

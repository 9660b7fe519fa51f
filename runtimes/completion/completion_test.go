package completion

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
		err            bool
	}{
		{"plain", `{"summary":"x","edits":[]}`, `{"summary":"x","edits":[]}`, false},
		{"fenced", "Here is the patch:\n```json\n{\"summary\": \"fix\"}\n```\nThanks.", `{"summary":"fix"}`, false},
		{"fence without tag", "```\n{\"a\": 1}\n```", `{"a":1}`, false},
		{"prose around", `Sure! {"a": {"b": "}"}} hope it helps`, `{"a":{"b":"}"}}`, false},
		{"trailing comma", `{"a": [1, 2,], "b": 3,}`, `{"a":[1,2],"b":3}`, false},
		{"truncated", `{"summary": "fix the bug", "edits": [{"path": "a.go", "search": "x`, `{"summary":"fix the bug","edits":[{"path":"a.go","search":"x"}]}`, false},
		{"no json", "I cannot do that.", "", true},
		{"array only", `[1,2]`, "", true},
		{"hopeless", `{"a": nope nope}`, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractJSON(tc.in)
			if tc.err {
				if err == nil || !errors.Is(err, ErrNoJSON) {
					t.Fatalf("want ErrNoJSON, got %s, %v", got, err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

var schema = json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"},"edits":{"type":"array"}},"required":["summary","edits"]}`)

type host struct {
	mu     sync.Mutex
	events []engine.Event
}

func (h *host) Emit(ev engine.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

func (h *host) StartCycle() error { return nil }

func (h *host) of(t engine.EventType) []engine.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []engine.Event
	for _, e := range h.events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func newRT(t *testing.T, s *llmtest.Server, model string) *Runtime {
	rt, err := New(Config{LLM: s.Config(), Models: []string{model}, ProposalSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestPatchProposalUsesJSONSchemaMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p     llm.Provider
		api   llm.OpenAIAPI
		model string
		field string
	}{
		{llm.ProviderAnthropic, "", "claude-sonnet-4-5", "output_config"},
		{llm.ProviderOpenAI, "", "gpt-4.1", "response_format"},
		{llm.ProviderOpenAI, llm.OpenAIResponses, "gpt-4.1", "text"},
		{llm.ProviderGemini, "", "gemini-2.5-pro", "generationConfig"},
	}
	for _, tc := range cases {
		t.Run(string(tc.p)+string(tc.api), func(t *testing.T) {
			fake := llmtest.New(t, tc.p, llmtest.Reply{Text: `{"summary":"rename","edits":[{"path":"a.go"}]}`, Usage: engine.Usage{InputTokens: 10, OutputTokens: 5}})
			fake.API = tc.api
			rt := newRT(t, fake, tc.model)
			if !rt.Capabilities("").Has(engine.CapStructuredOutput) {
				t.Fatal("structured_output missing")
			}
			h := &host{}
			res, err := rt.run(context.Background(), &engine.Turn{Prompt: "rename x", Mode: engine.ModePatchProposal}, h)
			if err != nil || res.Output != `{"summary":"rename","edits":[{"path":"a.go"}]}` {
				t.Fatalf("res %+v err %v", res, err)
			}
			req := fake.Requests()[0]
			if req.Body[tc.field] == nil || !req.Contains(`"required":["summary","edits"]`) {
				t.Errorf("schema mode not requested: %s", req.Raw)
			}
			if tc.p == llm.ProviderGemini && !req.Contains("responseJsonSchema") {
				t.Errorf("gemini request lacks responseJsonSchema: %s", req.Raw)
			}
			if len(h.of(engine.EventTextDelta)) != 0 {
				t.Error("raw proposal JSON was streamed as text")
			}
			if len(h.of(engine.EventUsageUpdated)) != 1 {
				t.Error("no usage_updated")
			}
		})
	}
}

func TestPatchProposalWithoutSchemaModeExtracts(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderOpenAI,
		llmtest.Reply{Text: "Here you go:\n```json\n{\"summary\": \"s\", \"edits\": [],}\n```"},
		llmtest.Reply{Text: "Sorry, I would rather explain it in words."},
		llmtest.Reply{Text: `{"summary": "only"}`})
	rt := newRT(t, fake, "gemma2")
	if rt.Capabilities("").Has(engine.CapStructuredOutput) {
		t.Fatal("gemma2 has no JSON-schema mode")
	}
	turn := &engine.Turn{Prompt: "fix", Mode: engine.ModePatchProposal}
	res, err := rt.run(context.Background(), turn, &host{})
	if err != nil || res.Output != `{"summary":"s","edits":[]}` {
		t.Fatalf("res %+v err %v", res, err)
	}
	first := fake.Requests()[0]
	if first.Body["response_format"] != nil || !first.Contains("follows this JSON schema") {
		t.Errorf("prompted format expected: %s", first.Raw)
	}
	for _, want := range []string{"no JSON object", "lacks required field(s) edits"} {
		_, err = rt.run(context.Background(), turn, &host{})
		if engine.KindOf(err) != engine.ErrProtocol || !strings.Contains(err.Error(), want) {
			t.Errorf("want protocol error with %q, got %v", want, err)
		}
	}
}

func TestAnalysisStreamsTextWithHistory(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.ProviderGemini, llmtest.Reply{Text: "It parses flags and starts the loop."})
	rt := newRT(t, fake, "gemini-2.5-flash")
	h := &host{}
	hist := []engine.TranscriptEntry{{Kind: engine.EntryUser, Text: "earlier question"}, {Kind: engine.EntryAssistant, Text: "earlier answer"}}
	res, err := rt.run(context.Background(), &engine.Turn{Prompt: "what does main do?", Mode: engine.ModeAnalysisOnly, History: hist}, h)
	if err != nil || res.Output != "It parses flags and starts the loop." {
		t.Fatalf("res %+v err %v", res, err)
	}
	var text strings.Builder
	for _, ev := range h.of(engine.EventTextDelta) {
		text.WriteString(ev.Text)
	}
	if text.String() != res.Output || len(h.of(engine.EventAssistantMessage)) != 1 {
		t.Errorf("deltas %q", text.String())
	}
	if req := fake.Requests()[0]; !req.Contains("earlier question") || !req.Contains("earlier answer") || req.Body["tools"] != nil {
		t.Errorf("request: %s", req.Raw)
	}
}

func TestRealPatchSchemaAndTextFormat(t *testing.T) {
	t.Parallel()
	proposal := `{"summary":"rename x","files":[{"path":"a.go","operation":"modify","new_path":null,"base_sha256":null,` +
		`"edits":[{"search":"x := 1","replace":"y := 1","line_hint":3}],"content":null}],"verification":["go test ./..."],"risks":[]}`
	fake := llmtest.New(t, llm.ProviderOpenAI, llmtest.Reply{Text: proposal},
		llmtest.Reply{Text: "SUMMARY: rename x\n\na.go\n<<<<<<< SEARCH\nx := 1\n=======\ny := 1\n>>>>>>> REPLACE\n"})
	mk := func(model string) *Runtime {
		rt, err := New(Config{LLM: fake.Config(), Models: []string{model}, ProposalSchema: json.RawMessage(patch.JSONSchema()), ProposalPrompt: patch.PromptText()})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	turn := &engine.Turn{Prompt: "rename x to y", Mode: engine.ModePatchProposal}
	res, err := mk("gpt-4.1").run(context.Background(), turn, &host{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := patch.ParseJSON([]byte(res.Output))
	if err != nil || len(p.Files) != 1 || p.Files[0].Edits[0].Replace != "y := 1" {
		t.Fatalf("proposal %+v err %v", p, err)
	}
	if !fake.Requests()[0].Contains(`"strict":true`) {
		t.Errorf("closed schema not sent in strict mode: %s", fake.Requests()[0].Raw)
	}
	// A model without JSON-schema mode gets patch's text format and its
	// answer verbatim, for patch.Parse.
	res, err = mk("gemma2").run(context.Background(), turn, &host{})
	if err != nil || !strings.Contains(res.Output, "<<<<<<< SEARCH") {
		t.Fatalf("text format: %q %v", res.Output, err)
	}
	if second := fake.Requests()[1]; second.Body["response_format"] != nil || !second.Contains("SEARCH") {
		t.Errorf("text-format request: %s", second.Raw)
	}
}

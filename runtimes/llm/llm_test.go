package llm_test

import (
	"context"
	"errors"
	"log"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var providers = []llm.Provider{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderGemini}

func newClient(t *testing.T, s *llmtest.Server) llm.Client {
	t.Helper()
	c, err := llm.New(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func simpleReq() llm.Request {
	return llm.Request{Model: "m", System: "sys", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}},
		Tools: []llm.ToolDef{{Name: "read_file", Description: "read", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}}
}

func TestStreamTextReasoningAndParallelCalls(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.New(t, p, llmtest.Reply{
				Text: "Reading both files now.", Reasoning: "think first",
				Calls: []llmtest.Call{{ID: "c1", Name: "read_file", Args: `{"path":"a.go"}`}, {ID: "c2", Name: "read_file", Args: `{"path":"b.go"}`}},
				Usage: engine.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50},
			})
			var text, reason strings.Builder
			resp, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(d llm.Delta) {
				if d.Kind == llm.DeltaText {
					text.WriteString(d.Text)
				} else {
					reason.WriteString(d.Text)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if text.String() != "Reading both files now." || resp.Text != text.String() {
				t.Errorf("text deltas %q, response %q", text.String(), resp.Text)
			}
			if reason.String() != "think first" {
				t.Errorf("reasoning %q", reason.String())
			}
			if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "read_file" || string(resp.ToolCalls[1].Args) != `{"path":"b.go"}` {
				t.Fatalf("tool calls %+v", resp.ToolCalls)
			}
			if resp.ToolCalls[0].ID == "" || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
				t.Errorf("tool call ids %q %q", resp.ToolCalls[0].ID, resp.ToolCalls[1].ID)
			}
			if resp.Stop != llm.StopToolUse {
				t.Errorf("stop %q", resp.Stop)
			}
			want := engine.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50}
			if resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
			req := s.Requests()[0]
			if !req.Contains(`"read_file"`) || !req.Contains(`"sys"`) || !req.Contains(`"hi"`) {
				t.Errorf("request lacks tools/system/prompt: %s", req.Raw)
			}
			if got := req.Header.Get("X-Api-Key") + req.Header.Get("Authorization") + req.Header.Get("X-Goog-Api-Key"); !strings.Contains(got, "test-key") {
				t.Errorf("api key not sent from the configured variable: %q", got)
			}
		})
	}
}

func TestAnthropicPromptCaching(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Text: "ok"})
	if _, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {}); err != nil {
		t.Fatal(err)
	}
	b := s.Requests()[0].Body
	sys := b["system"].([]any)[0].(map[string]any)
	tools := b["tools"].([]any)
	last := tools[len(tools)-1].(map[string]any)
	if sys["cache_control"] == nil || last["cache_control"] == nil {
		t.Fatalf("cache_control missing on system or last tool: %s", s.Requests()[0].Raw)
	}
}

func TestInvalidArgsArePassedThrough(t *testing.T) {
	t.Parallel()
	for _, p := range []llm.Provider{llm.ProviderAnthropic, llm.ProviderOpenAI} {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.New(t, p, llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "edit", Args: `{"path":"a.go","old":"x`}}})
			resp, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ValidArgs() {
				t.Fatalf("want one call with invalid args, got %+v", resp.ToolCalls)
			}
			if string(resp.ToolCalls[0].ArgsOrEmpty()) != "{}" {
				t.Error("ArgsOrEmpty of invalid args is not {}")
			}
		})
	}
}

func TestErrorsAreClassifiedAndRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     llmtest.Reply
		kind      engine.ErrorKind
		attempts  int
		retryHint time.Duration
	}{
		{"429 retry-after", llmtest.Reply{Status: 429, RetryAfter: "0.01"}, engine.ErrRateLimit, 3, 10 * time.Millisecond},
		{"500", llmtest.Reply{Status: 500}, engine.ErrOverloaded, 3, 0},
		{"529 overloaded", llmtest.Reply{Status: 529}, engine.ErrOverloaded, 3, 0},
		{"dropped before events", llmtest.Reply{DropBeforeEvents: true}, engine.ErrCrashed, 3, 0},
		{"401", llmtest.Reply{Status: 401}, engine.ErrAuth, 1, 0},
		{"400 bad request", llmtest.Reply{Status: 400}, engine.ErrBadRequest, 1, 0},
		{"400 context too long", llmtest.Reply{Status: 400, ErrorBody: `{"error":{"code":400,"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum","status":"INVALID_ARGUMENT"}}`}, engine.ErrContextTooLong, 1, 0},
	}
	for _, p := range providers {
		for _, tc := range cases {
			t.Run(string(p)+"/"+tc.name, func(t *testing.T) {
				s := llmtest.New(t, p, tc.reply, tc.reply, tc.reply)
				_, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
				var re *engine.RuntimeError
				if !errors.As(err, &re) {
					t.Fatalf("want *engine.RuntimeError, got %T %v", err, err)
				}
				if re.Kind != tc.kind {
					t.Fatalf("kind %s, want %s (%v)", re.Kind, tc.kind, err)
				}
				if n := len(s.Requests()); n != tc.attempts {
					t.Errorf("%d attempts, want %d", n, tc.attempts)
				}
				if re.RetryAfter != tc.retryHint {
					t.Errorf("retry after %v, want %v", re.RetryAfter, tc.retryHint)
				}
				if tc.kind == engine.ErrAuth && !strings.Contains(err.Error(), "KZ_TEST_KEY") {
					t.Errorf("auth error does not name the env var: %v", err)
				}
			})
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.New(t, p, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 429, RetryAfter: "0"}, llmtest.Reply{Text: "fine"})
			resp, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
			if err != nil || resp.Text != "fine" {
				t.Fatalf("resp %q err %v", resp.Text, err)
			}
		})
	}
}

func TestDroppedMidStreamIsNotRetried(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.New(t, p, llmtest.Reply{Text: "one two three", DropAfterFirst: true}, llmtest.Reply{Text: "again"})
			var got strings.Builder
			_, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(d llm.Delta) { got.WriteString(d.Text) })
			if engine.KindOf(err) != engine.ErrCrashed || !engine.KindOf(err).Retryable() {
				t.Fatalf("want retryable crashed error, got %v", err)
			}
			if len(s.Requests()) != 1 || got.String() != "one " {
				t.Errorf("requests %d, streamed %q: a stream that already delivered text must not be replayed", len(s.Requests()), got.String())
			}
		})
	}
}

func TestLongRetryAfterFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Status: 429, RetryAfter: "120"})
	start := time.Now()
	_, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
	var re *engine.RuntimeError
	if !errors.As(err, &re) || re.Kind != engine.ErrRateLimit || re.RetryAfter != 120*time.Second {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 5*time.Second || len(s.Requests()) != 1 {
		t.Errorf("waited for a retry-after beyond the policy's bound")
	}
}

func TestDeadEndpointFailsFast(t *testing.T) {
	t.Parallel()
	cfg := llmtest.New(t, llm.ProviderOpenAI).Config()
	cfg.BaseURL = "http://127.0.0.1:1"
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Stream(context.Background(), simpleReq(), func(llm.Delta) {})
	if engine.KindOf(err) != engine.ErrRuntimeMissing {
		t.Fatalf("want runtime_missing, got %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("dead endpoint took %v", time.Since(start))
	}
}

func TestMissingKey(t *testing.T) {
	cfg := llm.Config{Provider: llm.ProviderAnthropic, APIKeyEnv: "KZ_NO_SUCH_KEY", LookupEnv: func(string) (string, bool) { return "", false }}
	_, err := llm.New(cfg)
	if engine.KindOf(err) != engine.ErrAuth || !strings.Contains(err.Error(), "KZ_NO_SUCH_KEY") {
		t.Fatalf("got %v", err)
	}
	if cfg.Check() == nil {
		t.Error("Check accepted a missing key")
	}
	// A local OpenAI-compatible server needs no key, and none is sent.
	s := llmtest.New(t, llm.ProviderOpenAI, llmtest.Reply{Text: "local"})
	local := llm.Config{Provider: llm.ProviderOpenAI, BaseURL: s.URL, LookupEnv: func(string) (string, bool) { return "", false }}
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	c, err := llm.New(local)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), simpleReq(), func(llm.Delta) {}); err != nil {
		t.Fatal(err)
	}
	if a := s.Requests()[0].Header.Get("Authorization"); strings.Contains(a, "sk-must-not-leak") {
		t.Errorf("the OpenAI key from the environment reached a custom base URL: %q", a)
	}
}

func TestCancelStopsAtOnce(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderAnthropic, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529})
	cfg := s.Config()
	cfg.Retry.BaseDelay = time.Hour
	cfg.Retry.MaxDelay = time.Hour
	c, _ := llm.New(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Stream(ctx, simpleReq(), func(llm.Delta) {})
	if engine.KindOf(err) != engine.ErrInterrupted || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestResponsesAPI(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderOpenAI, llmtest.Reply{
		Text: "Two reads.", Reasoning: "plan",
		Calls: []llmtest.Call{{ID: "call_a", Name: "read_file", Args: `{"path":"a"}`}, {ID: "call_b", Name: "read_file", Args: `{"path":"b"}`}},
		Usage: engine.Usage{InputTokens: 40, OutputTokens: 9, CacheReadTokens: 10},
	}, llmtest.Reply{StreamError: "server_error"}, llmtest.Reply{StreamError: "server_error"}, llmtest.Reply{StreamError: "server_error"})
	s.API = llm.OpenAIResponses
	c := newClient(t, s)
	var reason string
	resp, err := c.Stream(context.Background(), simpleReq(), func(d llm.Delta) {
		if d.Kind == llm.DeltaReasoning {
			reason += d.Text
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Two reads." || reason != "plan" || len(resp.ToolCalls) != 2 || resp.ToolCalls[1].ID != "call_b" || string(resp.ToolCalls[0].Args) != `{"path":"a"}` {
		t.Fatalf("response %+v", resp)
	}
	if resp.Usage != (engine.Usage{InputTokens: 40, OutputTokens: 9, CacheReadTokens: 10}) || resp.Stop != llm.StopToolUse {
		t.Errorf("usage %+v stop %s", resp.Usage, resp.Stop)
	}
	req := s.Requests()[0]
	if req.Path != "/responses" || req.Body["instructions"] != "sys" || req.Body["store"] != false {
		t.Errorf("request %s %s", req.Path, req.Raw)
	}
	// A history with tool calls and results goes out as function_call and
	// function_call_output items.
	req2 := simpleReq()
	req2.Messages = append(req2.Messages, resp.Message(), llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
		{CallID: "call_a", Name: "read_file", Content: "A"}, {CallID: "call_b", Name: "read_file", Content: "B", IsError: true}}})
	_, err = c.Stream(context.Background(), req2, func(llm.Delta) {})
	if engine.KindOf(err) != engine.ErrOverloaded || len(s.Requests()) != 4 {
		t.Fatalf("response.failed: %v after %d requests", err, len(s.Requests()))
	}
	second := s.Requests()[1]
	for _, want := range []string{`"type":"function_call"`, `"call_id":"call_b"`, `"type":"function_call_output"`, `"output":"Error: B"`} {
		if !second.Contains(want) {
			t.Errorf("second request lacks %s: %s", want, second.Raw)
		}
	}
}

func TestReachable(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderAnthropic)
	if err := s.Config().Reachable(context.Background()); err != nil {
		t.Errorf("live fake: %v", err)
	}
	dead := s.Config()
	dead.BaseURL = "http://127.0.0.1:1"
	if err := dead.Reachable(context.Background()); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("dead endpoint: %v", err)
	}
	dead.BaseURL = "::not a url"
	if err := dead.Reachable(context.Background()); err == nil {
		t.Error("bad URL accepted")
	}
}

func TestSDKLogsDoNotReachStderr(t *testing.T) {
	if _, err := llm.New(llmtest.New(t, llm.ProviderGemini).Config()); err != nil {
		t.Fatal(err)
	}
	if log.Writer() == os.Stderr {
		t.Fatal("the standard logger, which genai writes to, still points at stderr")
	}
}

func TestAnthropicErrorEventInStream(t *testing.T) {
	t.Parallel()
	bad := llmtest.Reply{StreamError: "overloaded_error"}
	s := llmtest.New(t, llm.ProviderAnthropic, bad, bad, llmtest.Reply{Text: "recovered"})
	resp, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
	if err != nil || resp.Text != "recovered" || len(s.Requests()) != 3 {
		t.Fatalf("resp %q err %v after %d requests", resp.Text, err, len(s.Requests()))
	}
	s.Push(bad, bad, bad)
	_, err = newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
	if engine.KindOf(err) != engine.ErrOverloaded {
		t.Fatalf("got %v", err)
	}
}

func TestGeminiThoughtSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderGemini, llmtest.Reply{Calls: []llmtest.Call{{Name: "read_file", Args: `{"path":"a"}`, Signature: []byte("opaque-sig")}}}, llmtest.Reply{Text: "ok"})
	c := newClient(t, s)
	resp, err := c.Stream(context.Background(), simpleReq(), func(llm.Delta) {})
	if err != nil || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Signature) != "opaque-sig" || resp.ToolCalls[0].ID == "" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	req := simpleReq()
	req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: resp.ToolCalls[0].ID, Name: "read_file", Content: "A"}}})
	if _, err := c.Stream(context.Background(), req, func(llm.Delta) {}); err != nil {
		t.Fatal(err)
	}
	second := s.Requests()[1]
	if !second.Contains(`"thoughtSignature":"b3BhcXVlLXNpZw=="`) || !second.Contains(`"functionResponse"`) || !second.Contains(`"output":"A"`) {
		t.Errorf("second request: %s", second.Raw)
	}
}

// TestRetryAfterIsHonoured: the wait before the retry comes from the
// provider's retry-after header, not from the (here 1 ms) backoff.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			s := llmtest.New(t, p, llmtest.Reply{Status: 429, RetryAfter: "0.3"}, llmtest.Reply{Text: "after the wait"})
			start := time.Now()
			resp, err := newClient(t, s).Stream(context.Background(), simpleReq(), func(llm.Delta) {})
			if err != nil || resp.Text != "after the wait" {
				t.Fatalf("resp %q err %v", resp.Text, err)
			}
			if d := time.Since(start); d < 300*time.Millisecond {
				t.Errorf("retried after %v, before the 300ms retry-after", d)
			}
			if len(s.Requests()) != 2 {
				t.Errorf("%d requests", len(s.Requests()))
			}
		})
	}
}

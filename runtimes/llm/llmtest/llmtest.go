// Package llmtest is a fake model API for tests: an httptest server on
// 127.0.0.1 that speaks the Anthropic Messages, OpenAI Chat Completions or
// Gemini streamGenerateContent wire format (SSE framing as the real APIs send
// it) and replays scripted replies, recording every request it receives.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
)

// Call is a scripted tool call. Args are sent verbatim, so a test can send
// truncated JSON (Gemini's wire format carries args as an object, so its
// fake needs valid JSON).
type Call struct {
	ID, Name, Args string
	// Signature is sent as Gemini's thoughtSignature on the call's part.
	Signature []byte
}

// Reply is one scripted response.
type Reply struct {
	Text      string
	Reasoning string
	Calls     []Call
	Usage     engine.Usage
	// Deltas, when set, are the text pieces streamed instead of Text split
	// at spaces.
	Deltas []string
	// Status, when non-zero and not 200, makes the reply an HTTP error with
	// ErrorBody (or a provider-shaped default body) and RetryAfter.
	Status     int
	ErrorBody  string
	RetryAfter string
	// DropAfterFirst cuts the connection after the first text delta;
	// DropBeforeEvents cuts it right after the response headers.
	DropAfterFirst   bool
	DropBeforeEvents bool
	// HoldAfterFirst stops writing after the first text delta until the
	// client goes away (or 5 seconds pass), for cancellation tests.
	HoldAfterFirst bool
	// StreamError sends a provider error event inside a 200 stream
	// (Anthropic's overloaded_error).
	StreamError string
}

// Captured is one request the fake received.
type Captured struct {
	Method string
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Contains reports whether the raw request body contains s.
func (c Captured) Contains(s string) bool { return strings.Contains(string(c.Raw), s) }

// Server is a running fake API.
type Server struct {
	URL      string
	Provider llm.Provider
	// API is the OpenAI API the client should use; Config sets it.
	API llm.OpenAIAPI
	srv *httptest.Server

	mu       sync.Mutex
	replies  []Reply
	requests []Captured
	// Hook, when set, runs after a reply's first delta was flushed and
	// before the rest is written (benchmarks measure latency with it).
	Hook func()
}

// New starts a fake of provider p with the given replies; it is closed when
// the test ends.
func New(t testing.TB, p llm.Provider, replies ...Reply) *Server {
	s := &Server{Provider: p, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Config returns a client configuration for this fake with a test key in
// the named variable and fast retries.
func (s *Server) Config() llm.Config {
	return llm.Config{
		Provider:  s.Provider,
		BaseURL:   s.URL,
		APIKeyEnv: "KZ_TEST_KEY",
		LookupEnv: func(k string) (string, bool) {
			if k == "KZ_TEST_KEY" {
				return "test-key", true
			}
			return "", false
		},
		Retry:     llm.RetryPolicy{MaxAttempts: 3, BaseDelay: 1e6, MaxDelay: 5e6},
		OpenAIAPI: s.API,
	}
}

// Push appends replies.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, r...)
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Captured(nil), s.requests...)
}

// Pending returns how many scripted replies are left.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	c := Captured{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &c.Body)
	s.mu.Lock()
	s.requests = append(s.requests, c)
	var rep Reply
	ok := len(s.replies) > 0
	if ok {
		rep, s.replies = s.replies[0], s.replies[1:]
	}
	hook := s.Hook
	s.mu.Unlock()
	if !ok {
		rep = Reply{Status: 400, ErrorBody: `{"error":{"message":"llmtest: no scripted reply left"}}`}
	}
	if rep.Status != 0 && rep.Status != 200 {
		s.writeError(w, rep)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	fl.Flush()
	if rep.DropBeforeEvents {
		panic(http.ErrAbortHandler)
	}
	e := &emitter{w: w, fl: fl, hook: hook, drop: rep.DropAfterFirst}
	if rep.HoldAfterFirst {
		inner := e.hook
		e.hook = func() {
			if inner != nil {
				inner()
			}
			select {
			case <-r.Context().Done():
				panic(http.ErrAbortHandler)
			case <-time.After(5 * time.Second):
			}
		}
	}
	switch s.Provider {
	case llm.ProviderAnthropic:
		anthropicStream(e, rep)
	case llm.ProviderGemini:
		geminiStream(e, rep)
	default:
		if strings.HasSuffix(r.URL.Path, "/responses") {
			responsesStream(e, rep)
			return
		}
		openaiStream(e, rep)
	}
}

// emitter writes SSE frames and applies the drop and hook options after the
// first text delta.
type emitter struct {
	w     io.Writer
	fl    http.Flusher
	hook  func()
	drop  bool
	texts int
}

func (e *emitter) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if name != "" {
		_, _ = fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	} else {
		_, _ = fmt.Fprintf(e.w, "data: %s\n\n", b)
	}
	e.fl.Flush()
}

func (e *emitter) raw(s string) {
	_, _ = io.WriteString(e.w, s)
	e.fl.Flush()
}

// afterText runs after each text delta was flushed.
func (e *emitter) afterText() {
	e.texts++
	if e.texts != 1 {
		return
	}
	if e.hook != nil {
		e.hook()
	}
	if e.drop {
		panic(http.ErrAbortHandler)
	}
}

func deltas(rep Reply) []string {
	if rep.Deltas != nil {
		return rep.Deltas
	}
	if rep.Text == "" {
		return nil
	}
	return strings.SplitAfter(rep.Text, " ")
}

// splitArgs cuts raw arguments into pieces as the APIs stream them.
func splitArgs(s string) []string {
	var out []string
	for len(s) > 7 {
		out = append(out, s[:7])
		s = s[7:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (s *Server) writeError(w http.ResponseWriter, rep Reply) {
	body := rep.ErrorBody
	if body == "" {
		body = defaultErrorBody(s.Provider, rep.Status)
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.Status)
	_, _ = io.WriteString(w, body)
}

func defaultErrorBody(p llm.Provider, status int) string {
	typ, gstatus := "api_error", "INTERNAL"
	switch status {
	case 401:
		typ, gstatus = "authentication_error", "UNAUTHENTICATED"
	case 403:
		typ, gstatus = "permission_error", "PERMISSION_DENIED"
	case 429:
		typ, gstatus = "rate_limit_error", "RESOURCE_EXHAUSTED"
	case 529, 503:
		typ, gstatus = "overloaded_error", "UNAVAILABLE"
	case 400:
		typ, gstatus = "invalid_request_error", "INVALID_ARGUMENT"
	}
	msg := fmt.Sprintf("fake %d", status)
	switch p {
	case llm.ProviderAnthropic:
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
	case llm.ProviderGemini:
		return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q}}`, status, msg, gstatus)
	default:
		return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":null}}`, msg, typ)
	}
}

// Render returns the bytes the fake would stream for a successful reply.
func Render(p llm.Provider, rep Reply) []byte {
	var buf bytesWriter
	e := &emitter{w: &buf, fl: &buf}
	switch p {
	case llm.ProviderAnthropic:
		anthropicStream(e, rep)
	case llm.ProviderGemini:
		geminiStream(e, rep)
	default:
		openaiStream(e, rep)
	}
	return buf.b
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bytesWriter) Flush()                      {}

// ReplayTransport answers every request with the same recorded SSE body,
// without a socket, so a benchmark measures only the client side.
type ReplayTransport struct{ Body []byte }

// RoundTrip implements http.RoundTripper.
func (t ReplayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(t.Body)), ContentLength: -1, Request: req}, nil
}

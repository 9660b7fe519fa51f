package claudecode

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// fakeAPI is a scripted Anthropic Messages API on 127.0.0.1, speaking the
// streaming SSE the real CLI expects (protocol notes §11). The reply to a
// request is chosen statelessly by the test's script from the request.
//
// Its traffic's credential of a POST request is its x-api-key and
// Authorization headers, joined by a space; its requests are the
// main-agent requests (those offering tools).
type fakeAPI struct {
	clitest.Traffic[*apiRequest]
	srv    *httptest.Server
	script func(r *apiRequest) fakeReply
	// n counts the replies, which name their message ids by it.
	n atomic.Int64
}

// apiRequest is the part of a Messages API request the tests look at.
type apiRequest struct {
	Model    string       `json:"model"`
	Messages []apiMsgBody `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Stream bool `json:"stream"`
	// System is the system prompt: text blocks (or a plain string).
	System json.RawMessage `json:"system"`
}

// systemText joins the system prompt's blocks.
func (r *apiRequest) systemText() string {
	var b strings.Builder
	for _, s := range blocks(r.System) {
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// toolNames lists the tools the request offers the model.
func (r *apiRequest) toolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, tl := range r.Tools {
		out = append(out, tl.Name)
	}
	return out
}

type apiMsgBody struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// lastUser returns the blocks of the last user message.
func (r *apiRequest) lastUser() []contentBlock {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return blocks(r.Messages[i].Content)
		}
	}
	return nil
}

// lastUserText joins the text blocks of the last user message.
func (r *apiRequest) lastUserText() string {
	var b strings.Builder
	for _, c := range r.lastUser() {
		if c.Type == "text" {
			b.WriteString(c.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// toolResult returns the last user message's result for a tool call id
// prefix, if any.
func (r *apiRequest) toolResult() (contentBlock, bool) {
	for _, c := range r.lastUser() {
		if c.Type == "tool_result" {
			return c, true
		}
	}
	return contentBlock{}, false
}

// allText is every text of every message, for "the model saw it" checks.
func (r *apiRequest) allText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		for _, c := range blocks(m.Content) {
			b.WriteString(c.Text)
			b.WriteString(contentText(c.Content))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fakeReply is one scripted model response.
type fakeReply struct {
	Thinking string
	Text     string
	Tools    []fakeTool
	// Status, when set, fails the request with this HTTP status.
	Status int
	// Pause is waited before each text delta, to keep a response
	// streaming while a test interrupts it.
	Pause time.Duration
}

type fakeTool struct {
	ID    string
	Name  string
	Input any
}

func newFakeAPI(t testing.TB, script func(r *apiRequest) fakeReply) *fakeAPI {
	f := &fakeAPI{script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.Receive(r)
	if r.Method == http.MethodPost {
		f.AddCredential(strings.TrimSpace(r.Header.Get("X-Api-Key") + " " + r.Header.Get("Authorization")))
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	}
	var req apiRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	var rep fakeReply
	if len(req.Tools) == 0 {
		// Side requests (titles, summaries) get a small text.
		rep = fakeReply{Text: `{"title":"kz test"}`}
	} else {
		f.AddBody(&req)
		rep = f.script(&req)
	}
	id := fmt.Sprintf("msg_fake_%d", f.n.Add(1))
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		typ := map[int]string{401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 529: "overloaded_error"}[rep.Status]
		if typ == "" {
			typ = "api_error"
		}
		w.WriteHeader(rep.Status)
		_, _ = fmt.Fprintf(w, `{"type":"error","error":{"type":"%s","message":"fake: status %d"}}`, typ, rep.Status)
		return
	}
	stop := "end_turn"
	if len(rep.Tools) > 0 {
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		var content []any
		if rep.Thinking != "" {
			content = append(content, map[string]any{"type": "thinking", "thinking": rep.Thinking, "signature": "sig"})
		}
		if rep.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.Text})
		}
		for _, tl := range rep.Tools {
			content = append(content, map[string]any{"type": "tool_use", "id": tl.ID, "name": tl.Name, "input": tl.Input})
		}
		usage["output_tokens"] = 6
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(name string, v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return r.Context().Err() == nil
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	idx := 0
	if rep.Thinking != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": rep.Thinking}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "signature_delta", "signature": "sig"}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if rep.Text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range splitN(rep.Text, 3) {
			if rep.Pause > 0 {
				select {
				case <-time.After(rep.Pause):
				case <-r.Context().Done():
					return
				}
			}
			if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}}) {
				return
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, tl := range rep.Tools {
		in, _ := json.Marshal(tl.Input)
		send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": tl.ID, "name": tl.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 6}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// splitN cuts s into up to n pieces on rune boundaries.
func splitN(s string, n int) []string {
	r := []rune(s)
	if len(r) < n {
		return []string{s}
	}
	var out []string
	step := len(r) / n
	for i := 0; i < n; i++ {
		end := (i + 1) * step
		if i == n-1 {
			end = len(r)
		}
		out = append(out, string(r[i*step:end]))
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

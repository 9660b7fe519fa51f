package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The fake model servers of BenchmarkCLIOverhead: the smallest Anthropic
// Messages and OpenAI Responses APIs the real Claude Code and Codex CLIs
// complete a turn against (see /work/shared/protocols and the fakes of
// runtimes/claudecode and runtimes/codex), on 127.0.0.1. Both answer a
// turn the same way whoever drives the CLI: a prompt that contains
// shellMarker gets one shell call of shellCommand and, once its output is
// back, the final text; any other prompt gets the final text at once.
// Every reply is streamed without pauses, so that the figures are the
// processes' own cost.

const (
	shellMarker  = "run the shell"
	shellCommand = "echo kz-bench"
	benchAnswer  = "The fake model answers."
)

// anthropicFake is the Messages API for Claude Code: POST /v1/messages
// streamed as SSE; anything else (count_tokens, metadata) gets {}.
func anthropicFake(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		var all strings.Builder
		for _, m := range req.Messages {
			all.Write(m.Content)
		}
		text, tool := benchAnswer, false
		switch {
		case len(req.Tools) == 0:
			// A side request (a title, a summary).
			text = `{"title":"bench"}`
		case strings.Contains(all.String(), shellMarker) && !strings.Contains(all.String(), "tool_result"):
			tool = true
		}
		sse := newSSE(w)
		usage := map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
		sse.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_bench", "type": "message",
			"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
		stop := "end_turn"
		if tool {
			stop = "tool_use"
			in, _ := json.Marshal(map[string]string{"command": shellCommand, "description": "bench"})
			sse.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_bench", "name": "Bash", "input": map[string]any{}}})
			sse.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		} else {
			sse.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			sse.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
		}
		sse.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		sse.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 6}})
		sse.send("message_stop", map[string]any{"type": "message_stop"})
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// responsesFake is the Responses API for Codex: POST .../responses
// streamed as SSE.
func responsesFake(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []map[string]any `json:"input"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// What happened since the last user message decides the step.
		asked, answered := false, false
		for _, it := range req.Input {
			typ, _ := it["type"].(string)
			switch {
			case typ == "message" && it["role"] == "user":
				raw, _ := json.Marshal(it["content"])
				asked, answered = strings.Contains(string(raw), shellMarker), false
			case strings.HasSuffix(typ, "_output"):
				answered = true
			}
		}
		sse := newSSE(w)
		sse.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_bench"}})
		var item map[string]any
		if asked && !answered {
			args, _ := json.Marshal(map[string]any{"cmd": shellCommand, "yield_time_ms": 60000})
			item = map[string]any{"type": "function_call", "id": "fc_bench", "call_id": "call_bench", "name": codexShellTool(req.Tools),
				"arguments": string(args), "status": "completed"}
			sse.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
		} else {
			sse.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{
				"type": "message", "id": "msg_bench", "role": "assistant", "status": "in_progress", "content": []any{}}})
			sse.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_bench", "output_index": 0, "content_index": 0, "delta": benchAnswer})
			item = map[string]any{"type": "message", "id": "msg_bench", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": benchAnswer, "annotations": []any{}}}}
		}
		sse.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		sse.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_bench", "status": "completed",
			"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 20,
				"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120}}})
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// codexShellTool is the shell tool Codex advertised.
func codexShellTool(tools []struct {
	Name string `json:"name"`
}) string {
	for _, want := range []string{"exec_command", "shell_command", "shell"} {
		for _, t := range tools {
			if t.Name == want {
				return want
			}
		}
	}
	return "exec_command"
}

// sse writes server-sent events, flushing each.
type sse struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	return &sse{w: w, fl: fl}
}

func (s *sse) send(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data)
	if s.fl != nil {
		s.fl.Flush()
	}
}

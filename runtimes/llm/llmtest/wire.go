package llmtest

import (
	"encoding/json"
	"fmt"
)

type obj = map[string]any

// anthropicStream writes a Messages API stream: message_start, a ping, one
// content block per thinking/text/tool_use item with its deltas,
// message_delta with the stop reason and output usage, message_stop.
func anthropicStream(e *emitter, rep Reply) {
	u := rep.Usage
	e.event("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": u.InputTokens, "output_tokens": 1,
			"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens},
	}})
	e.event("ping", obj{"type": "ping"})
	idx := 0
	if rep.Reasoning != "" {
		e.event("content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "thinking", "thinking": "", "signature": ""}})
		e.event("content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "thinking_delta", "thinking": rep.Reasoning}})
		e.event("content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "signature_delta", "signature": "sig-" + fmt.Sprint(len(rep.Reasoning))}})
		e.event("content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	if ds := deltas(rep); len(ds) > 0 {
		e.event("content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "text", "text": ""}})
		for _, d := range ds {
			e.event("content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "text_delta", "text": d}})
			e.afterText()
		}
		e.event("content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	if rep.StreamError != "" {
		e.raw(fmt.Sprintf("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":%q,\"message\":\"fake stream error\"}}\n\n", rep.StreamError))
		return
	}
	for _, c := range rep.Calls {
		e.event("content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
		for _, piece := range splitArgs(c.Args) {
			e.event("content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "input_json_delta", "partial_json": piece}})
		}
		e.event("content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	e.event("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": u.OutputTokens}})
	e.event("message_stop", obj{"type": "message_stop"})
}

// openaiStream writes a Chat Completions stream: a role chunk, content
// chunks, tool call chunks (id and name first, arguments in pieces), a
// finish_reason chunk, the usage chunk (stream_options.include_usage) and
// [DONE].
func openaiStream(e *emitter, rep Reply) {
	chunk := func(delta obj, finish any) obj {
		return obj{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	e.event("", chunk(obj{"role": "assistant", "content": ""}, nil))
	if rep.Reasoning != "" {
		e.event("", chunk(obj{"reasoning_content": rep.Reasoning}, nil))
	}
	for _, d := range deltas(rep) {
		e.event("", chunk(obj{"content": d}, nil))
		e.afterText()
	}
	for i, c := range rep.Calls {
		e.event("", chunk(obj{"tool_calls": []any{obj{"index": i, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}}}, nil))
		for _, piece := range splitArgs(c.Args) {
			e.event("", chunk(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": piece}}}}, nil))
		}
	}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	e.event("", chunk(obj{}, finish))
	u := rep.Usage
	e.event("", obj{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
		"usage": obj{"prompt_tokens": u.InputTokens + u.CacheReadTokens, "completion_tokens": u.OutputTokens,
			"total_tokens":          u.InputTokens + u.CacheReadTokens + u.OutputTokens,
			"prompt_tokens_details": obj{"cached_tokens": u.CacheReadTokens}}})
	e.raw("data: [DONE]\n\n")
}

// geminiStream writes a streamGenerateContent?alt=sse stream: one
// GenerateContentResponse per data line (CRLF framing as Google sends it),
// the last with finishReason and the usage metadata.
func geminiStream(e *emitter, rep Reply) {
	send := func(parts []any, finish string) {
		cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		resp := obj{"candidates": []any{cand}, "modelVersion": "fake", "responseId": "fake"}
		u := rep.Usage
		resp["usageMetadata"] = obj{"promptTokenCount": u.InputTokens + u.CacheReadTokens, "candidatesTokenCount": u.OutputTokens,
			"totalTokenCount": u.InputTokens + u.CacheReadTokens + u.OutputTokens, "cachedContentTokenCount": u.CacheReadTokens}
		b, _ := json.Marshal(resp)
		e.raw("data: " + string(b) + "\r\n\r\n")
	}
	if rep.Reasoning != "" {
		send([]any{obj{"text": rep.Reasoning, "thought": true}}, "")
	}
	for _, d := range deltas(rep) {
		send([]any{obj{"text": d}}, "")
		e.afterText()
	}
	var parts []any
	for _, c := range rep.Calls {
		var args any
		if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
			args = obj{}
		}
		fc := obj{"name": c.Name, "args": args}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		part := obj{"functionCall": fc}
		if len(c.Signature) > 0 {
			part["thoughtSignature"] = c.Signature // []byte marshals as base64, as the API sends it
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		parts = []any{obj{"text": ""}}
	}
	send(parts, "STOP")
}

// responsesStream writes an OpenAI Responses API stream: response.created,
// output items (reasoning summary, message text, function calls with their
// argument deltas), response.completed with usage.
func responsesStream(e *emitter, rep Reply) {
	seq := 0
	ev := func(typ string, body obj) {
		body["type"] = typ
		body["sequence_number"] = seq
		seq++
		e.event(typ, body)
	}
	resp := func(status string) obj {
		return obj{"id": "resp_fake", "object": "response", "created_at": 1, "status": status, "model": "fake", "output": []any{}}
	}
	ev("response.created", obj{"response": resp("in_progress")})
	idx := 0
	if rep.Reasoning != "" {
		ev("response.output_item.added", obj{"output_index": idx, "item": obj{"id": "rs_1", "type": "reasoning", "summary": []any{}}})
		ev("response.reasoning_summary_text.delta", obj{"item_id": "rs_1", "output_index": idx, "summary_index": 0, "delta": rep.Reasoning})
		ev("response.output_item.done", obj{"output_index": idx, "item": obj{"id": "rs_1", "type": "reasoning", "summary": []any{}}})
		idx++
	}
	if ds := deltas(rep); len(ds) > 0 {
		ev("response.output_item.added", obj{"output_index": idx, "item": obj{"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		for _, d := range ds {
			ev("response.output_text.delta", obj{"item_id": "msg_1", "output_index": idx, "content_index": 0, "delta": d})
			e.afterText()
		}
		ev("response.output_text.done", obj{"item_id": "msg_1", "output_index": idx, "content_index": 0, "text": rep.Text})
		idx++
	}
	for i, c := range rep.Calls {
		id := fmt.Sprintf("fc_%d", i)
		ev("response.output_item.added", obj{"output_index": idx, "item": obj{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""}})
		for _, piece := range splitArgs(c.Args) {
			ev("response.function_call_arguments.delta", obj{"item_id": id, "output_index": idx, "delta": piece})
		}
		ev("response.function_call_arguments.done", obj{"item_id": id, "output_index": idx, "arguments": c.Args})
		idx++
	}
	if rep.StreamError != "" {
		r := resp("failed")
		r["error"] = obj{"code": rep.StreamError, "message": "fake failure"}
		ev("response.failed", obj{"response": r})
		return
	}
	u := rep.Usage
	r := resp("completed")
	r["usage"] = obj{"input_tokens": u.InputTokens + u.CacheReadTokens, "input_tokens_details": obj{"cached_tokens": u.CacheReadTokens},
		"output_tokens": u.OutputTokens, "output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": u.InputTokens + u.CacheReadTokens + u.OutputTokens}
	ev("response.completed", obj{"response": r})
}

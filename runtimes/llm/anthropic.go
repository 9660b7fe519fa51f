package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/kaizen-code/kz/engine"
)

// anthropicClient speaks the Messages API through the official SDK. The
// SDK's own retries are off: withRetry owns the policy for every provider.
type anthropicClient struct {
	cfg Config
	c   anthropic.Client
}

func newAnthropic(cfg Config, key string) *anthropicClient {
	opts := []option.RequestOption{
		// Without this marker the SDK reads ANTHROPIC_* variables and
		// profile files on its own; kz reads exactly the configured one.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(key),
		option.WithHTTPClient(newHTTPClient(cfg)),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &anthropicClient{cfg: cfg, c: anthropic.NewClient(opts...)}
}

func (a *anthropicClient) Provider() Provider { return ProviderAnthropic }

func (a *anthropicClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params, opts, err := anthropicParams(req)
	if err != nil {
		return Response{}, &engine.RuntimeError{Kind: engine.ErrBadRequest, Model: req.Model, Message: err.Error(), Err: err}
	}
	return withRetry(ctx, a.cfg, req.Model, func(actx context.Context, _ *httpRecord) (Response, bool, error) {
		return a.attempt(actx, params, opts, onDelta)
	}, classifyAnthropic)
}

// anthropicBlock accumulates one content block while it streams.
type anthropicBlock struct {
	kind      string
	id, name  string
	text      strings.Builder
	signature string
}

func (a *anthropicClient) attempt(ctx context.Context, params anthropic.MessageNewParams, opts []option.RequestOption, onDelta func(Delta)) (Response, bool, error) {
	s := a.c.Messages.NewStreaming(ctx, params, opts...)
	defer func() { _ = s.Close() }()
	var (
		r        Response
		streamed bool
		done     bool
		blocks   = map[int64]*anthropicBlock{}
	)
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			r.Usage = engine.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
		case "content_block_start":
			cb := ev.ContentBlock
			b := &anthropicBlock{kind: cb.Type, id: cb.ID, name: cb.Name}
			b.text.WriteString(cb.Text)
			b.text.WriteString(cb.Thinking)
			b.signature = cb.Signature
			blocks[ev.Index] = b
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return r, streamed, fmt.Errorf("delta for unknown content block %d: %w", ev.Index, errDropped)
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text.WriteString(ev.Delta.Text)
				streamed = true
				onDelta(Delta{Kind: DeltaText, Text: ev.Delta.Text})
			case "thinking_delta":
				b.text.WriteString(ev.Delta.Thinking)
				streamed = true
				onDelta(Delta{Kind: DeltaReasoning, Text: ev.Delta.Thinking})
			case "signature_delta":
				b.signature += ev.Delta.Signature
			case "input_json_delta":
				b.text.WriteString(ev.Delta.PartialJSON)
			}
		case "content_block_stop":
			b := blocks[ev.Index]
			if b == nil {
				continue
			}
			delete(blocks, ev.Index)
			switch b.kind {
			case "text":
				r.Text += b.text.String()
			case "thinking":
				r.Reasoning = append(r.Reasoning, Reasoning{Text: b.text.String(), Signature: b.signature})
			case "tool_use":
				args := b.text.String()
				if args == "" {
					args = "{}"
				}
				r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(args)})
			}
		case "message_delta":
			r.Stop = anthropicStop(string(ev.Delta.StopReason))
			// message_delta usage is cumulative; non-zero values win.
			u := ev.Usage
			if u.OutputTokens > 0 {
				r.Usage.OutputTokens = u.OutputTokens
			}
			if u.InputTokens > 0 {
				r.Usage.InputTokens = u.InputTokens
			}
			if u.CacheReadInputTokens > 0 {
				r.Usage.CacheReadTokens = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				r.Usage.CacheWriteTokens = u.CacheCreationInputTokens
			}
		case "message_stop":
			done = true
		}
	}
	if err := s.Err(); err != nil {
		return r, streamed, err
	}
	if !done {
		return r, streamed, errDropped
	}
	return r, streamed, nil
}

func anthropicStop(s string) StopReason {
	switch s {
	case "end_turn", "stop_sequence":
		return StopEnd
	case "tool_use":
		return StopToolUse
	case "max_tokens":
		return StopMaxTokens
	}
	return StopOther
}

func classifyAnthropic(err error, rec *httpRecord) *engine.RuntimeError {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		status, ra := rec.get()
		if apiErr.StatusCode != 0 {
			status = apiErr.StatusCode
		}
		if apiErr.Response != nil && apiErr.StatusCode >= 400 {
			if h := parseRetryAfter(apiErr.Response.Header); h > 0 {
				ra = h
			}
		}
		raw := apiErr.RawJSON()
		kind := classifyStatus(status, raw)
		re := &engine.RuntimeError{Kind: kind, Message: httpMessage(status, raw), Err: err}
		if kind == engine.ErrRateLimit || kind == engine.ErrOverloaded {
			re.RetryAfter = ra
		}
		return re
	}
	return classifyTransport(err, "")
}

// httpMessage renders "HTTP 429: message" from a provider error body of the
// usual {"error":{"message":…}} or {"message":…} shapes.
func httpMessage(status int, raw string) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	msg := strings.TrimSpace(raw)
	if json.Unmarshal([]byte(raw), &body) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(body.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case body.Message != "":
			msg = body.Message
		}
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if status == 0 || status == 200 {
		return "provider error: " + msg
	}
	return fmt.Sprintf("HTTP %d: %s", status, msg)
}

func anthropicParams(req Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 4096
	}
	budget := req.Thinking.Tokens()
	if budget > 0 && maxTokens <= budget {
		// Anthropic counts the thinking inside max_tokens.
		maxTokens = budget + 4096
	}
	p := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		// The system prompt and the tool list are the stable prefix of every
		// request of a turn: marking their ends lets the API cache them.
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for i, t := range req.Tools {
		schema, err := objectSchema(t.Schema)
		if err != nil {
			return p, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		for k, v := range schema {
			switch k {
			case "type":
			case "properties":
				tp.InputSchema.Properties = v
			case "required":
				if rs, ok := v.([]any); ok {
					for _, r := range rs {
						if s, ok := r.(string); ok {
							tp.InputSchema.Required = append(tp.InputSchema.Required, s)
						}
					}
				}
			default:
				tp.InputSchema.ExtraFields[k] = v
			}
		}
		if i == len(req.Tools)-1 {
			tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if len(req.JSONSchema) > 0 {
		schema, err := objectSchema(req.JSONSchema)
		if err != nil {
			return p, nil, fmt.Errorf("output schema: %w", err)
		}
		p.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
	}
	for _, m := range req.Messages {
		if mp, ok := anthropicMessage(m); ok {
			p.Messages = append(p.Messages, mp)
		}
	}
	var opts []option.RequestOption
	if budget > 0 {
		// Set as raw JSON rather than through params.Thinking: the SDK prints
		// a deprecation warning to stderr for some models when the typed
		// field is used, and kz owns the terminal.
		opts = append(opts, option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": budget}))
	}
	return p, opts, nil
}

func anthropicMessage(m Message) (anthropic.MessageParam, bool) {
	var blocks []anthropic.ContentBlockParamUnion
	switch m.Role {
	case RoleAssistant:
		for _, r := range m.Reasoning {
			if r.Signature != "" {
				blocks = append(blocks, anthropic.NewThinkingBlock(r.Signature, r.Text))
			}
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, c.ArgsOrEmpty(), c.Name))
		}
		return anthropic.NewAssistantMessage(blocks...), len(blocks) > 0
	default:
		for _, r := range m.ToolResults {
			content := r.Content
			if content == "" {
				content = "(no output)"
			}
			blocks = append(blocks, anthropic.NewToolResultBlock(r.CallID, content, r.IsError))
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, im := range m.Images {
			blocks = append(blocks, anthropic.NewImageBlockBase64(im.MediaType, base64.StdEncoding.EncodeToString(im.Data)))
		}
		return anthropic.NewUserMessage(blocks...), len(blocks) > 0
	}
}

// objectSchema decodes a JSON schema object; an empty schema is an empty
// object schema.
func objectSchema(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	return m, nil
}

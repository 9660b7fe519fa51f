package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kaizen-code/kz/engine"
)

// openaiClient speaks Chat Completions through the official SDK against any
// OpenAI-compatible base URL (OpenAI, OpenRouter, Ollama, LiteLLM, vLLM).
type openaiClient struct {
	cfg Config
	c   openai.Client
	// official is true for OpenAI itself, which wants max_completion_tokens;
	// compatible servers commonly know only max_tokens.
	official bool
}

func newOpenAI(cfg Config, key string) *openaiClient {
	opts := []option.RequestOption{
		option.WithHTTPClient(newHTTPClient(cfg)),
		option.WithMaxRetries(0),
		// The SDK picks up OPENAI_* variables by itself. kz sends exactly the
		// configured key (or none, to a local server) and no organisation or
		// admin credential from the environment, so a key meant for OpenAI
		// never reaches another base URL.
		option.WithAPIKey(key),
		option.WithAdminAPIKey(""),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	opts = append(opts, option.WithBaseURL(base))
	return &openaiClient{cfg: cfg, c: openai.NewClient(opts...), official: cfg.BaseURL == ""}
}

func (o *openaiClient) Provider() Provider { return ProviderOpenAI }

func (o *openaiClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params, err := o.params(req)
	if err != nil {
		return Response{}, &engine.RuntimeError{Kind: engine.ErrBadRequest, Model: req.Model, Message: err.Error(), Err: err}
	}
	return withRetry(ctx, o.cfg, req.Model, func(actx context.Context, _ *httpRecord) (Response, bool, error) {
		return o.attempt(actx, params, onDelta)
	}, classifyOpenAI)
}

// openaiCall accumulates one streamed tool call; the API sends its id and
// name once and its arguments in pieces, keyed by index.
type openaiCall struct {
	id, name string
	args     strings.Builder
}

func (o *openaiClient) attempt(ctx context.Context, params openai.ChatCompletionNewParams, onDelta func(Delta)) (Response, bool, error) {
	s := o.c.Chat.Completions.NewStreaming(ctx, params)
	defer func() { _ = s.Close() }()
	var (
		r        Response
		text     strings.Builder
		reason   strings.Builder
		streamed bool
		finished bool
		calls    = map[int64]*openaiCall{}
	)
	for s.Next() {
		ch := s.Current()
		if u := ch.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
			cached := u.PromptTokensDetails.CachedTokens
			r.Usage = engine.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens,
				CacheReadTokens: cached, CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens}
		}
		for _, c := range ch.Choices {
			d := c.Delta
			if d.Content != "" {
				text.WriteString(d.Content)
				streamed = true
				onDelta(Delta{Kind: DeltaText, Text: d.Content})
			}
			if rt := compatReasoning(d); rt != "" {
				reason.WriteString(rt)
				streamed = true
				onDelta(Delta{Kind: DeltaReasoning, Text: rt})
			}
			for _, tc := range d.ToolCalls {
				st := calls[tc.Index]
				if st == nil {
					st = &openaiCall{}
					calls[tc.Index] = st
				}
				if tc.ID != "" {
					st.id = tc.ID
				}
				st.name += tc.Function.Name
				st.args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != "" {
				finished = true
				r.Stop = openaiStop(c.FinishReason)
			}
		}
	}
	if err := s.Err(); err != nil {
		return r, streamed, err
	}
	if !finished {
		return r, streamed, errDropped
	}
	r.Text = text.String()
	if reason.Len() > 0 {
		r.Reasoning = []Reasoning{{Text: reason.String()}}
	}
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		st := calls[i]
		id := st.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		args := st.args.String()
		if args == "" {
			args = "{}"
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, Name: st.name, Args: json.RawMessage(args)})
	}
	return r, streamed, nil
}

// compatReasoning reads the reasoning text that OpenAI-compatible servers
// (vLLM, DeepSeek, OpenRouter) stream in a non-standard delta field.
func compatReasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func openaiStop(s string) StopReason {
	switch s {
	case "stop":
		return StopEnd
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	}
	return StopOther
}

func classifyOpenAI(err error, rec *httpRecord) *engine.RuntimeError {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		status, ra := rec.get()
		if apiErr.StatusCode != 0 {
			status = apiErr.StatusCode
		}
		raw := apiErr.RawJSON()
		if raw == "" {
			raw = apiErr.Message
		}
		text := raw + " " + apiErr.Code + " " + apiErr.Type
		kind := classifyStatus(status, text)
		re := &engine.RuntimeError{Kind: kind, Message: httpMessage(status, raw), Err: err}
		if kind == engine.ErrRateLimit || kind == engine.ErrOverloaded {
			re.RetryAfter = ra
		}
		return re
	}
	var sf *streamFailure
	if errors.As(err, &sf) {
		kind := classifyStatus(0, sf.code+" "+sf.msg)
		if kind == engine.ErrCrashed {
			// A failed response without a recognisable code is the
			// provider's fault and may succeed when retried.
			kind = engine.ErrOverloaded
		}
		return &engine.RuntimeError{Kind: kind, Message: "provider error: " + sf.Error(), Err: err}
	}
	return classifyTransport(err, "")
}

func (o *openaiClient) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		if o.official {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	if lvl := req.Thinking.Level(); lvl != "" {
		p.ReasoningEffort = shared.ReasoningEffort(lvl)
	}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, openaiMessages(m)...)
	}
	for _, t := range req.Tools {
		schema, err := objectSchema(t.Schema)
		if err != nil {
			return p, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if len(req.JSONSchema) > 0 {
		schema, err := objectSchema(req.JSONSchema)
		if err != nil {
			return p, fmt.Errorf("output schema: %w", err)
		}
		name := req.SchemaName
		if name == "" {
			name = "output"
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: schema}
		if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
			// A closed schema is written for strict mode, which makes the
			// API guarantee the shape instead of trying for it.
			js.Strict = openai.Bool(true)
		}
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	}
	return p, nil
}

func openaiMessages(m Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	switch m.Role {
	case RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Text != "" {
			a.Content.OfString = openai.String(m.Text)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.ArgsOrEmpty())},
				},
			})
		}
		if m.Text == "" && len(a.ToolCalls) == 0 {
			return nil
		}
		out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		for _, r := range m.ToolResults {
			content := r.Content
			if r.IsError {
				content = "Error: " + content
			}
			out = append(out, openai.ToolMessage(content, r.CallID))
		}
		switch {
		case len(m.Images) > 0:
			// Text and images go in one message as content parts; the
			// images as data URLs, which every OpenAI-compatible server
			// with vision reads.
			var parts []openai.ChatCompletionContentPartUnionParam
			if m.Text != "" {
				parts = append(parts, openai.TextContentPart(m.Text))
			}
			for _, im := range m.Images {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(im)}))
			}
			out = append(out, openai.UserMessage(parts))
		case m.Text != "":
			out = append(out, openai.UserMessage(m.Text))
		}
	}
	return out
}

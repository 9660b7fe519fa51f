package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kaizen-code/kz/engine"
)

// OpenAIAPI selects the OpenAI wire API.
type OpenAIAPI string

// OpenAI APIs. Chat Completions is what every compatible server speaks;
// the Responses API is OpenAI's own newer API.
const (
	OpenAIChat      OpenAIAPI = "chat"
	OpenAIResponses OpenAIAPI = "responses"
)

// responsesClient speaks OpenAI's Responses API, statelessly: kz sends the
// whole conversation each time and asks OpenAI not to store it.
type responsesClient struct {
	*openaiClient
}

func (o *responsesClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params, err := responsesParams(req)
	if err != nil {
		return Response{}, &engine.RuntimeError{Kind: engine.ErrBadRequest, Model: req.Model, Message: err.Error(), Err: err}
	}
	return withRetry(ctx, o.cfg, req.Model, func(actx context.Context, _ *httpRecord) (Response, bool, error) {
		return o.attempt(actx, params, onDelta)
	}, classifyOpenAI)
}

// responsesCall accumulates one function call item.
type responsesCall struct {
	callID, name string
	args         strings.Builder
}

func (o *responsesClient) attempt(ctx context.Context, params responses.ResponseNewParams, onDelta func(Delta)) (Response, bool, error) {
	s := o.c.Responses.NewStreaming(ctx, params)
	defer func() { _ = s.Close() }()
	var (
		r        Response
		text     strings.Builder
		reason   strings.Builder
		streamed bool
		done     bool
		order    []string
		calls    = map[string]*responsesCall{}
	)
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
			streamed = true
			onDelta(Delta{Kind: DeltaText, Text: ev.Delta})
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			reason.WriteString(ev.Delta)
			streamed = true
			onDelta(Delta{Kind: DeltaReasoning, Text: ev.Delta})
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				calls[ev.Item.ID] = &responsesCall{callID: ev.Item.CallID, name: ev.Item.Name}
				order = append(order, ev.Item.ID)
			}
		case "response.function_call_arguments.delta":
			if c := calls[ev.ItemID]; c != nil {
				c.args.WriteString(ev.Delta)
			}
		case "response.function_call_arguments.done":
			if c := calls[ev.ItemID]; c != nil {
				c.args.Reset()
				c.args.WriteString(ev.Arguments)
			}
		case "response.completed", "response.incomplete":
			done = true
			u := ev.Response.Usage
			cached := u.InputTokensDetails.CachedTokens
			r.Usage = engine.Usage{InputTokens: u.InputTokens - cached, OutputTokens: u.OutputTokens, CacheReadTokens: cached}
			r.Stop = StopEnd
			if ev.Type == "response.incomplete" {
				r.Stop = StopMaxTokens
			}
		case "response.failed":
			msg := ev.Response.Error.Message
			return r, streamed, &streamFailure{code: string(ev.Response.Error.Code), msg: msg}
		}
	}
	if err := s.Err(); err != nil {
		return r, streamed, err
	}
	if !done {
		return r, streamed, errDropped
	}
	r.Text = text.String()
	if reason.Len() > 0 {
		r.Reasoning = []Reasoning{{Text: reason.String()}}
	}
	for _, id := range order {
		c := calls[id]
		args := c.args.String()
		if args == "" {
			args = "{}"
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.callID, Name: c.name, Args: []byte(args)})
	}
	if len(r.ToolCalls) > 0 && r.Stop == StopEnd {
		r.Stop = StopToolUse
	}
	return r, streamed, nil
}

// streamFailure is a failure the provider reported inside a 200 stream.
type streamFailure struct{ code, msg string }

func (e *streamFailure) Error() string { return fmt.Sprintf("response failed: %s %s", e.code, e.msg) }

func responsesParams(req Request) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{Model: shared.ResponsesModel(req.Model), Store: openai.Bool(false)}
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = openai.Int(int64(req.MaxTokens))
	}
	if lvl := req.Thinking.Level(); lvl != "" {
		// The summaries are what streams as reasoning: OpenAI never
		// sends the raw reasoning.
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(lvl), Summary: shared.ReasoningSummaryAuto}
	}
	var items responses.ResponseInputParam
	for _, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			if m.Text != "" {
				items = append(items, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleAssistant))
			}
			for _, c := range m.ToolCalls {
				items = append(items, responses.ResponseInputItemParamOfFunctionCall(string(c.ArgsOrEmpty()), c.ID, c.Name))
			}
		default:
			for _, r := range m.ToolResults {
				out := r.Content
				if r.IsError {
					out = "Error: " + out
				}
				item := responses.ResponseInputItemParamOfFunctionCallOutput(out)
				item.OfFunctionCallOutput.CallID = openai.String(r.CallID)
				items = append(items, item)
			}
			switch {
			case len(m.Images) > 0:
				var parts responses.ResponseInputMessageContentListParam
				if m.Text != "" {
					parts = append(parts, responses.ResponseInputContentParamOfInputText(m.Text))
				}
				for _, im := range m.Images {
					part := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
					part.OfInputImage.ImageURL = openai.String(dataURL(im))
					parts = append(parts, part)
				}
				items = append(items, responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser))
			case m.Text != "":
				items = append(items, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleUser))
			}
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for _, t := range req.Tools {
		schema, err := objectSchema(t.Schema)
		if err != nil {
			return p, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		ft := &responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: openai.Bool(false)}
		if t.Description != "" {
			ft.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
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
		js := &responses.ResponseFormatTextJSONSchemaConfigParam{Name: name, Schema: schema}
		if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
			js.Strict = openai.Bool(true)
		}
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: js}}
	}
	return p, nil
}

package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/kaizen-code/kz/engine"
)

// geminiClient speaks the Gemini API (generativelanguage) through genai.
type geminiClient struct {
	cfg Config
	c   *genai.Client
}

func newGemini(cfg Config, key string) (*geminiClient, error) {
	cc := &genai.ClientConfig{
		APIKey:     key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: newHTTPClient(cfg),
	}
	if cfg.BaseURL != "" {
		cc.HTTPOptions.BaseURL = cfg.BaseURL
	}
	// genai.NewClient only builds structures; the context bounds nothing
	// that lasts.
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, &engine.RuntimeError{Kind: engine.ErrBadRequest, Message: "gemini client: " + err.Error(), Err: err}
	}
	return &geminiClient{cfg: cfg, c: c}, nil
}

func (g *geminiClient) Provider() Provider { return ProviderGemini }

func (g *geminiClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	contents, conf, err := geminiParams(req)
	if err != nil {
		return Response{}, &engine.RuntimeError{Kind: engine.ErrBadRequest, Model: req.Model, Message: err.Error(), Err: err}
	}
	return withRetry(ctx, g.cfg, req.Model, func(actx context.Context, _ *httpRecord) (Response, bool, error) {
		return g.attempt(actx, req.Model, contents, conf, onDelta)
	}, classifyGemini)
}

func (g *geminiClient) attempt(ctx context.Context, model string, contents []*genai.Content, conf *genai.GenerateContentConfig, onDelta func(Delta)) (Response, bool, error) {
	var (
		r        Response
		text     strings.Builder
		reason   strings.Builder
		streamed bool
		finished bool
	)
	for resp, err := range g.c.Models.GenerateContentStream(ctx, model, contents, conf) {
		if err != nil {
			return r, streamed, err
		}
		if u := resp.UsageMetadata; u != nil {
			cached := int64(u.CachedContentTokenCount)
			r.Usage = engine.Usage{InputTokens: int64(u.PromptTokenCount) - cached,
				OutputTokens: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount), CacheReadTokens: cached}
		}
		if len(resp.Candidates) == 0 {
			continue
		}
		cand := resp.Candidates[0]
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					args, err := json.Marshal(p.FunctionCall.Args)
					if err != nil || p.FunctionCall.Args == nil {
						args = []byte("{}")
					}
					id := p.FunctionCall.ID
					if id == "" {
						// The Gemini API often omits call ids; kz needs one
						// to pair a call with its result.
						id = fmt.Sprintf("call_%d", len(r.ToolCalls)+1)
					}
					r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, Name: p.FunctionCall.Name, Args: args, Signature: p.ThoughtSignature})
				case p.Text != "" && p.Thought:
					reason.WriteString(p.Text)
					streamed = true
					onDelta(Delta{Kind: DeltaReasoning, Text: p.Text})
				case p.Text != "":
					text.WriteString(p.Text)
					streamed = true
					onDelta(Delta{Kind: DeltaText, Text: p.Text})
				}
			}
		}
		if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
			finished = true
			r.Stop = geminiStop(cand.FinishReason)
		}
	}
	if !finished {
		return r, streamed, errDropped
	}
	r.Text = text.String()
	if reason.Len() > 0 {
		r.Reasoning = []Reasoning{{Text: reason.String()}}
	}
	if len(r.ToolCalls) > 0 && r.Stop == StopEnd {
		// Gemini reports STOP for a response that calls functions.
		r.Stop = StopToolUse
	}
	return r, streamed, nil
}

func geminiStop(f genai.FinishReason) StopReason {
	switch f {
	case genai.FinishReasonStop:
		return StopEnd
	case genai.FinishReasonMaxTokens:
		return StopMaxTokens
	}
	return StopOther
}

func classifyGemini(err error, rec *httpRecord) *engine.RuntimeError {
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiErrPtr):
		apiErr = *apiErrPtr
	default:
		return classifyTransport(err, "")
	}
	status, ra := rec.get()
	if apiErr.Code != 0 {
		status = apiErr.Code
	}
	kind := classifyStatus(status, apiErr.Status+" "+apiErr.Message)
	re := &engine.RuntimeError{Kind: kind, Message: fmt.Sprintf("HTTP %d: %s", status, apiErr.Message), Err: err}
	if kind == engine.ErrRateLimit || kind == engine.ErrOverloaded {
		if d := geminiRetryDelay(apiErr.Details); d > 0 {
			ra = d
		}
		re.RetryAfter = ra
	}
	return re
}

// geminiRetryDelay reads google.rpc.RetryInfo's retryDelay ("2s") from the
// error details, which is where the Gemini API puts its retry hint.
func geminiRetryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if dur, err := time.ParseDuration(s); err == nil {
				return dur
			}
		}
	}
	return 0
}

func geminiParams(req Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	conf := &genai.GenerateContentConfig{}
	if req.MaxTokens > 0 {
		conf.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.System != "" {
		conf.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			schema, err := objectSchema(t.Schema)
			if err != nil {
				return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, &genai.FunctionDeclaration{
				Name: t.Name, Description: t.Description, ParametersJsonSchema: schema,
			})
		}
		conf.Tools = []*genai.Tool{tool}
	}
	if len(req.JSONSchema) > 0 {
		schema, err := objectSchema(req.JSONSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("output schema: %w", err)
		}
		conf.ResponseMIMEType = "application/json"
		conf.ResponseJsonSchema = schema
	}
	switch {
	case req.Thinking.Enabled():
		b := int32(req.Thinking.Tokens())
		conf.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &b}
	case req.Thinking.Effort == ReasoningOff:
		var zero int32
		conf.ThinkingConfig = &genai.ThinkingConfig{ThinkingBudget: &zero}
	}
	var contents []*genai.Content
	for _, m := range req.Messages {
		if c := geminiContent(m); c != nil {
			contents = append(contents, c)
		}
	}
	return contents, conf, nil
}

func geminiContent(m Message) *genai.Content {
	var parts []*genai.Part
	role := genai.RoleUser
	switch m.Role {
	case RoleAssistant:
		role = genai.RoleModel
		if m.Text != "" {
			parts = append(parts, &genai.Part{Text: m.Text})
		}
		for _, c := range m.ToolCalls {
			var args map[string]any
			_ = json.Unmarshal(c.ArgsOrEmpty(), &args)
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.ID, Name: c.Name, Args: args}, ThoughtSignature: c.Signature})
		}
	default:
		for _, r := range m.ToolResults {
			key := "output"
			if r.IsError {
				key = "error"
			}
			parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: r.CallID, Name: r.Name, Response: map[string]any{key: r.Content}}})
		}
		if m.Text != "" {
			parts = append(parts, &genai.Part{Text: m.Text})
		}
		for _, im := range m.Images {
			parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: im.MediaType, Data: im.Data}})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return &genai.Content{Role: string(role), Parts: parts}
}

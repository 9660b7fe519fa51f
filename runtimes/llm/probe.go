package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/kaizen-code/kz/engine"
)

// ProbeTimeout bounds Ping and ListModels (a shorter Config.Timeout
// bounds them more): a setup screen waits for one answer, not a turn.
const ProbeTimeout = 20 * time.Second

// probeLimit is how long one probe may take with cfg.
func probeLimit(cfg Config) time.Duration {
	if cfg.Timeout > 0 && cfg.Timeout < ProbeTimeout {
		return cfg.Timeout
	}
	return ProbeTimeout
}

// timedOut reports whether a probe's error is its time running out
// (the context's deadline, or the transport's wait for headers).
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// Ping sends one minimal request (a one-word prompt, a few output tokens,
// no retry) to model through the same client a turn uses, and returns
// the client's error: an *engine.RuntimeError whose kind says whether the
// key was refused (ErrAuth), the endpoint is unreachable or did not
// answer in time (ErrRuntimeMissing, with "no answer within" for a
// timeout), or the model is unknown (ErrBadRequest).
func Ping(ctx context.Context, cfg Config, model string) error {
	limit := probeLimit(cfg)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cfg.Retry, cfg.Timeout = RetryPolicy{MaxAttempts: 1}, limit
	c, err := New(cfg)
	if err != nil {
		return err
	}
	_, err = c.Stream(ctx, Request{Model: model, MaxTokens: 16,
		Messages: []Message{{Role: RoleUser, Text: "Reply with the word OK."}}}, func(Delta) {})
	if err != nil && timedOut(ctx, err) {
		return &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Model: model, Message: fmt.Sprintf("no answer within %s", limit), Err: err}
	}
	return err
}

// ListModels asks an OpenAI-compatible server (Ollama, OpenRouter, vLLM,
// LiteLLM) for its models through the OpenAI SDK's GET /models, sorted by
// id. Ollama answers it with the models pulled on the machine.
func ListModels(ctx context.Context, cfg Config) ([]string, error) {
	if cfg.Provider != ProviderOpenAI {
		return nil, fmt.Errorf("listing models: provider %s has no list kz reads; pick one from the catalog", cfg.Provider)
	}
	limit := probeLimit(cfg)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cfg.Timeout = limit
	key, err := cfg.apiKey()
	if err != nil {
		return nil, err
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	client := openai.NewClient(option.WithHTTPClient(newHTTPClient(cfg)), option.WithMaxRetries(0), option.WithAPIKey(key),
		option.WithAdminAPIKey(""), option.WithHeaderDel("OpenAI-Organization"), option.WithHeaderDel("OpenAI-Project"),
		option.WithBaseURL(base))
	var ids []string
	pager := client.Models.ListAutoPaging(ctx)
	for pager.Next() {
		if id := pager.Current().ID; id != "" {
			ids = append(ids, id)
		}
		if len(ids) >= maxListed {
			break
		}
	}
	if err := pager.Err(); err != nil {
		if timedOut(ctx, err) {
			return nil, &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Message: fmt.Sprintf("no list of models within %s", limit), Err: err}
		}
		return nil, classifyOpenAI(err, &httpRecord{})
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// maxListed bounds the models kept from a server's list (OpenRouter lists
// hundreds; a picker filters them).
const maxListed = 2000

// Package llm holds kz's provider clients: one small streaming interface
// implemented over the official Anthropic, OpenAI and Gemini Go SDKs, the
// model catalog, and the conversion of kz's runtime-neutral transcript into
// provider messages.
//
// A client never writes to the terminal, never reads a project .env file, and
// reports every failure as an *engine.RuntimeError whose kind the session's
// failover chain reads.
package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// Client streams one model response. Stream calls onDelta for every text or
// reasoning delta as the SDK yields it and returns the assembled response
// when the provider has finished it. A request that fails before any delta
// reached onDelta is retried by the client (see RetryPolicy); once a delta
// was delivered a failure is returned, because a retry would repeat text
// the person already saw.
type Client interface {
	Provider() Provider
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// Provider names an API wire format.
type Provider string

// Providers.
const (
	ProviderAnthropic Provider = "anthropic"
	ProviderOpenAI    Provider = "openai"
	ProviderGemini    Provider = "gemini"
)

// ParseProvider validates a provider name from configuration.
func ParseProvider(s string) (Provider, error) {
	switch p := Provider(s); p {
	case ProviderAnthropic, ProviderOpenAI, ProviderGemini:
		return p, nil
	}
	return "", fmt.Errorf("unknown provider %q (use anthropic, openai or gemini)", s)
}

// Role is the author of a message.
type Role string

// Roles. RoleTool carries tool results, which each provider places where its
// API wants them (a user message for Anthropic and Gemini, tool messages for
// OpenAI).
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one provider-neutral message.
type Message struct {
	Role Role
	Text string
	// Reasoning is the assistant's reasoning with the provider's signature,
	// which Anthropic requires back unchanged when tool use continues.
	Reasoning []Reasoning
	// ToolCalls are the assistant's tool calls, in order.
	ToolCalls []ToolCall
	// ToolResults answer the tool calls of the previous assistant message.
	ToolResults []ToolResult
	// Images are a user message's attached images, sent after its text
	// as each provider's inline image part (base64 or a data URL).
	Images []engine.Image
}

// dataURL renders an image as a data URL, the form OpenAI's APIs take
// inline images in.
func dataURL(im engine.Image) string {
	return "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// Reasoning is one reasoning block of an assistant message.
type Reasoning struct {
	Text      string
	Signature string
}

// ToolCall is one tool call as the model sent it. Args are the raw argument
// bytes, which may be invalid or truncated JSON: the caller decides.
type ToolCall struct {
	ID   string
	Name string
	Args json.RawMessage
	// Signature is Gemini's thought signature, returned with the call.
	Signature []byte
}

// ValidArgs reports whether the arguments are one JSON object.
func (c ToolCall) ValidArgs() bool {
	if len(c.Args) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(c.Args, &m) == nil
}

// ArgsOrEmpty returns the arguments when they are a valid JSON object and
// "{}" otherwise, for sending a call back to a provider that only accepts
// objects.
func (c ToolCall) ArgsOrEmpty() json.RawMessage {
	if len(c.Args) == 0 || !c.ValidArgs() {
		return json.RawMessage(`{}`)
	}
	return c.Args
}

// ToolResult is the outcome of one tool call.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
}

// ToolDef is a tool offered to the model.
type ToolDef struct {
	Name        string
	Description string
	// Schema is the JSON schema of the input, an object schema.
	Schema json.RawMessage
}

// Request is one model request.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolDef
	// MaxTokens bounds the output; zero means the catalog's max output (or
	// 4096 when unknown).
	MaxTokens int
	// JSONSchema asks for structured output through the provider's
	// JSON-schema mode; SchemaName names it (OpenAI requires a name).
	JSONSchema json.RawMessage
	SchemaName string
	// Reasoning asks for thinking (Anthropic thinking with budget_tokens,
	// Gemini thinkingConfig with includeThoughts, OpenAI reasoning effort
	// with summaries on the Responses API). The caller sets it only for a
	// model that reasons.
	Thinking ReasoningSetting
}

// DeltaKind says what a delta carries.
type DeltaKind string

// Delta kinds.
const (
	DeltaText      DeltaKind = "text"
	DeltaReasoning DeltaKind = "reasoning"
)

// Delta is a piece of streamed text or reasoning.
type Delta struct {
	Kind DeltaKind
	Text string
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEnd       StopReason = "end"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// Response is one complete model response.
type Response struct {
	Text      string
	Reasoning []Reasoning
	ToolCalls []ToolCall
	Usage     engine.Usage
	Stop      StopReason
}

// Message returns the response as an assistant message for the next request.
func (r Response) Message() Message {
	return Message{Role: RoleAssistant, Text: r.Text, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls}
}

// Config configures one client. The lead maps a runtime's TOML entry onto
// it: provider, base_url, api_key_env, timeout, retries.
type Config struct {
	Provider Provider
	// BaseURL overrides the provider's endpoint (OpenRouter, Ollama,
	// LiteLLM, vLLM, a test server). Empty means the provider's default.
	BaseURL string
	// APIKeyEnv names the environment variable holding the key. Empty means
	// the provider's usual variable (DefaultKeyEnv). The key is only ever
	// read from the process environment or APIKeyFile, never from a
	// project file.
	APIKeyEnv string
	// APIKeyFile, when set, is a file of the person's own holding the key
	// (the user config's api_key_file); it wins over APIKeyEnv. A file
	// others may read is refused, as ssh refuses such a private key.
	APIKeyFile string
	// Timeout bounds the wait for the response headers of each attempt; a
	// stream that has started may run as long as the turn allows. Zero
	// means 60 seconds.
	Timeout time.Duration
	Retry   RetryPolicy
	// OpenAIAPI picks Chat Completions (default, for every compatible
	// server) or the Responses API (OpenAI itself) for provider openai.
	OpenAIAPI OpenAIAPI
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string
	// LookupEnv replaces os.LookupEnv (tests).
	LookupEnv func(string) (string, bool)
	// Transport replaces the HTTP transport under kz's own (benchmarks that
	// replay a recorded stream without a socket).
	Transport http.RoundTripper
}

// DefaultKeyEnv returns the usual API key variable of a provider.
func DefaultKeyEnv(p Provider) string {
	switch p {
	case ProviderAnthropic:
		return "ANTHROPIC_API_KEY"
	case ProviderGemini:
		return "GEMINI_API_KEY"
	default:
		return "OPENAI_API_KEY"
	}
}

func (c Config) keyEnv() string {
	if c.APIKeyEnv != "" {
		return c.APIKeyEnv
	}
	return DefaultKeyEnv(c.Provider)
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 60 * time.Second
}

// apiKey reads the key. A missing key is an auth error naming the variable,
// except for an OpenAI-compatible server at a custom base URL (Ollama, vLLM
// and most local servers need none).
func (c Config) apiKey() (string, error) {
	if c.APIKeyFile != "" {
		return readKeyFile(c.APIKeyFile)
	}
	lookup := c.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	name := c.keyEnv()
	if v, ok := lookup(name); ok && v != "" {
		return v, nil
	}
	if c.Provider == ProviderOpenAI && c.BaseURL != "" {
		return "", nil
	}
	return "", &engine.RuntimeError{Kind: engine.ErrAuth,
		Message: fmt.Sprintf("no API key: set the environment variable %s", name)}
}

// Check reports why a client with this configuration cannot work (an
// unknown provider or a missing key), for `kz runtimes`. It sends nothing.
func (c Config) Check() error {
	if _, err := ParseProvider(string(c.Provider)); err != nil {
		return err
	}
	_, err := c.apiKey()
	return err
}

// New builds the client of cfg.Provider.
func New(cfg Config) (Client, error) {
	quietStdLog()
	if _, err := ParseProvider(string(cfg.Provider)); err != nil {
		return nil, err
	}
	key, err := cfg.apiKey()
	if err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case ProviderAnthropic:
		return newAnthropic(cfg, key), nil
	case ProviderGemini:
		return newGemini(cfg, key)
	default:
		switch cfg.OpenAIAPI {
		case "", OpenAIChat:
			return newOpenAI(cfg, key), nil
		case OpenAIResponses:
			return &responsesClient{newOpenAI(cfg, key)}, nil
		}
		return nil, fmt.Errorf("unknown OpenAI API %q (use chat or responses)", cfg.OpenAIAPI)
	}
}

// Reachable checks that the endpoint accepts TCP connections, for `kz
// runtimes` to say "unreachable base URL" before a turn fails on it. It
// sends no request and no key.
func (c Config) Reachable(ctx context.Context) error {
	base := c.BaseURL
	if base == "" {
		switch c.Provider {
		case ProviderAnthropic:
			base = "https://api.anthropic.com"
		case ProviderGemini:
			base = "https://generativelanguage.googleapis.com"
		default:
			base = "https://api.openai.com"
		}
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("base URL %q is not a URL", base)
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("%s is unreachable: %w", base, err)
	}
	return conn.Close()
}

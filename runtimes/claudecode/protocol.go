package claudecode

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// wireMsg is one line of the CLI's stdout, decoded as far as kz needs
// (protocol notes §5). Fields of different kinds share the struct; unknown
// fields are ignored so that a newer CLI does not break decoding.
type wireMsg struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`

	// system/init
	Model          string   `json:"model"`
	Tools          []string `json:"tools"`
	PermissionMode string   `json:"permissionMode"`
	Version        string   `json:"claude_code_version"`
	// system/status: "requesting" or null.
	Status json.RawMessage `json:"status"`

	// assistant and user: an object; system/permission_denied: a string.
	Message         json.RawMessage `json:"message"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	ToolUseResult   json.RawMessage `json:"tool_use_result"`
	// Error is set on synthetic API-error assistant lines and api_retry.
	Error string `json:"error"`

	// stream_event
	Event json.RawMessage `json:"event"`

	// control_request, control_cancel_request, control_response
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Response  json.RawMessage `json:"response"`

	// result
	IsError           bool              `json:"is_error"`
	Result            string            `json:"result"`
	NumTurns          int               `json:"num_turns"`
	TotalCostUSD      float64           `json:"total_cost_usd"`
	Usage             *apiUsage         `json:"usage"`
	APIErrorStatus    *int              `json:"api_error_status"`
	TerminalReason    string            `json:"terminal_reason"`
	Errors            []string          `json:"errors"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
	DurationMS        int64             `json:"duration_ms"`

	// system/permission_denied, system/api_retry
	ToolName    string `json:"tool_name"`
	ToolUseID   string `json:"tool_use_id"`
	Attempt     int    `json:"attempt"`
	MaxRetries  int    `json:"max_retries"`
	ErrorStatus *int   `json:"error_status"`

	// recv is when kz read the line, for latency measurements.
	recv time.Time
}

// parent returns the tool call a subagent line belongs to, or "".
func (m *wireMsg) parent() string {
	if m.ParentToolUseID == nil {
		return ""
	}
	return *m.ParentToolUseID
}

// apiUsage is Anthropic's token count.
type apiUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// apiMessage is the message of an assistant or user line.
type apiMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentBlock is one block of a message's content.
type contentBlock struct {
	Type string `json:"type"`
	// text
	Text string `json:"text"`
	// thinking
	Thinking string `json:"thinking"`
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// blocks decodes content, which may be a plain string.
func blocks(raw json.RawMessage) []contentBlock {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []contentBlock{{Type: "text", Text: s}}
		}
		return nil
	}
	var out []contentBlock
	_ = json.Unmarshal(raw, &out)
	return out
}

// contentText flattens a tool result's content (a string or text blocks).
func contentText(raw json.RawMessage) string {
	var b strings.Builder
	for _, c := range blocks(raw) {
		if c.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// streamEvent is the raw Anthropic SSE payload inside a stream_event line.
type streamEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock *struct {
		Type string `json:"type"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
}

// canUseTool is the request of a can_use_tool control request.
type canUseTool struct {
	Subtype     string          `json:"subtype"`
	ToolName    string          `json:"tool_name"`
	Input       json.RawMessage `json:"input"`
	Description string          `json:"description"`
	BlockedPath string          `json:"blocked_path"`
	ToolUseID   string          `json:"tool_use_id"`
}

// controlResponse is the response of a control_response line.
type controlResponse struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response"`
	Error     string          `json:"error"`
}

// userLine is what kz writes for a user message.
type userLine struct {
	Type            string      `json:"type"`
	SessionID       string      `json:"session_id"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	Message         userMessage `json:"message"`
}

type userMessage struct {
	Role    string      `json:"role"`
	Content []userBlock `json:"content"`
}

// userBlock is a text or an image block of a user message, in the
// Messages API's form, which Claude Code's stream-json input takes as is.
type userBlock struct {
	Type   string       `json:"type"`
	Text   string       `json:"text,omitempty"`
	Source *imageSource `json:"source,omitempty"`
}

// imageSource is an inline base64 image.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// newUserLine is a user message: the text, then each image as a base64
// image block (Claude Code passes the blocks to the model unchanged).
func newUserLine(text string, images ...engine.Image) userLine {
	content := []userBlock{{Type: "text", Text: text}}
	for _, im := range images {
		content = append(content, userBlock{Type: "image", Source: &imageSource{Type: "base64", MediaType: im.MediaType,
			Data: base64.StdEncoding.EncodeToString(im.Data)}})
	}
	return userLine{Type: "user", Message: userMessage{Role: "user", Content: content}}
}

// permissionResult is the decision kz sends back for can_use_tool (notes §7).
type permissionResult struct {
	Behavior           string          `json:"behavior"`
	UpdatedInput       json.RawMessage `json:"updatedInput,omitempty"`
	UpdatedPermissions []permUpdate    `json:"updatedPermissions,omitempty"`
	Message            string          `json:"message,omitempty"`
	Interrupt          bool            `json:"interrupt,omitempty"`
	ToolUseID          string          `json:"toolUseID,omitempty"`
}

type permUpdate struct {
	Type        string     `json:"type"`
	Rules       []permRule `json:"rules"`
	Behavior    string     `json:"behavior"`
	Destination string     `json:"destination"`
}

type permRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// controlResponseLine wraps a decision in the control_response envelope.
func controlResponseLine(requestID string, res permissionResult) map[string]any {
	return map[string]any{"type": "control_response",
		"response": map[string]any{"subtype": "success", "request_id": requestID, "response": res}}
}

package engine

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// EventType names an event on the wire. The values are a public interface:
// `kz -p --output-format stream-json` prints them and the store keeps them, so
// a value never changes once released.
type EventType string

// The event types of ARCHITECTURE.md, plus user_message, which records the
// person's prompt so that the event log alone can rebuild a conversation.
const (
	EventSessionStarted      EventType = "session_started"
	EventUserMessage         EventType = "user_message"
	EventTextDelta           EventType = "text_delta"
	EventReasoningDelta      EventType = "reasoning_delta"
	EventAssistantMessage    EventType = "assistant_message"
	EventToolCallStarted     EventType = "tool_call_started"
	EventToolCallProgress    EventType = "tool_call_progress"
	EventToolCallFinished    EventType = "tool_call_finished"
	EventPermissionRequested EventType = "permission_requested"
	EventPermissionDecided   EventType = "permission_decided"
	EventFileEdited          EventType = "file_edited"
	EventCommandStarted      EventType = "command_started"
	EventCommandFinished     EventType = "command_finished"
	EventPatchProposed       EventType = "patch_proposed"
	EventPatchApplied        EventType = "patch_applied"
	EventPatchRejected       EventType = "patch_rejected"
	EventUsageUpdated        EventType = "usage_updated"
	EventCompactBoundary     EventType = "compact_boundary"
	EventRuntimeSwitched     EventType = "runtime_switched"
	EventModeChanged         EventType = "mode_changed"
	// EventConversationRewound marks, append-only, that the conversation
	// goes back to before a turn (/rewind): later turns are primed as if
	// the turns from that one on had not happened.
	EventConversationRewound EventType = "conversation_rewound"
	EventError               EventType = "error"
	// EventNotice is something kz tells the person that is neither an
	// error nor part of the model's reply: what a hook said that nobody
	// could act on, or why a turn went on after the model ended it. Stage
	// names who speaks ("hook"); Feedback, when set, is what the model
	// was told because of it, which the conversation keeps.
	EventNotice      EventType = "notice"
	EventFinalResult EventType = "final_result"
)

// AllEventTypes lists every known event type in a stable order.
var AllEventTypes = []EventType{
	EventSessionStarted, EventUserMessage, EventTextDelta, EventReasoningDelta,
	EventAssistantMessage, EventToolCallStarted, EventToolCallProgress,
	EventToolCallFinished, EventPermissionRequested, EventPermissionDecided,
	EventFileEdited, EventCommandStarted, EventCommandFinished, EventPatchProposed,
	EventPatchApplied, EventPatchRejected, EventUsageUpdated, EventCompactBoundary,
	EventRuntimeSwitched, EventModeChanged, EventError, EventNotice, EventFinalResult,
	EventConversationRewound,
}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	for _, k := range AllEventTypes {
		if k == t {
			return true
		}
	}
	return false
}

// Coalescible reports whether consecutive events of this type may be merged
// or, for progress, thinned when a consumer falls behind. Everything else is
// delivered one by one and in order.
func (t EventType) Coalescible() bool {
	switch t {
	case EventTextDelta, EventReasoningDelta, EventToolCallProgress:
		return true
	}
	return false
}

// MustDeliver reports whether the event may never be dropped or delayed: the
// store flushes at once when it sees one.
func (t EventType) MustDeliver() bool {
	switch t {
	case EventPermissionRequested, EventError, EventFinalResult:
		return true
	}
	return false
}

// Event is one normalized event of a session. It is a flat record: the
// fields that a type uses are set and the rest are left zero, so the JSON form
// stays small and the same struct decodes scripted runtime lines strictly.
//
// SessionID, Seq and Time are assigned by the Session, never by a runtime.
type Event struct {
	Type      EventType `json:"type"`
	SessionID string    `json:"session_id,omitempty"`
	Seq       int64     `json:"seq,omitempty"`
	Time      time.Time `json:"time,omitzero"`
	Runtime   string    `json:"runtime,omitempty"`
	Model     string    `json:"model,omitempty"`
	TurnID    int64     `json:"turn_id,omitempty"`

	// Text is the delta, message or prompt text of text-bearing events and
	// the human-readable message of an error; on a final_result it is the
	// error that ended the turn, if one did (ErrorKind then classifies it).
	// On the tool_call_finished and command_finished with which the session
	// closes a call its turn cut short (Output InterruptedNotRerun), it is
	// the output the call had shown in tool_call_progress events, which
	// are not stored, up to ShownOutputMax bytes.
	Text string `json:"text,omitempty"`
	// Images, on a user_message, are the images attached to the prompt:
	// their description and store reference, never their bytes (see
	// Image).
	Images []Image `json:"images,omitempty"`
	// Partial marks an assistant_message assembled from deltas of a turn
	// that ended before the runtime sent the whole message.
	Partial bool `json:"partial,omitempty"`

	// session_started
	Tools          []string `json:"tools,omitempty"`
	PermissionMode string   `json:"permission_mode,omitempty"`
	Version        string   `json:"version,omitempty"`
	NativeID       string   `json:"native_session_id,omitempty"`
	// Memory lists the project memory files the turn runs under, with
	// their estimated size in tokens.
	Memory []MemoryFile `json:"memory,omitempty"`

	// tool calls
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`

	// permissions
	RequestID string      `json:"request_id,omitempty"`
	Decision  Decision    `json:"decision,omitempty"`
	Scope     AnswerScope `json:"scope,omitempty"`
	Stage     string      `json:"stage,omitempty"`
	Rule      string      `json:"rule,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	Paths     []string    `json:"paths,omitempty"`
	Feedback  string      `json:"feedback,omitempty"`
	// Grants, on a permission_requested, are the rules "always allow"
	// would save (none when the request cannot be granted for good), so
	// the prompt can say what a permanent answer covers.
	Grants []string `json:"grants,omitempty"`
	// Confinement, on a permission_decided that allows a shell command,
	// is the sandbox the command runs under.
	Confinement *Confinement `json:"confinement,omitempty"`
	Status      string       `json:"status,omitempty"`
	Files       []FileChange `json:"files,omitempty"`
	// Write and Selection, on a permission_requested, say the request
	// changes files and what part of it the runtime can take (see
	// PermissionRequest): a front end reviews every write alike, by kind
	// rather than by tool name.
	Write     bool      `json:"write,omitempty"`
	Selection Selection `json:"selection,omitempty"`

	// file_edited, command_*
	Path     string `json:"path,omitempty"`
	Diff     string `json:"diff,omitempty"`
	Command  string `json:"command,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	PatchID  string `json:"patch_id,omitempty"`

	// usage_updated and final_result
	Usage      *Usage  `json:"usage,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
	Cycles     int     `json:"cycles,omitempty"`
	DurationMS int64   `json:"duration_ms,omitempty"`
	// PermissionDenials lists, on final_result, every tool call denied
	// during the turn, whoever denied it (kz's gate, the person, or the
	// runtime's own agent).
	PermissionDenials []PermissionDenial `json:"permission_denials,omitempty"`

	// compact_boundary
	TokensBefore int `json:"tokens_before,omitempty"`
	TokensAfter  int `json:"tokens_after,omitempty"`

	// conversation_rewound: the conversation goes back to before turn
	// RewindTurn; LastTurn was the session's last turn then.
	RewindTurn int64 `json:"rewind_turn,omitempty"`
	LastTurn   int64 `json:"last_turn,omitempty"`

	// runtime_switched and mode_changed
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Mode Mode   `json:"mode,omitempty"`

	// error, and final_result of a turn that ended with one
	ErrorKind ErrorKind `json:"error_kind,omitempty"`
	Retryable bool      `json:"retryable,omitempty"`

	// Child, on an EventChild, is the child session's event it wraps;
	// ToolCallID is then the parent's tool call that spawned the child.
	Child *ChildEvent `json:"child,omitempty"`
}

// PermissionDenial is one tool call denied during a turn, as final_result
// reports it. Input is a short summary (the command, the path, or the
// input's JSON cut to DenialInputMax bytes), not the whole input.
type PermissionDenial struct {
	Tool       string `json:"tool"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Input      string `json:"input,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// DenialInputMax bounds PermissionDenial.Input.
const DenialInputMax = 200

// DenialInput summarises a denied call's input: the shell command or the
// path when there is one, else the compacted JSON input, cut at a rune
// boundary to at most DenialInputMax bytes.
func DenialInput(command, path string, input json.RawMessage) string {
	s := command
	if s == "" {
		s = path
	}
	if s == "" && len(input) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, input) == nil {
			s = b.String()
		} else {
			s = string(input)
		}
	}
	if len(s) <= DenialInputMax {
		return s
	}
	cut := DenialInputMax - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// FileChange is one file of a proposed or applied change.
type FileChange struct {
	Path      string `json:"path"`
	Operation string `json:"operation,omitempty"`
	Diff      string `json:"diff,omitempty"`
	Added     int    `json:"added,omitempty"`
	Removed   int    `json:"removed,omitempty"`
}

// Usage counts tokens. On usage_updated it is the usage of one model
// response; on final_result the total of the turn.
type Usage struct {
	InputTokens      int64 `json:"input_tokens,omitempty"`
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
}

// IsZero reports whether no token was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// Status is the final status of a turn (final_result.status).
type Status string

// Final statuses. Each limit has its own so that a script or the person can
// tell why a turn stopped.
const (
	StatusComplete       Status = "complete"
	StatusInterrupted    Status = "interrupted"
	StatusError          Status = "error"
	StatusMaxCycles      Status = "max_cycles"
	StatusBudgetExceeded Status = "budget_exceeded"
	StatusTimeout        Status = "timeout"
)

// Decision is the outcome of a permission check.
type Decision string

// Decisions. Ask means the person (or, headless, the permission mode) decides.
const (
	DecisionAllow Decision = "allow"
	DecisionDeny  Decision = "deny"
	DecisionAsk   Decision = "ask"
)

// Restrictiveness orders decisions: deny is stricter than ask, ask than allow.
func (d Decision) Restrictiveness() int {
	switch d {
	case DecisionAllow:
		return 0
	case DecisionAsk:
		return 1
	default:
		// Anything unknown is treated as the strictest, so a typo fails closed.
		return 2
	}
}

// Stricter returns the more restrictive of d and o.
func (d Decision) Stricter(o Decision) Decision {
	if o.Restrictiveness() > d.Restrictiveness() {
		return o
	}
	return d
}

// AnswerScope says how far a person's answer to a permission request reaches.
type AnswerScope string

// Answer scopes.
const (
	ScopeOnce    AnswerScope = "once"
	ScopeSession AnswerScope = "session"
	ScopeAlways  AnswerScope = "always"
)

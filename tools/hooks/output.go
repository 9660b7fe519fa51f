package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Output is a hook's JSON answer on stdout (exit status 0), with Claude
// Code's field names. Every field is optional.
type Output struct {
	// Continue false stops the work: for PreToolUse the call is denied,
	// for UserPromptSubmit the prompt is refused, with StopReason.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput hides the hook's stdout from the transcript.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// SystemMessage is shown to the person.
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision is the older, event-independent answer: "block" (refuse
	// the call, the prompt, or the stop) or "approve" (PreToolUse only:
	// allow), with Reason.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// HookSpecificOutput carries the event's own answer.
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is the hookSpecificOutput object.
type Specific struct {
	HookEventName string `json:"hookEventName,omitempty"`
	// PermissionDecision (PreToolUse) is "allow", "deny" or "ask";
	// Claude Code's "defer" is taken as "ask".
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// AdditionalContext (UserPromptSubmit, SessionStart, PostToolUse) is
	// text given to the model.
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// parseOutput reads a hook's stdout. Output that starts with "{" must be
// one JSON object of the shape above with known decision values;
// anything else is plain text (Claude Code shows it, and for
// UserPromptSubmit and SessionStart gives it to the model). A malformed
// answer is an error: its hook has not said what it meant.
func parseOutput(stdout []byte, ev Event) (*Output, string, error) {
	t := bytes.TrimSpace(stdout)
	if len(t) == 0 {
		return nil, "", nil
	}
	if t[0] != '{' {
		return nil, string(t), nil
	}
	var o Output
	dec := json.NewDecoder(bytes.NewReader(t))
	if err := dec.Decode(&o); err != nil {
		return nil, "", fmt.Errorf("the output is not valid hook JSON: %w", err)
	}
	if dec.More() {
		return nil, "", fmt.Errorf("the output has more than one JSON value")
	}
	switch o.Decision {
	case "", "block":
	case "approve":
		if ev != PreToolUse {
			return nil, "", fmt.Errorf("decision %q is only meaningful for PreToolUse, not %s", o.Decision, ev)
		}
	default:
		return nil, "", fmt.Errorf("unknown decision %q (use \"block\" or, for PreToolUse, \"approve\")", o.Decision)
	}
	if s := o.HookSpecificOutput; s != nil {
		if s.HookEventName != "" && s.HookEventName != string(ev) {
			return nil, "", fmt.Errorf("hookSpecificOutput.hookEventName %q answers another event than %s", s.HookEventName, ev)
		}
		switch s.PermissionDecision {
		case "", "allow", "deny", "ask", "defer":
		default:
			return nil, "", fmt.Errorf("unknown permissionDecision %q (use allow, deny or ask)", s.PermissionDecision)
		}
		if s.PermissionDecision != "" && ev != PreToolUse {
			return nil, "", fmt.Errorf("permissionDecision is only meaningful for PreToolUse, not %s", ev)
		}
	}
	return &o, "", nil
}

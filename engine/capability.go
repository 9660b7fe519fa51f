package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Capability is one thing a runtime can do.
type Capability string

// Capabilities a runtime can declare (ARCHITECTURE.md).
const (
	CapTextCompletion   Capability = "text_completion"
	CapStreamingText    Capability = "streaming_text"
	CapStructuredOutput Capability = "structured_output"
	CapNativeToolLoop   Capability = "native_tool_loop"
	CapFunctionTools    Capability = "function_tools"
	CapMCP              Capability = "mcp"
	CapFilesystemRead   Capability = "filesystem_read"
	CapFilesystemEdit   Capability = "filesystem_edit"
	CapShell            Capability = "shell"
	CapApplyPatch       Capability = "apply_patch"
	CapSubagents        Capability = "subagents"
	CapSandbox          Capability = "sandbox"
	CapInterrupt        Capability = "interrupt"
	CapResume           Capability = "resume"
	CapVision           Capability = "vision"
	// CapWebSearch is a search the runtime's model provider runs on its
	// own servers, offered to the model as the web_search tool.
	CapWebSearch Capability = "web_search"
)

// AllCapabilities lists every capability in its canonical order; CapSet
// bits follow this order.
var AllCapabilities = []Capability{
	CapTextCompletion, CapStreamingText, CapStructuredOutput, CapNativeToolLoop,
	CapFunctionTools, CapMCP, CapFilesystemRead, CapFilesystemEdit, CapShell,
	CapApplyPatch, CapSubagents, CapSandbox, CapInterrupt, CapResume, CapVision,
	CapWebSearch,
}

func (c Capability) bit() (CapSet, bool) {
	for i, k := range AllCapabilities {
		if k == c {
			return 1 << i, true
		}
	}
	return 0, false
}

// ParseCapability validates a capability name.
func ParseCapability(s string) (Capability, error) {
	c := Capability(s)
	if _, ok := c.bit(); !ok {
		return "", fmt.Errorf("unknown capability %q (known: %s)", s, NewCapSet(AllCapabilities...))
	}
	return c, nil
}

// CapSet is a set of capabilities as a bit set, so that checks on the hot
// path of selection cost nothing.
type CapSet uint32

// NewCapSet builds a set; unknown names are ignored (ParseCapability
// validates user input before it gets here).
func NewCapSet(caps ...Capability) CapSet {
	var s CapSet
	for _, c := range caps {
		if b, ok := c.bit(); ok {
			s |= b
		}
	}
	return s
}

// Has reports whether every capability of o is in s.
func (s CapSet) Has(o CapSet) bool { return s&o == o }

// Missing returns the capabilities of want that s lacks.
func (s CapSet) Missing(want CapSet) CapSet { return want &^ s }

// List returns the capabilities in canonical order.
func (s CapSet) List() []Capability {
	var out []Capability
	for i, c := range AllCapabilities {
		if s&(1<<i) != 0 {
			out = append(out, c)
		}
	}
	return out
}

// String renders the set as a comma-separated list, or "none".
func (s CapSet) String() string {
	l := s.List()
	if len(l) == 0 {
		return "none"
	}
	parts := make([]string, len(l))
	for i, c := range l {
		parts[i] = string(c)
	}
	return strings.Join(parts, ", ")
}

// MarshalJSON writes the set as a list of names.
func (s CapSet) MarshalJSON() ([]byte, error) {
	l := s.List()
	if l == nil {
		l = []Capability{}
	}
	return json.Marshal(l)
}

// UnmarshalJSON reads a list of names; an unknown name is an error.
func (s *CapSet) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("capabilities must be a list of names: %w", err)
	}
	var out CapSet
	for _, n := range names {
		c, err := ParseCapability(n)
		if err != nil {
			return err
		}
		out |= NewCapSet(c)
	}
	*s = out
	return nil
}

// Capabilities is what a runtime declares for one model: the set, its
// limits, and hints the selector uses.
type Capabilities struct {
	Set           CapSet `json:"capabilities"`
	ContextWindow int    `json:"context_window,omitempty"`
	MaxOutput     int    `json:"max_output,omitempty"`
	// InputPerMTok and OutputPerMTok are USD per million tokens; zero
	// means unknown (or free, for a local model).
	InputPerMTok  float64 `json:"input_per_mtok,omitempty"`
	OutputPerMTok float64 `json:"output_per_mtok,omitempty"`
	// LatencyMS is a typical time to first token; zero means unknown.
	LatencyMS int `json:"latency_ms,omitempty"`
	// ReportsCost says the runtime reports what its turns cost (Claude
	// Code does). Without it, kz prices the runtime's tokens from its
	// model catalog, and a budget needs a model the catalog prices.
	ReportsCost bool `json:"reports_cost,omitempty"`
}

// Has reports whether the runtime has every capability listed.
func (c Capabilities) Has(caps ...Capability) bool { return c.Set.Has(NewCapSet(caps...)) }

// Mode is how much the agent may do on its own.
type Mode string

// Modes (ARCHITECTURE.md, "Modes and their requirements").
const (
	ModeFullAutonomous Mode = "full-autonomous"
	ModePatchProposal  Mode = "patch-proposal"
	ModeAnalysisOnly   Mode = "analysis-only"
)

// Modes lists the modes in the order the TUI cycles through them.
var Modes = []Mode{ModeFullAutonomous, ModePatchProposal, ModeAnalysisOnly}

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	m := Mode(s)
	if slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (use full-autonomous, patch-proposal or analysis-only)", s)
}

// Next returns the mode after m in the cycle.
func (m Mode) Next() Mode {
	i := slices.Index(Modes, m)
	return Modes[(i+1)%len(Modes)]
}

// Requirements are what a mode needs from a runtime. Required capabilities
// must all be present; preferred ones change how kz drives the runtime
// (patch-proposal uses the provider's JSON-schema mode when it has
// structured_output and a prompted format with robust extraction otherwise),
// so their absence never blocks a turn.
type Requirements struct {
	Required  CapSet
	Preferred CapSet
}

// RequirementsFor returns the requirements of a mode.
func RequirementsFor(m Mode) Requirements {
	switch m {
	case ModeFullAutonomous:
		return Requirements{Required: NewCapSet(CapFilesystemEdit, CapShell, CapNativeToolLoop)}
	case ModePatchProposal:
		return Requirements{Required: NewCapSet(CapTextCompletion), Preferred: NewCapSet(CapStructuredOutput)}
	default:
		return Requirements{Required: NewCapSet(CapTextCompletion)}
	}
}

// CapabilityError says why a runtime cannot serve a mode, and what to do.
type CapabilityError struct {
	Mode      Mode
	Runtime   string
	Model     string
	Required  CapSet
	Available CapSet
}

// Error renders the one message the CLI and the TUI show: the mode, the
// runtime, what is required, what is available, and what to do instead.
func (e *CapabilityError) Error() string {
	name := e.Runtime
	if e.Model != "" {
		name += " (model " + e.Model + ")"
	}
	msg := fmt.Sprintf("mode %s needs %s, but runtime %s has %s (missing: %s); ",
		e.Mode, e.Required, name, e.Available, e.Available.Missing(e.Required))
	var alt []string
	for _, m := range Modes {
		if m != e.Mode && e.Available.Has(RequirementsFor(m).Required) {
			alt = append(alt, string(m))
		}
	}
	if len(alt) > 0 {
		msg += "use " + strings.Join(alt, " or ") + " mode with this runtime, or pick a runtime that has them (kz runtimes)"
	} else {
		msg += "pick a runtime that has them (kz runtimes)"
	}
	return msg
}

// CheckMode returns a *CapabilityError when caps cannot serve mode.
func CheckMode(mode Mode, runtime, model string, caps Capabilities) error {
	req := RequirementsFor(mode)
	if caps.Set.Has(req.Required) {
		return nil
	}
	return &CapabilityError{Mode: mode, Runtime: runtime, Model: model, Required: req.Required, Available: caps.Set}
}

// PermissionMode says what happens to a tool call the gate would ask about.
type PermissionMode string

// Permission modes. Deny rules and safety checks hold in all of them.
const (
	PermissionAsk         PermissionMode = "ask"
	PermissionDeny        PermissionMode = "deny"
	PermissionAcceptEdits PermissionMode = "accept-edits"
	PermissionYolo        PermissionMode = "yolo"
)

// ParsePermissionMode validates a permission mode name.
func ParsePermissionMode(s string) (PermissionMode, error) {
	switch p := PermissionMode(s); p {
	case PermissionAsk, PermissionDeny, PermissionAcceptEdits, PermissionYolo:
		return p, nil
	}
	return "", fmt.Errorf("unknown permission mode %q (use ask, deny, accept-edits or yolo)", s)
}

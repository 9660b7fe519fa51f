package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// PolicyInput is what `kz policy check` passes: a tool name, its JSON input
// and the session context to judge it in.
type PolicyInput struct {
	Tool           string
	Input          json.RawMessage
	Mode           engine.Mode
	PermissionMode engine.PermissionMode
	Workspace      string
	Runtime        string
	Capabilities   engine.Capabilities
	// Request, when set, is the request exactly as the tool itself builds
	// it from Input (kz's own tools decode strictly and resolve their
	// paths; tools.PolicyCheck fills it). Without it, Input is decoded by
	// RequestFromInput, which knows other runtimes' tool names.
	Request *engine.PermissionRequest
}

// RequestFromInput decodes a tool's JSON input into the gate's request:
// {"command":...} for shell tools, {"path"|"file_path":...} for file tools
// (`paths` or `file_paths` lists are accepted too), {"url":...} for
// WebFetch. Unknown fields are ignored here (the tool's own decoder is
// strict); a missing command or path is an error.
func RequestFromInput(tool string, input json.RawMessage) (engine.PermissionRequest, error) {
	req := engine.PermissionRequest{Tool: tool, Input: input}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
		req.Input = input
	}
	var in struct {
		Command   *string  `json:"command"`
		Path      *string  `json:"path"`
		FilePath  *string  `json:"file_path"`
		Paths     []string `json:"paths"`
		FilePaths []string `json:"file_paths"`
		URL       string   `json:"url"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return req, fmt.Errorf("decode %s input: %w", tool, err)
	}
	kind := KindOf(tool)
	switch kind {
	case KindBash:
		if in.Command == nil {
			return req, fmt.Errorf("%s input needs a \"command\" string", tool)
		}
		req.Command = *in.Command
		return req, nil
	case KindRead, KindEdit, KindWrite:
		for _, p := range []*string{in.Path, in.FilePath} {
			if p != nil {
				req.Paths = append(req.Paths, *p)
			}
		}
		req.Paths = append(req.Paths, in.Paths...)
		req.Paths = append(req.Paths, in.FilePaths...)
		if len(req.Paths) == 0 && kind != KindRead {
			return req, fmt.Errorf("%s input needs a \"path\" or \"file_path\" string", tool)
		}
		req.Write = kind != KindRead
		return req, nil
	}
	return req, nil
}

// PolicyCheck judges a tool call exactly as Check would, for
// `kz policy check`, and returns the full report.
func (g *Gate) PolicyCheck(ctx context.Context, in PolicyInput) (Report, error) {
	if in.Tool == "" {
		return Report{}, fmt.Errorf("policy check: --tool is required")
	}
	var req engine.PermissionRequest
	if in.Request != nil {
		req = *in.Request
		req.Tool = in.Tool
	} else {
		var err error
		if req, err = RequestFromInput(in.Tool, in.Input); err != nil {
			return Report{}, fmt.Errorf("policy check: %w", err)
		}
	}
	if in.Mode == "" {
		in.Mode = engine.ModeFullAutonomous
	}
	if in.PermissionMode == "" {
		in.PermissionMode = engine.PermissionAsk
	}
	q := engine.GateQuery{Runtime: in.Runtime, Capabilities: in.Capabilities, Mode: in.Mode,
		PermissionMode: in.PermissionMode, Workspace: in.Workspace, Request: req}
	return g.Judge(ctx, q), nil
}

// Text renders the report for a terminal: the decision, the stage and rule
// that decided, the reason, and the parsed sub-commands.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "decision: %s\nstage:    %s\n", r.Decision, r.Stage)
	if r.Rule != "" {
		fmt.Fprintf(&b, "rule:     %s\n", r.Rule)
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "reason:   %s\n", r.Reason)
	}
	if r.Class != "" {
		fmt.Fprintf(&b, "class:    %s\n", r.Class)
	}
	if !r.Confinement.IsZero() {
		// On an ask, the profile the person's yes gives; on a deny it
		// never runs, so there is nothing to show.
		if r.Decision != engine.DecisionDeny {
			fmt.Fprintf(&b, "sandbox:  %s\n", r.Confinement)
		}
	}
	if len(r.Subcommands) > 0 {
		b.WriteString("subcommands:\n")
		for _, s := range r.Subcommands {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	if len(r.Targets) > 0 {
		b.WriteString("paths:\n")
		for _, t := range r.Targets {
			fmt.Fprintf(&b, "  %s %s", t.Op, t.Path)
			if t.Resolved != "" && t.Resolved != t.Path {
				fmt.Fprintf(&b, " (%s)", t.Resolved)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// DeniesTool reports whether a deny rule without a spec (`Bash`,
// `WebFetch`, `mcp__server`, `Edit`) removes the tool entirely, so that the
// registry can hide it from the model before any call.
func (g *Gate) DeniesTool(tool string) bool {
	kind := KindOf(tool)
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, r := range g.rules {
		if r.Action != ActionDeny || !r.matchesAll() {
			continue
		}
		switch {
		case kind == KindBash || kind == KindRead || kind == KindWebFetch:
			if r.Kind == kind {
				return true
			}
		case kind == KindEdit || kind == KindWrite:
			if r.Kind == KindEdit || r.Kind == KindWrite {
				return true
			}
		case r.matchToolName(tool):
			return true
		}
	}
	return false
}

package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/tools"
)

// toolInput holds the input fields of Claude's tools that kz's gate needs.
type toolInput struct {
	Command      string `json:"command"`
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	ReplaceAll   bool   `json:"replace_all"`
	Content      string `json:"content"`
	Edits        []struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	} `json:"edits"`
}

func decodeInput(raw json.RawMessage) toolInput {
	var in toolInput
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &in)
	}
	return in
}

// pathArg is the file or directory a tool names.
func (in toolInput) pathArg() string {
	switch {
	case in.FilePath != "":
		return in.FilePath
	case in.NotebookPath != "":
		return in.NotebookPath
	default:
		return in.Path
	}
}

// writeTools change files; readTools only look at them.
var (
	writeTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}
	readTools  = map[string]bool{"Read": true, "Grep": true, "Glob": true, "LS": true}
)

// permissionRequest renders a can_use_tool request in kz's runtime-neutral
// view: Bash is a Command for the shell rules and parser, file tools name
// their resolved Paths (Write marks the ones that change files), and any
// other tool (WebFetch, WebSearch, MCP tools) is judged by name and input.
//
// A write whose result kz can compute (Edit, Write, MultiEdit) carries its
// diff against the file as it is, and the preview it was computed from:
// the person may keep part of it, which decide turns into the tool's
// input.
func (tr *turnRun) permissionRequest(req canUseTool) (engine.PermissionRequest, *preview) {
	pr := engine.PermissionRequest{ToolCallID: req.ToolUseID, Tool: req.ToolName, Input: req.Input}
	in := decodeInput(req.Input)
	var pv *preview
	switch {
	case req.ToolName == "Bash":
		pr.Command = in.Command
	case writeTools[req.ToolName]:
		path := tr.resolve(in.pathArg())
		pr.Paths, pr.Write = []string{path}, true
		if pv = previewWrite(req.ToolName, in, path, tr.workspace()); pv != nil {
			pr.Diff = pv.diff
			if pv.complete {
				pr.Selection = engine.SelectionContent
			}
		}
	case readTools[req.ToolName]:
		p := in.pathArg()
		if p == "" {
			p = tr.workspace()
		}
		pr.Paths = []string{tr.resolve(p)}
	}
	return pr, pv
}

// decide asks kz (gate, then person) about one tool call and renders the
// answer for the CLI.
func (tr *turnRun) decide(ctx context.Context, req canUseTool) permissionResult {
	deny := func(msg string) permissionResult {
		return permissionResult{Behavior: "deny", Message: msg, ToolUseID: req.ToolUseID}
	}
	// refuse denies without asking anybody; the decision is logged like
	// the gate's, so that every denial of the turn is in kz's log.
	refuse := func(stage, msg string) permissionResult {
		tr.t.Emit(engine.Event{Type: engine.EventPermissionDecided, ToolCallID: req.ToolUseID, Tool: req.ToolName,
			Input: req.Input, Decision: engine.DecisionDeny, Stage: stage, Reason: msg})
		return deny(msg)
	}
	tr.permMu.Lock()
	early, ok := tr.early[req.ToolUseID]
	delete(tr.early, req.ToolUseID)
	tr.permMu.Unlock()
	if ok && early.ToolName == req.ToolName && bytes.Equal(early.Input, req.Input) {
		// kz's gate allowed this very call at the PreToolUse hook, where
		// it was logged; Claude asks anyway (an older CLI, or one that
		// asks twice): the same yes, not logged a second time. Any other
		// input goes through the gate again.
		input := req.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return permissionResult{Behavior: "allow", UpdatedInput: input, ToolUseID: req.ToolUseID}
	}
	if req.ToolName == "AskUserQuestion" {
		return refuse("runtime", "kz cannot show interactive questions here. Ask the question in your reply and end your turn; the person answers in the next message.")
	}
	if req.ToolName == "ExitPlanMode" && tr.t.Mode == engine.ModeAnalysisOnly {
		return refuse("mode", "kz keeps this session in analysis-only mode: present your analysis or plan as text.")
	}
	pr, pv := tr.permissionRequest(req)
	// Claude was started without these tools in these modes; one that
	// still arrives is refused without asking anybody.
	if (tr.t.Mode == engine.ModeAnalysisOnly && (pr.Write || pr.Command != "")) ||
		(tr.t.Mode == engine.ModePatchProposal && pr.Write) {
		return refuse("mode", fmt.Sprintf("%s is not allowed in %s mode.", req.ToolName, tr.t.Mode))
	}
	a := tr.t.RequestPermission(ctx, pr)
	if !a.Allowed() {
		msg := a.Feedback
		if msg == "" {
			msg = "kz denied this tool call"
			if a.Reason != "" {
				msg += ": " + a.Reason
			}
			msg += "."
		}
		return deny(msg)
	}
	input := req.Input
	if len(a.UpdatedInput) > 0 {
		input = a.UpdatedInput
	}
	if a.Patch != nil && pv != nil {
		kept, err := keptInput(req.ToolName, input, pv, a.Patch)
		if err != nil {
			return refuse("review", "kz could not apply the part of the edit the person kept: "+err.Error())
		}
		if kept == nil {
			return refuse("review", "the person rejected every change of this edit.")
		}
		input = kept
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	res := permissionResult{Behavior: "allow", UpdatedInput: input, ToolUseID: req.ToolUseID}
	if (a.Scope == engine.ScopeSession || a.Scope == engine.ScopeAlways) && req.ToolName == "Bash" {
		// Scoped to this exact command and to Claude's session only:
		// nothing is written to Claude's settings files. kz's gate keeps
		// its own grant (and the "always" part), which is what allows
		// the command again: kz's PreToolUse answer ("ask") still sends
		// every later call of it through the gate and its hooks.
		if cmd := decodeInput(input).Command; cmd != "" {
			res.UpdatedPermissions = []permUpdate{{Type: "addRules", Behavior: "allow", Destination: "session",
				Rules: []permRule{{ToolName: "Bash", RuleContent: cmd}}}}
		}
	}
	return res
}

// resolve makes a tool's path absolute against the workspace and cleans it;
// the gate then checks the real location.
func (tr *turnRun) resolve(p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(tr.workspace(), p)
	}
	return filepath.Clean(p)
}

// relTo renders path relative to the workspace when it is inside it.
func relTo(path, ws string) string {
	if ws == "" {
		return path
	}
	if rel, err := filepath.Rel(ws, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// editResult is the structured tool_use_result of Edit, Write, MultiEdit.
type editResult struct {
	Type            string `json:"type"`
	FilePath        string `json:"filePath"`
	Content         string `json:"content"`
	StructuredPatch []struct {
		OldStart int      `json:"oldStart"`
		OldLines int      `json:"oldLines"`
		NewStart int      `json:"newStart"`
		NewLines int      `json:"newLines"`
		Lines    []string `json:"lines"`
	} `json:"structuredPatch"`
}

// editedDiff renders the change a finished write tool made, from Claude's
// structured patch; a created file is all additions.
func editedDiff(raw json.RawMessage, fallback, ws string) (string, string) {
	var r editResult
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &r) != nil {
		return fallback, ""
	}
	path := fallback
	if r.FilePath != "" {
		path = r.FilePath
	}
	rel := relTo(path, ws)
	if r.Type == "create" && len(r.StructuredPatch) == 0 {
		return path, tools.UnifiedDiff(rel, nil, []byte(r.Content), false)
	}
	f := diff.File{OldPath: rel, NewPath: rel}
	for _, h := range r.StructuredPatch {
		f.Hunks = append(f.Hunks, diff.ParseHunk(h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Lines))
	}
	return path, diff.Format(f)
}

// isRejection says a tool result is Claude's "the user rejected it", which
// after kz's interrupt means the call was cut short.
func isRejection(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.Contains(s, "rejected")
}

// exitCodeRE is compiled on first use, so that every kz process does not pay
// for it at start.
var exitCodeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Exit code (\d+)`) })

// exitCode reads a Bash result's exit code: Claude reports failures as
// "Exit code N" at the start of an error result, success as no error.
func exitCode(isError bool, out string) *int {
	if !isError {
		z := 0
		return &z
	}
	if m := exitCodeRE().FindStringSubmatch(out); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return &n
		}
	}
	return nil
}

package permission

import (
	"slices"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
)

// Kind is the family of tools a rule or request belongs to.
type Kind string

// Tool kinds. Tools not listed form a kind of their own (their name).
const (
	KindBash     Kind = "Bash"
	KindRead     Kind = "Read"
	KindEdit     Kind = "Edit"
	KindWrite    Kind = "Write"
	KindWebFetch Kind = "WebFetch"
)

// toolKinds maps the tool names whose input the gate reads (a command, a
// path, a URL), kz's and other runtimes' (Claude Code, Codex, Gemini CLI),
// to their rule kind. KindOf and KnownTools both read it. The map is built
// on first use, so that every kz process does not pay for it at start.
var toolKinds = sync.OnceValue(func() map[string]Kind {
	m := map[string]Kind{}
	for kind, names := range map[Kind][]string{
		KindBash: {"bash", "Bash", "shell", "shell_command", "local_shell", "exec_command", "run_shell_command"},
		KindRead: {"read_file", "Read", "list_dir", "LS", "glob", "Glob", "grep", "Grep", "NotebookRead", "read_many_files",
			"list_directory", "search_file_content", "view_image"},
		KindEdit:     {"edit_file", "Edit", "MultiEdit", "NotebookEdit", "apply_patch", "replace"},
		KindWrite:    {"write_file", "Write"},
		KindWebFetch: {"WebFetch", "web_fetch"},
	} {
		for _, n := range names {
			m[n] = kind
		}
	}
	return m
})

// KindOf maps a tool name, kz's or another runtime's, to its rule kind.
func KindOf(tool string) Kind {
	if k, ok := toolKinds()[tool]; ok {
		return k
	}
	return Kind(tool)
}

// ToolClass says what a tool whose input the gate does not read does, as
// far as the gate is concerned: it decides the default answer when no rule
// names the tool.
type ToolClass string

// Tool classes.
const (
	// ClassReadOnly tools look at state and change nothing (listing an
	// MCP server's resources, the agent's scheduled jobs).
	ClassReadOnly ToolClass = "read-only"
	// ClassSession tools change only the agent's own session: its task
	// list, its plan mode, the output or end of a background command
	// that the gate allowed when it started.
	ClassSession ToolClass = "session"
	// ClassSubagent tools start or talk to another agent whose every tool
	// call comes back to this gate.
	ClassSubagent ToolClass = "subagent"
	// ClassNetwork tools reach a server the gate cannot judge (a web
	// search, an MCP resource).
	ClassNetwork ToolClass = "network"
	// ClassWrite tools change state outside the conversation that the
	// gate cannot see as paths (a git worktree, a scheduled job, the
	// agent's memory file).
	ClassWrite ToolClass = "write"
	// ClassExecute tools can make the agent run code or pre-approve
	// tools without this gate seeing it (custom slash commands and
	// skills bring their own shell lines and allowed tools, typed input
	// goes to a running program).
	ClassExecute ToolClass = "execute"
	// ClassInteraction tools ask the person something (a question, a
	// plan to approve): only the person can answer them.
	ClassInteraction ToolClass = "interaction"
)

// ToolSpec declares a tool kz does not run itself and whose input the gate
// does not read: its class, and what it does in words for the reasons.
type ToolSpec struct {
	Name  string    `json:"name"`
	Class ToolClass `json:"class"`
	Does  string    `json:"does"`
}

// toolSpecs are the other agents' tools that reach the gate without a
// command or path: Claude Code's (as listed by its system/init and
// documented by the protocol notes), Codex's and Gemini CLI's. The map is
// built on first use, so that every kz process does not pay for it at
// start.
var toolSpecs = sync.OnceValue(func() map[string]ToolSpec {
	m := map[string]ToolSpec{}
	for _, s := range []ToolSpec{
		// kz.
		{"read_artifact", ClassReadOnly, "reads back a stored tool result of this session"},
		// Claude Code.
		{"Task", ClassSubagent, "starts a subagent"},
		{"Agent", ClassSubagent, "starts a subagent"},
		{"SendMessage", ClassSubagent, "sends a message to another agent"},
		{"TodoWrite", ClassSession, "updates the agent's task list"},
		{"TaskCreate", ClassSession, "adds to the agent's task list"},
		{"TaskGet", ClassSession, "reads the agent's task list"},
		{"TaskList", ClassSession, "reads the agent's task list"},
		{"TaskUpdate", ClassSession, "updates the agent's task list"},
		{"TaskOutput", ClassSession, "reads the output of a background task the gate allowed"},
		{"TaskStop", ClassSession, "stops a background task of the agent"},
		{"BashOutput", ClassSession, "reads the output of a background command the gate allowed"},
		{"KillShell", ClassSession, "stops a background command of the agent"},
		{"KillBash", ClassSession, "stops a background command of the agent"},
		{"EnterPlanMode", ClassSession, "puts the agent in plan mode, where it changes nothing"},
		{"ReportFindings", ClassSession, "reports the agent's findings"},
		{"ListMcpResourcesTool", ClassReadOnly, "lists the resources of the MCP servers"},
		{"CronList", ClassReadOnly, "lists the agent's scheduled prompts"},
		{"WebSearch", ClassNetwork, "searches the web"},
		{"ReadMcpResourceTool", ClassNetwork, "reads a resource from an MCP server, which may fetch it from anywhere"},
		{"CronCreate", ClassWrite, "schedules a prompt to run later without the person"},
		{"CronDelete", ClassWrite, "deletes a scheduled prompt"},
		{"ScheduleWakeup", ClassWrite, "schedules the agent to resume later without the person"},
		{"EnterWorktree", ClassWrite, "creates a git worktree and moves the agent into it"},
		{"ExitWorktree", ClassWrite, "leaves, and may remove, a git worktree"},
		{"SlashCommand", ClassExecute, "runs a custom slash command, whose file can run shell lines and allow tools"},
		{"Skill", ClassExecute, "loads a skill, whose file can bring scripts and allow tools"},
		{"Workflow", ClassExecute, "runs a workflow of tool calls"},
		{"AskUserQuestion", ClassInteraction, "asks the person a question"},
		{"ExitPlanMode", ClassInteraction, "asks the person to approve a plan and leave plan mode"},
		// Codex.
		{"update_plan", ClassSession, "updates the agent's plan"},
		{"spawn_agent", ClassSubagent, "starts a subagent"},
		{"wait_agent", ClassSubagent, "waits for a subagent"},
		{"web_search", ClassNetwork, "searches the web"},
		{"write_stdin", ClassExecute, "types input into a running command"},
		{"request_user_input", ClassInteraction, "asks the person a question"},
		// Gemini CLI.
		{"write_todos", ClassSession, "updates the agent's task list"},
		{"google_web_search", ClassNetwork, "searches the web"},
		{"save_memory", ClassWrite, "writes the agent's memory file in the home directory"},
	} {
		m[s.Name] = s
	}
	return m
})

// SpecOf returns the declared spec of a tool whose input the gate does not
// read, if kz knows it.
func SpecOf(tool string) (ToolSpec, bool) {
	s, ok := toolSpecs()[tool]
	return s, ok
}

// ToolSpecs lists the declared specs, sorted by name.
func ToolSpecs() []ToolSpec {
	specs := toolSpecs()
	out := make([]ToolSpec, 0, len(specs))
	for _, s := range specs {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// defaultDecision is what the gate answers for a tool of this class when
// no rule, grant or permission mode decides: tools that change nothing
// outside the session, and subagents (whose own calls come back here), run;
// everything else is asked.
func (c ToolClass) defaultDecision() engine.Decision {
	switch c {
	case ClassReadOnly, ClassSession, ClassSubagent:
		return engine.DecisionAllow
	}
	return engine.DecisionAsk
}

// MCPToolPrefix starts the name of every MCP tool (mcp__server__tool); the
// gate judges such tools by their name, with rules such as mcp__server.
const MCPToolPrefix = "mcp__"

// KnownTools lists, sorted, the tool names the gate knows: those whose
// input it reads (a command, a path, a URL) and those with a declared spec,
// kz's own and other agents'. Any other name is judged only by rules
// naming it, its mode and its capabilities: the gate cannot tell what it
// would touch.
func KnownTools() []string {
	kinds, specs := toolKinds(), toolSpecs()
	names := make([]string, 0, len(kinds)+len(specs))
	for n := range kinds {
		names = append(names, n)
	}
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// KnownTool reports whether name is in KnownTools or is an MCP tool.
func KnownTool(name string) bool {
	_, ok := toolKinds()[name]
	_, spec := toolSpecs()[name]
	return ok || spec || strings.HasPrefix(name, MCPToolPrefix) && len(name) > len(MCPToolPrefix)
}

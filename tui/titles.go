package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// toolVerb is the name a card shows for a kind of tool call, the same
// whichever runtime made it: Claude Code's "Bash", Codex's "shell",
// Gemini's "run_shell_command" and kz's own "bash" are all "Bash".
type toolVerb string

// The verbs of the cards. A tool no table entry knows keeps its own name.
const (
	verbBash      toolVerb = "Bash"
	verbRead      toolVerb = "Read"
	verbWrite     toolVerb = "Write"
	verbEdit      toolVerb = "Edit"
	verbPatch     toolVerb = "Patch"
	verbDelete    toolVerb = "Delete"
	verbMove      toolVerb = "Move"
	verbGlob      toolVerb = "Glob"
	verbSearch    toolVerb = "Search"
	verbList      toolVerb = "List"
	verbFetch     toolVerb = "Fetch"
	verbWebSearch toolVerb = "WebSearch"
	verbTodo      toolVerb = "Todo"
	verbTask      toolVerb = "Task"
	verbThink     toolVerb = "Think"
	verbMCP       toolVerb = "MCP"
)

// toolVerbs maps the tool names every runtime emits, lower-cased, to their
// verb: kz's native tools, Claude Code's, Codex's item types and Gemini's
// tool names and ACP tool kinds.
var toolVerbs = map[string]toolVerb{
	// Shell.
	"bash": verbBash, "shell": verbBash, "run_shell_command": verbBash, "execute": verbBash,
	"commandexecution": verbBash, "local_shell": verbBash, "exec_command": verbBash,
	// Reading.
	"read": verbRead, "read_file": verbRead, "read_many_files": verbRead, "notebookread": verbRead,
	// Writing and editing.
	"write": verbWrite, "write_file": verbWrite,
	"edit": verbEdit, "edit_file": verbEdit, "multiedit": verbEdit, "notebookedit": verbEdit, "replace": verbEdit,
	"apply_patch": verbPatch, "filechange": verbPatch,
	"delete": verbDelete, "move": verbMove,
	// Searching.
	"glob": verbGlob, "grep": verbSearch, "search": verbSearch, "search_file_content": verbSearch,
	"ls": verbList, "list_dir": verbList, "list_directory": verbList,
	// The web.
	"fetch": verbFetch, "webfetch": verbFetch, "web_fetch": verbFetch,
	"websearch": verbWebSearch, "google_web_search": verbWebSearch, "web_search": verbWebSearch,
	// Bookkeeping.
	"todowrite": verbTodo, "update_plan": verbTodo, "task": verbTask, "think": verbThink,
	"mcptoolcall": verbMCP,
}

// argKeys are the input fields that name what a call works on, by verb, in
// the order they are tried.
var argKeys = map[toolVerb][]string{
	verbBash:      {"command", "cmd"},
	verbRead:      {"file_path", "absolute_path", "path", "notebook_path", "paths"},
	verbWrite:     {"file_path", "path"},
	verbEdit:      {"file_path", "path", "notebook_path"},
	verbDelete:    {"file_path", "path"},
	verbMove:      {"source", "file_path", "path"},
	verbGlob:      {"pattern"},
	verbSearch:    {"pattern", "query"},
	verbList:      {"path", "dir_path"},
	verbFetch:     {"url", "prompt"},
	verbWebSearch: {"query"},
	verbTask:      {"description", "prompt"},
}

// genericKeys are tried for any tool when its verb's keys found nothing.
var genericKeys = []string{"command", "file_path", "path", "pattern", "query", "url", "description", "title"}

// pathKeys are the fields that hold paths, shown relative to the workspace.
var pathKeys = map[string]bool{"file_path": true, "absolute_path": true, "path": true, "notebook_path": true,
	"paths": true, "dir_path": true, "source": true}

// callTitle is a card's header: the verb and what the call works on.
type callTitle struct {
	verb string
	arg  string
}

// titleOf computes the title of a tool call from its normalized event
// fields: the tool name, the raw input, the shell command and the paths
// (absolute or relative). Paths inside workspace are shown relative to it.
// Raw JSON is never a title: an input with no field a person recognises
// gives a title with the verb alone.
func titleOf(tool string, input json.RawMessage, command string, paths []string, workspace string) callTitle {
	var in map[string]any
	if len(input) > 0 && json.Unmarshal(input, &in) != nil {
		in = nil
	}
	verb, known := toolVerbs[strings.ToLower(tool)]
	if !known {
		// An ACP agent's tool with a name kz does not know still has a
		// kind (read, edit, execute, …) that says what it does.
		if k, ok := in["kind"].(string); ok {
			verb, known = toolVerbs[strings.ToLower(k)]
		}
	}
	t := callTitle{verb: tool}
	if known {
		t.verb = string(verb)
	}
	switch {
	case command != "":
		t.arg = command
	case verb == verbPatch && len(paths) > 0:
		t.arg = joinPaths(paths, workspace)
	case verb == verbPatch:
		t.arg = joinPaths(changePaths(in), workspace)
	case verb == verbMCP:
		t.arg = strings.Trim(fmt.Sprintf("%v/%v", strOr(in["server"]), strOr(in["tool"])), "/")
	}
	// What names the call best comes first: the verb's own fields, the
	// paths the runtime reported, an ACP call's locations, then any field
	// that names something, and last an ACP agent's title, which is a
	// sentence ("Writing to a.txt") rather than a name.
	if t.arg == "" && known {
		t.arg = argFrom(in, argKeys[verb], workspace)
	}
	if t.arg == "" && len(paths) > 0 {
		t.arg = joinPaths(paths, workspace)
	}
	if t.arg == "" {
		t.arg = locationPath(in, workspace)
	}
	if t.arg == "" {
		t.arg = argFrom(in, genericKeys, workspace)
	}
	if t.verb == "" {
		t.verb = "tool"
	}
	return t
}

// argFrom returns the first non-empty field of keys in the input.
func argFrom(in map[string]any, keys []string, workspace string) string {
	for _, k := range keys {
		switch v := in[k].(type) {
		case string:
			if v == "" {
				continue
			}
			if pathKeys[k] {
				return relPath(v, workspace)
			}
			return v
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				if s, ok := p.(string); ok && s != "" {
					parts = append(parts, s)
				}
			}
			if len(parts) == 0 {
				continue
			}
			if pathKeys[k] {
				return joinPaths(parts, workspace)
			}
			// A command given as argv (some ACP agents do) reads as a line.
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// changePaths lists the paths of a Codex file change input.
func changePaths(in map[string]any) []string {
	changes, _ := in["changes"].([]any)
	var out []string
	for _, c := range changes {
		if m, ok := c.(map[string]any); ok {
			if p, ok := m["path"].(string); ok && p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// locationPath is the first of an ACP call's locations.
func locationPath(in map[string]any, workspace string) string {
	locs, _ := in["locations"].([]any)
	for _, l := range locs {
		if m, ok := l.(map[string]any); ok {
			if p, ok := m["path"].(string); ok && p != "" {
				return relPath(p, workspace)
			}
		}
	}
	return ""
}

func joinPaths(paths []string, workspace string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = relPath(p, workspace)
	}
	return strings.Join(out, ", ")
}

// relPath shows an absolute path inside the workspace relative to it, and
// any other path as it is.
func relPath(p, workspace string) string {
	if workspace == "" || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(workspace, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return p
	}
	return rel
}

func strOr(v any) string {
	s, _ := v.(string)
	return s
}

package engine

// MemoryFile is one project memory file (AGENTS.md, CLAUDE.md, GEMINI.md or
// a file one of them imports with @path) that a turn runs under. The
// session loads the files at the start of every turn, so an edit takes
// effect on the next one, and lists them (without their content) on
// session_started.
type MemoryFile struct {
	// Path is the file's absolute path, symlinks resolved.
	Path string `json:"path"`
	// Name is the base name the file was found under (AGENTS.md, …) or,
	// for an import, the name of the memory file that imported it: a CLI
	// runtime that reads files of that name itself is not given them
	// again.
	Name string `json:"name,omitempty"`
	// Scope says where the file comes from: the user's kz config
	// directory or the project.
	Scope MemoryScope `json:"scope,omitempty"`
	// ImportedFrom is the path of the memory file whose @path line
	// brought this one in; empty for a file found by its name.
	ImportedFrom string `json:"imported_from,omitempty"`
	// Tokens is an estimate of the content's size in tokens.
	Tokens int `json:"tokens"`
	// Truncated says the file was cut at the size cap; the content then
	// ends with a note saying so.
	Truncated bool `json:"truncated,omitempty"`
	// Content is the text that goes to the model. It is not part of the
	// event (the files are in the workspace, the event log only names
	// them).
	Content string `json:"-"`
}

// MemoryScope says where a memory file was found.
type MemoryScope string

// Memory scopes.
const (
	MemoryUser    MemoryScope = "user"
	MemoryProject MemoryScope = "project"
)

// Environment is what a model needs to know about where it works. Every
// field is optional: what could not be found is left empty and not shown.
type Environment struct {
	OS        string
	Shell     string
	Date      string
	Workspace string
	// GitBranch is the checked-out branch, or "detached at <sha>".
	GitBranch string
	// GitStatus is a short summary of the working tree ("clean", "3
	// changed, 1 untracked").
	GitStatus string
}

// TurnContext is what a turn knows about its project beyond the
// conversation: the memory files and the environment. The session fills
// it through Config.Context before the first attempt of a turn.
type TurnContext struct {
	Memory []MemoryFile
	Env    Environment
	// Problems are memory files or imports that could not be read, each
	// one line, for the person (they never stop a turn).
	Problems []string
}

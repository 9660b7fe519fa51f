package memory

import (
	"path/filepath"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// Render writes the context block of a system prompt: the environment and
// the mode, then every memory file that keep accepts (all of them when
// keep is nil), each inside a <memory path="…"> element. It returns ""
// when there is nothing to say; the mode alone is no environment (the
// prompt around the block states it already).
func Render(tc engine.TurnContext, mode engine.Mode, keep func(engine.MemoryFile) bool) string {
	var b strings.Builder
	e := tc.Env
	if e == (engine.Environment{}) {
		mode = ""
	}
	lines := []struct{ k, v string }{
		{"OS", e.OS}, {"Shell", e.Shell}, {"Date", e.Date}, {"Workspace", e.Workspace},
		{"Git branch", e.GitBranch}, {"Git status", e.GitStatus}, {"Mode", string(mode)},
	}
	for _, l := range lines {
		if l.v == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("<environment>\n")
		}
		b.WriteString(l.k + ": " + l.v + "\n")
	}
	if b.Len() > 0 {
		b.WriteString("</environment>\n")
	}
	first := true
	for _, f := range tc.Memory {
		if keep != nil && !keep(f) {
			continue
		}
		if first {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("The person's memory files follow: instructions for working in this project. " +
				"Follow them; a later file refines an earlier one.\n")
			first = false
		}
		b.WriteString("<memory path=\"" + f.Path + "\">\n")
		b.WriteString(strings.TrimRight(f.Content, "\n"))
		b.WriteString("\n</memory>\n")
	}
	return b.String()
}

// ReadBy returns the filter of a CLI runtime that reads the project memory
// files called name itself (Claude Code CLAUDE.md, Codex AGENTS.md, Gemini
// CLI GEMINI.md): it keeps every other file. withImports says the CLI also
// follows the @path imports of those files (Claude Code and Gemini CLI
// do, Codex does not), so their imports are left to it too. Files under
// .kz/ and in the user's kz config directory are kz's own: every CLI gets
// them from kz.
func ReadBy(name string, withImports bool) func(engine.MemoryFile) bool {
	return func(f engine.MemoryFile) bool {
		if f.Scope != engine.MemoryProject || f.Name != name {
			return true
		}
		if f.ImportedFrom != "" {
			return !withImports || inKZDir(f.ImportedFrom)
		}
		return inKZDir(f.Path)
	}
}

// inKZDir reports whether a memory file sits in a .kz directory.
func inKZDir(p string) bool {
	return filepath.Base(filepath.Dir(p)) == ".kz"
}

// SystemPrompt appends the context block of a turn to a runtime's own
// system prompt, separated by a blank line; base comes back unchanged
// when there is no context.
func SystemPrompt(base string, t *engine.Turn, keep func(engine.MemoryFile) bool) string {
	block := Render(t.Context, t.Mode, keep)
	if block == "" {
		return base
	}
	if base == "" {
		return block
	}
	return base + "\n\n" + block
}

package tui

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
)

// MemoryBook is the project memory as the TUI sees it: the memory files a
// turn runs under (AGENTS.md, CLAUDE.md, GEMINI.md and their imports) and
// the line a "#" message adds to the project's memory file.
// internal/app implements it over internal/memory.
type MemoryBook interface {
	// MemoryFiles lists the files in the order the model gets them, and
	// the files or imports that could not be read.
	MemoryFiles(ctx context.Context) ([]engine.MemoryFile, []string)
	// Remember appends line to the project memory file and returns its
	// path.
	Remember(line string) (string, error)
}

// ReasoningSetter changes how hard the session's models think, from the
// next turn on ("off", "low", "medium", "high" or budget tokens).
type ReasoningSetter interface {
	SetReasoning(setting string) error
}

// reasoningCycle is the order /reasoning without an argument steps
// through.
var reasoningCycle = []string{"off", "low", "medium", "high"}

// cmdMemory lists the memory files, or with a number opens that file in
// $EDITOR.
func cmdMemory(m *Model, args string) tea.Cmd {
	book, ctx := m.ext.memory, m.ctx
	if book == nil {
		m.tr.notice("project memory is not available here", "warn")
		m.tr.toBottom()
		return nil
	}
	args = strings.TrimSpace(args)
	files, problems := book.MemoryFiles(ctx)
	if args == "" {
		m.tr.notice(memoryList(files, problems), "")
		m.tr.toBottom()
		return nil
	}
	n, err := strconv.Atoi(args)
	if err != nil || n < 1 || n > len(files) {
		m.tr.notice(fmt.Sprintf("usage: /memory (list) or /memory N to edit file N of %d", len(files)), "warn")
		m.tr.toBottom()
		return nil
	}
	path := files[n-1].Path
	ed := editorCommand()
	cmd := exec.Command(ed[0], append(ed[1:], path)...)
	return execProcess(cmd, func(err error) tea.Msg {
		if err != nil {
			return commandMsg{text: "the editor failed on " + path + ": " + err.Error(), style: "warn"}
		}
		return commandMsg{text: "edited " + path + "; the next turn reads it"}
	})
}

// memoryList renders the files with their size, numbered for /memory N.
func memoryList(files []engine.MemoryFile, problems []string) string {
	if len(files) == 0 && len(problems) == 0 {
		return "no memory files: start a message with # to add a line to AGENTS.md"
	}
	var b strings.Builder
	total := 0
	for i, f := range files {
		total += f.Tokens
		fmt.Fprintf(&b, "%d. %s · %d tokens", i+1, f.Path, f.Tokens)
		if f.ImportedFrom != "" {
			b.WriteString(" · imported")
		}
		if f.Truncated {
			b.WriteString(" · cut")
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d memory files, about %d tokens (/memory N edits one)", len(files), total)
	for _, p := range problems {
		b.WriteString("\nnot read: " + p)
	}
	return b.String()
}

// remember handles a "#" message: the rest of the line goes to the project
// memory file, not to the model.
func (m *Model) remember(line string) tea.Cmd {
	book := m.ext.memory
	if book == nil {
		m.tr.notice("project memory is not available here: the line was not saved", "warn")
		return nil
	}
	return func() tea.Msg {
		path, err := book.Remember(line)
		if err != nil {
			return commandMsg{text: "could not remember that: " + err.Error(), style: "warn"}
		}
		return commandMsg{text: "remembered in " + path}
	}
}

// isMemoryLine says whether a message is a "#" memory line: one line that
// starts with a single # (a markdown heading "## …" or a multi-line text
// is a prompt).
func isMemoryLine(text string) bool {
	return strings.HasPrefix(text, "#") && !strings.HasPrefix(text, "##") && !strings.Contains(text, "\n") &&
		strings.TrimSpace(text[1:]) != ""
}

// cmdReasoning sets the reasoning of the session's models, or steps to
// the next level without an argument.
func cmdReasoning(m *Model, args string) tea.Cmd {
	rs := m.ext.reasoning
	if rs == nil {
		m.tr.notice("reasoning cannot be changed with this session's runtimes", "warn")
		m.tr.toBottom()
		return nil
	}
	setting := strings.ToLower(strings.TrimSpace(args))
	if setting == "" {
		next := 0
		for i, s := range reasoningCycle {
			if s == m.reasoning {
				next = (i + 1) % len(reasoningCycle)
			}
		}
		setting = reasoningCycle[next]
	}
	if err := rs.SetReasoning(setting); err != nil {
		m.tr.notice("reasoning: "+err.Error(), "warn")
		m.tr.toBottom()
		return nil
	}
	m.reasoning = setting
	m.tr.notice("reasoning: "+setting+" from the next turn", "")
	m.tr.toBottom()
	return nil
}

package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TrustQuestion is what the TUI asks before a session opens in a folder
// whose project configuration asks for more than an untrusted project may
// have: the file, and what trusting it would enable.
type TrustQuestion struct {
	File    string
	Enables []string
	// Input and Output replace the terminal (tests).
	Input  io.Reader
	Output io.Writer
}

// AskTrust asks whether to trust the folder's project configuration, and
// says true only on an explicit yes: any other key, an interrupt or a
// closed terminal keeps the folder untrusted, which only ever leaves kz
// stricter.
func AskTrust(ctx context.Context, q TrustQuestion) (bool, error) {
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if q.Input != nil {
		opts = append(opts, tea.WithInput(q.Input))
	}
	if q.Output != nil {
		opts = append(opts, tea.WithOutput(q.Output))
	}
	m := &trustModel{q: q}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return false, fmt.Errorf("trust question: %w", err)
	}
	return m.answer == trustYes, nil
}

// trustAnswer is the person's answer to the trust question.
type trustAnswer string

const (
	trustUnanswered trustAnswer = ""
	trustYes        trustAnswer = "yes"
	trustNo         trustAnswer = "no"
)

// trustModel is the trust question as a small program of its own: it runs
// before the session exists, so that a yes applies the whole project file
// (its runtimes and rules) to the session that then opens.
type trustModel struct {
	q      TrustQuestion
	width  int
	answer trustAnswer
}

func (m *trustModel) Init() tea.Cmd { return nil }

func (m *trustModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case tea.KeyPressMsg:
		switch strings.ToLower(msg.String()) {
		case "y":
			m.answer = trustYes
			return m, tea.Quit
		case "n", "esc", "ctrl+c", "ctrl+d", "q":
			m.answer = trustNo
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *trustModel) View() tea.View {
	if m.answer != trustUnanswered {
		return tea.NewView("")
	}
	return tea.NewView(m.text())
}

// text is the question. The file's path and the items come from the
// project, so control characters in them are shown, never run.
func (m *trustModel) text() string {
	width := m.width
	if width <= 0 {
		width = 80
	}
	var b strings.Builder
	b.WriteString("Trust this folder?\n\n")
	b.WriteString(wrapLine(termText(m.q.File)+" asks for what kz gives only a trusted folder:", width))
	b.WriteString("\n")
	for _, e := range m.q.Enables {
		b.WriteString(wrapLine("  • "+termText(e), width))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(wrapLine("Trust it only if you know who wrote it: its runtimes start programs and its allow rules let the agent act without asking. Trust is tied to the file as it is now; editing it withdraws the trust.", width))
	b.WriteString("\n\n")
	b.WriteString(wrapLine("y trust it · n not now (its deny and ask rules still apply; kz trust later)", width))
	b.WriteString("\n")
	return b.String()
}

// termText escapes control characters so that text from a file cannot
// steer the terminal.
func termText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func wrapLine(s string, width int) string { return ansi.Wrap(s, width, " ") }

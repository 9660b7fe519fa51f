package tui

import "strings"

// onFirstRow reports whether the input's cursor is on its first visual
// row: only there does ↑ leave the text for the history, elsewhere it
// moves up a row, also within a long line wrapped over several rows.
func (m *Model) onFirstRow() bool {
	return m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0
}

// onLastRow reports whether the cursor is on the input's last visual row,
// where ↓ goes forward in the history.
func (m *Model) onLastRow() bool {
	li := m.input.LineInfo()
	return m.input.Line() >= m.input.LineCount()-1 && li.RowOffset >= li.Height-1
}

// restoreUnsent puts a prompt the session refused back in the input, so a
// failed send loses nothing. A prompt sent as "/x" was typed "//x". When
// the person has typed something since, that is kept: the prompt is in
// the history (↑) anyway.
func (m *Model) restoreUnsent(prompt string) {
	if m.input.Value() != "" {
		return
	}
	if strings.HasPrefix(prompt, "/") {
		prompt = "/" + prompt
	}
	m.input.SetValue(prompt)
	m.input.MoveToEnd()
}

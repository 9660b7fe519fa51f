package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/themes"
)

// appliedChange is one change applied in this session, as the events
// reported it: a patch (patch_applied) or a tool's file edit
// (file_edited outside a patch).
type appliedChange struct {
	title  string
	files  []engine.FileChange
	undone bool
}

// recordChange folds the events that apply changes into the change log.
func (m *Model) recordChange(ev engine.Event) {
	switch {
	case ev.Type == engine.EventPatchApplied:
		title := "patch " + ev.PatchID
		if ev.Text != "" {
			title += ": " + ev.Text
		}
		m.changes = append(m.changes, appliedChange{title: title, files: ev.Files})
	case ev.Type == engine.EventFileEdited && ev.PatchID == "":
		m.changes = append(m.changes, appliedChange{title: "edit of " + ev.Path,
			files: []engine.FileChange{{Path: ev.Path, Operation: "modify", Diff: ev.Diff}}})
	}
}

// onUndone records a successful undo in the change log.
func (m *Model) onUndone(msg commandMsg) {
	m.markUndone(msg.change)
	if msg.revert != nil {
		// The revert is the session's newest change: /undo undoes it next.
		m.changes = append(m.changes, *msg.revert)
		m.markUndone(-1)
	}
}

// markUndone marks change n (1-based) undone, or with n = 0 the last
// change not yet undone, and refreshes an open change log.
func (m *Model) markUndone(n int) {
	switch {
	case n > 0 && n <= len(m.changes):
		m.changes[n-1].undone = true
	case n == 0:
		if i := m.lastLive(); i >= 0 {
			m.changes[i].undone = true
		}
	}
	if m.changeLog != nil {
		m.changeLog = newChangeLog(m.changes, &m.theme)
		m.changeLog.undo = m.undoChange
	}
}

// lastLive is the index of the last change not undone, or -1.
func (m *Model) lastLive() int {
	for i := len(m.changes) - 1; i >= 0; i-- {
		if !m.changes[i].undone {
			return i
		}
	}
	return -1
}

// ChangeReverter is implemented by an Undoer that can also undo a change
// older than the last one (internal/app's, over patch.RevertChange): the
// change's hunks are reversed in the files as they are now, as a new
// change. It must refuse when the lines are no longer the change's.
type ChangeReverter interface {
	RevertChange(ctx context.Context, files []engine.FileChange) (string, error)
}

// undoChange undoes change i of the log: the last one with /undo's exact
// snapshot restore, an older one by reverting its hunks, which is refused
// with the reason when a later change touched the same lines.
func (m *Model) undoChange(i int) tea.Cmd {
	warn := func(s string) tea.Cmd {
		// Shown in the open log at once, and kept in the transcript.
		if m.changeLog != nil {
			m.changeLog.flash = s
		}
		return func() tea.Msg { return commandMsg{text: s, style: "warn"} }
	}
	switch {
	case i < 0 || i >= len(m.changes):
		return nil
	case m.changes[i].undone:
		return warn(fmt.Sprintf("change %d is already undone", i+1))
	case i == m.lastLive():
		return cmdUndo(m, "")
	}
	if reason := m.undoConflict(i); reason != "" {
		return warn(fmt.Sprintf("undo of change %d refused: %s", i+1, reason))
	}
	rv, ok := m.ext.undo.(ChangeReverter)
	if !ok {
		return warn(fmt.Sprintf("undo of change %d refused: only the last change can be undone here", i+1))
	}
	if m.status.running {
		return warn("wait for the turn to end before undoing")
	}
	ctx, files, n := m.ctx, m.changes[i].files, i+1
	return func() tea.Msg {
		id, err := rv.RevertChange(ctx, files)
		if err != nil {
			return commandMsg{text: fmt.Sprintf("undo of change %d refused: %v", n, err), style: "warn"}
		}
		rev := &appliedChange{title: fmt.Sprintf("undo of change %d (%s)", n, id)}
		for _, f := range files {
			rev.files = append(rev.files, engine.FileChange{Path: f.Path, Operation: f.Operation, Diff: diff.Reverse(f.Diff),
				Added: f.Removed, Removed: f.Added})
		}
		return commandMsg{text: fmt.Sprintf("undone: change %d, reverted as %s", n, id), undone: true, change: n, revert: rev}
	}
}

// undoConflict says why change i cannot be undone: a later change, still
// applied, touched lines of it. Each of change i's hunks (its lines after
// the change, context included) is carried through the later changes in
// order, moved by the lines they added or removed above it; a later hunk
// whose old lines overlap it is a conflict. "" means no conflict.
func (m *Model) undoConflict(i int) string {
	type span struct{ from, to int } // 0-based, to exclusive
	spans := map[string][]span{}
	for _, f := range filesFromChanges(m.changes[i].files) {
		for _, h := range f.hunks {
			s, n := h.NewSpan()
			spans[f.path] = append(spans[f.path], span{s, s + max(n, 1)})
		}
	}
	for j := i + 1; j < len(m.changes); j++ {
		c := m.changes[j]
		if c.undone {
			continue
		}
		for _, f := range filesFromChanges(c.files) {
			path := f.path
			if f.oldPath != "" {
				path = f.oldPath
			}
			ss := spans[path]
			for k, sp := range ss {
				shift := 0
				for _, h := range f.hunks {
					os, on := h.OldSpan()
					ns, nn := h.NewSpan()
					if os < sp.to && sp.from < os+max(on, 1) {
						return fmt.Sprintf("change %d (%s) changed lines %d–%d of %s after it; undo change %d first",
							j+1, c.title, sp.from+1, sp.to, path, j+1)
					}
					if os+on <= sp.from {
						shift = (ns + nn) - (os + on)
					}
				}
				ss[k] = span{sp.from + shift, sp.to + shift}
			}
			if f.oldPath != "" {
				delete(spans, f.oldPath)
				spans[f.path] = ss
			}
		}
	}
	return ""
}

// changeLog is a read-only view of the changes applied in this session,
// newest first, with the review's diff view.
type changeLog struct {
	dv     *diffView
	titles []string // per file: the change it belongs to
	change []int    // per file: the index of its change
	n      int
	flash  string
	bodyH  int
	// undo undoes a change by index (Model.undoChange); nil in a log that
	// cannot undo.
	undo func(i int) tea.Cmd
}

func newChangeLog(changes []appliedChange, t *themes.Theme) *changeLog {
	var files []diffFile
	var titles []string
	var idx []int
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		title := fmt.Sprintf("change %d · %s", i+1, c.title)
		if c.undone {
			title += " · undone"
		}
		for _, f := range filesFromChanges(c.files) {
			files = append(files, f)
			titles = append(titles, title)
			idx = append(idx, i)
		}
	}
	cl := &changeLog{dv: newDiffView(files, t), titles: titles, change: idx, n: len(changes)}
	return cl
}

// update handles a key; it reports whether the log closes, and the
// command of an undo.
func (c *changeLog) update(msg tea.KeyPressMsg, width int) (bool, tea.Cmd) {
	c.dv.ensure(max(width-4, 10))
	h := max(c.bodyH, 3)
	k := defaultReviewKeys()
	c.flash = ""
	switch {
	case msg.String() == "esc" || msg.String() == "q":
		return true, nil
	case msg.String() == "u" && c.undo != nil && len(c.change) > 0:
		cur := min(int(c.dv.current().file), len(c.change)-1)
		return false, c.undo(c.change[cur])
	case key.Matches(msg, k.NextHunk):
		if c.dv.jumpHunk(1) < 0 {
			c.flash = "last hunk"
		}
	case key.Matches(msg, k.PrevHunk):
		if c.dv.jumpHunk(-1) < 0 {
			c.flash = "first hunk"
		}
	case key.Matches(msg, k.NextFile):
		c.dv.jumpFile(int(c.dv.current().file) + 1)
	case key.Matches(msg, k.PrevFile):
		c.dv.jumpFile(int(c.dv.current().file) - 1)
	case key.Matches(msg, k.Layout):
		if c.dv.layout == layoutSplit {
			c.dv.layout = layoutUnified
		} else {
			c.dv.layout = layoutSplit
		}
	case key.Matches(msg, k.Up):
		c.dv.scroll(-1, h)
	case key.Matches(msg, k.Down):
		c.dv.scroll(1, h)
	case key.Matches(msg, k.PageUp):
		c.dv.scroll(-max(h-1, 1), h)
	case key.Matches(msg, k.PageDown):
		c.dv.scroll(max(h-1, 1), h)
	}
	return false, nil
}

func (c *changeLog) view(t *themes.Theme, width, maxHeight int) string {
	inner := max(width-4, 10)
	head := t.Accent.Render("Changes applied in this session") + t.Muted.Render(fmt.Sprintf(" · %d, newest first", c.n))
	lines := []string{ansi.Truncate(head, inner, "…")}
	if len(c.titles) == 0 {
		lines = append(lines, t.Muted.Render("nothing applied yet"), t.Muted.Render("esc close"))
		return dialogBox(t, width, lines)
	}
	c.dv.ensure(inner)
	cur := int(c.dv.current().file)
	lines = append(lines, t.Text.Render(ansi.Truncate(oneLine(c.titles[min(cur, len(c.titles)-1)]), inner, "…")))
	c.bodyH = max(maxHeight-2-len(lines)-2, 3)
	lines = append(lines, c.dv.view(inner, c.bodyH)...)
	status := t.Muted.Render(ansi.Truncate(fmt.Sprintf("file %d/%d · %s", cur+1, len(c.titles), c.dv.effective(inner)), inner, "…"))
	if c.flash != "" {
		status = t.Warn.Render(ansi.Truncate(c.flash, inner, "…"))
	}
	lines = append(lines, status, t.Muted.Render(ansi.Truncate("u undo this change · tab/shift+tab file · ]/[ hunk · v unified/split · ↑↓ pgup pgdn scroll · esc close", inner, "…")))
	return dialogBox(t, width, lines)
}

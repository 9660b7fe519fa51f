package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
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

// markUndone marks the last change not yet undone.
func (m *Model) markUndone() {
	for i := len(m.changes) - 1; i >= 0; i-- {
		if !m.changes[i].undone {
			m.changes[i].undone = true
			return
		}
	}
}

// changeLog is a read-only view of the changes applied in this session,
// newest first, with the review's diff view.
type changeLog struct {
	dv     *diffView
	titles []string // per file: the change it belongs to
	n      int
	flash  string
	bodyH  int
}

func newChangeLog(changes []appliedChange, t *themes.Theme) *changeLog {
	var files []diffFile
	var titles []string
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		title := fmt.Sprintf("change %d · %s", i+1, c.title)
		if c.undone {
			title += " · undone"
		}
		for _, f := range filesFromChanges(c.files) {
			files = append(files, f)
			titles = append(titles, title)
		}
	}
	cl := &changeLog{dv: newDiffView(files, t), titles: titles, n: len(changes)}
	return cl
}

// update handles a key; it reports whether the log closes.
func (c *changeLog) update(msg tea.KeyPressMsg, width int) bool {
	c.dv.ensure(max(width-4, 10))
	h := max(c.bodyH, 3)
	k := defaultReviewKeys()
	c.flash = ""
	switch {
	case msg.String() == "esc" || msg.String() == "q":
		return true
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
	return false
}

func (c *changeLog) view(t *themes.Theme, width, maxHeight int) string {
	inner := max(width-4, 10)
	head := t.Accent.Render("Changes applied in this session") + t.Muted.Render(fmt.Sprintf(" · %d, newest first", c.n))
	lines := []string{ansi.Truncate(head, inner, "…")}
	if len(c.titles) == 0 {
		lines = append(lines, t.Muted.Render("nothing applied yet"), t.Muted.Render("esc close"))
		return t.Dialog.Width(width).Render(strings.Join(lines, "\n"))
	}
	c.dv.ensure(inner)
	cur := int(c.dv.current().file)
	lines = append(lines, t.Text.Render(ansi.Truncate(oneLine(c.titles[min(cur, len(c.titles)-1)]), inner, "…")))
	c.bodyH = max(maxHeight-2-len(lines)-2, 3)
	lines = append(lines, c.dv.view(inner, c.bodyH)...)
	status := t.Muted.Render(ansi.Truncate(fmt.Sprintf("file %d/%d · %s", cur+1, len(c.titles), c.dv.effective(inner)), inner, "…"))
	if c.flash != "" {
		status = t.Warn.Render(c.flash)
	}
	lines = append(lines, status, t.Muted.Render(ansi.Truncate("tab/shift+tab file · ]/[ hunk · v unified/split · ↑↓ pgup pgdn scroll · esc close", inner, "…")))
	return t.Dialog.Width(width).Render(strings.Join(lines, "\n"))
}

package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/themes"
)

// reviewLayout is how the parts of the review share its height. The title,
// the position line and the keys are always shown, and so is at least one
// line of the diff: on a short screen the other parts give way first, so
// the review fits wherever the plain permission dialog does.
type reviewLayout struct {
	compact  bool // the keys with one-word descriptions
	footRows int
	summary  bool
	whyRows  int // rows of the gate's reason; cut to one on a short screen
	listRows int // files listed; 0 hides the list (the position line still names the file)
	room     int // lines for the diff
}

// reviewMinBody is the diff's height below which the other parts start
// giving way; the diff is never given fewer than one line.
const reviewMinBody = 3

// layout shares maxHeight lines (border included) at width between the
// review's parts.
func (r *review) layout(t *themes.Theme, width, maxHeight int) reviewLayout {
	inner := max(width-4, 10)
	avail := maxHeight - 2
	l := reviewLayout{summary: r.summary != ""}
	if r.asked() {
		l.whyRows = len(whyLines(r.ev, inner))
	}
	if r.listFiles() {
		l.listRows = min(len(r.files), fileListRows)
	}
	l.footRows = len(r.foot(t, inner, false))
	used := func() int {
		n := 2 + l.footRows + l.whyRows + l.listRows // + title and position
		if l.summary {
			n++
		}
		if l.listRows > 0 && l.listRows < len(r.files) {
			n++ // "… n files in all"
		}
		return n
	}
	// Each step gives up a little of a part, least needed first, while
	// the diff has less than it wants.
	steps := []func() bool{
		func() bool {
			if l.compact || r.denying {
				return false
			}
			l.compact, l.footRows = true, len(r.foot(t, inner, true))
			return true
		},
		func() bool {
			if l.listRows <= 1 {
				return false
			}
			l.listRows--
			return true
		},
		func() bool {
			if l.whyRows <= 1 {
				return false
			}
			l.whyRows = 1
			return true
		},
		func() bool {
			if !l.summary {
				return false
			}
			l.summary = false
			return true
		},
		func() bool {
			if l.listRows == 0 {
				return false
			}
			l.listRows = 0
			return true
		},
		func() bool {
			if l.whyRows == 0 {
				return false
			}
			l.whyRows = 0
			return true
		},
	}
	for _, want := range []int{reviewMinBody, 1} {
		for _, step := range steps {
			for avail-used() < want && step() {
			}
		}
	}
	l.room = max(avail-used(), 1)
	return l
}

// foot is the review's last lines: the message editor when denying with a
// message, else the keys, with one-word descriptions when compact.
func (r *review) foot(t *themes.Theme, inner int, compact bool) []string {
	if r.denying {
		r.input.SetWidth(inner - 4)
		return []string{r.input.View(), t.Muted.Render("enter send denial · esc back")}
	}
	bs := r.keys.ShortHelp()
	if compact {
		bs = r.keys.compact(r.patch)
	}
	return strings.Split(keyRows(t, bs, inner), "\n")
}

// compact is ShortHelp with one-word descriptions, for short screens.
// A patch's y applies the accepted files, and says so.
func (k reviewKeys) compact(patch bool) []key.Binding {
	allow := "allow"
	if patch {
		allow = "apply"
	}
	return []key.Binding{long(k.Allow, allow), long(k.AllowSession, "session"), long(k.AllowAlways, "always"),
		long(k.Deny, "reject"), long(k.DenyMessage, "message"), long(k.ToggleFile, "file"), long(k.ToggleHunk, "hunk"),
		long(k.NextFile, "next file"), long(k.NextHunk, "hunks"), long(k.Layout, "layout"), long(k.Edit, "edit")}
}

// scrollNote says which lines of the diff are on screen when not all of
// them fit, like the plain dialog's scroll line; "" when all fit.
func (r *review) scrollNote(h int) string {
	v := r.dv
	if v.top == 0 && v.sub == 0 && v.below(h) == 0 {
		return ""
	}
	return fmt.Sprintf("↑↓ scroll · lines %d–%d of %d", v.top+1, v.end, len(v.rows))
}

// cut keeps the first n lines, the last one ending in "…" when some were
// left out.
func cut(lines []string, n, width int) []string {
	if len(lines) <= n {
		return lines
	}
	lines = append([]string(nil), lines[:n]...)
	if n > 0 {
		lines[n-1] = ansi.Truncate(lines[n-1], max(width-1, 1), "") + "…"
	}
	return lines
}

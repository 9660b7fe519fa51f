package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/themes"
)

// Rewinder is implemented by an Undoer whose session keeps checkpoints
// (internal/app's): /rewind lists the session's turns and takes the files,
// and if asked the conversation, back to before one of them.
type Rewinder interface {
	// RewindPoints lists the session's turns, oldest first.
	RewindPoints(ctx context.Context) ([]RewindPoint, error)
	// RewindFiles restores the files every turn from turn on changed to
	// their state before it, all or none; it refuses, naming the file,
	// when one changed since outside kz.
	RewindFiles(ctx context.Context, turn int64) (string, error)
	// RewindConversation takes the conversation back to before turn.
	RewindConversation(ctx context.Context, turn int64) error
}

// RewindPoint is one turn /rewind offers.
type RewindPoint struct {
	Turn    int64
	Prompt  string
	Started time.Time
	// Files are the files the turn changed and that still stand.
	Files []string
}

// rewindChoice is what the confirmation restores.
type rewindChoice int

const (
	rewindFiles rewindChoice = iota
	rewindBoth
	rewindCancel
)

var rewindChoices = []string{"restore the files", "restore the files and the conversation", "cancel"}

// rewindDialog is /rewind: the list of turns, then the confirmation of
// one, which lists the files it restores.
type rewindDialog struct {
	points []RewindPoint // newest first
	cursor int
	// confirming is set once a turn was chosen; choice is the selected
	// answer.
	confirming bool
	choice     rewindChoice
	// files are the files the rewind to the chosen turn restores: those
	// of that turn and every later one.
	files []string
}

// rewindPointsMsg carries the turns /rewind lists.
type rewindPointsMsg struct {
	points []RewindPoint
	err    error
}

// cmdRewind opens /rewind once the turns are read.
func cmdRewind(m *Model, _ string) tea.Cmd {
	rw, ok := m.ext.undo.(Rewinder)
	if !ok {
		m.tr.notice("rewind is not available here", "warn")
		return nil
	}
	if m.status.running {
		m.tr.notice("wait for the turn to end before rewinding", "warn")
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		pts, err := rw.RewindPoints(ctx)
		return rewindPointsMsg{points: pts, err: err}
	}
}

// onRewindPoints opens the dialog on the turns read.
func (m *Model) onRewindPoints(msg rewindPointsMsg) {
	switch {
	case msg.err != nil:
		m.tr.notice("rewind failed: "+msg.err.Error(), "warn")
	case len(msg.points) == 0:
		m.tr.notice("nothing to rewind: this session has no turn yet", "")
	default:
		d := &rewindDialog{}
		for i := len(msg.points) - 1; i >= 0; i-- {
			d.points = append(d.points, msg.points[i])
		}
		m.rewind = d
	}
}

// onRewindKey handles a key of the open dialog.
func (m *Model) onRewindKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.rewind
	k := msg.String()
	if !d.confirming {
		switch k {
		case "esc", "q":
			m.rewind = nil
		case "up", "k", "ctrl+p":
			d.cursor = max(d.cursor-1, 0)
		case "down", "j", "ctrl+n":
			d.cursor = min(d.cursor+1, len(d.points)-1)
		case "enter":
			d.confirming, d.choice = true, rewindFiles
			d.files = d.filesFrom(d.cursor)
		}
		return nil
	}
	switch k {
	case "esc":
		d.confirming = false
		return nil
	case "up", "shift+tab", "k":
		d.choice = max(d.choice-1, rewindFiles)
		return nil
	case "down", "tab", "j":
		d.choice = min(d.choice+1, rewindCancel)
		return nil
	case "f":
		d.choice = rewindFiles
	case "c":
		d.choice = rewindBoth
	case "enter":
	default:
		return nil
	}
	if d.choice == rewindCancel {
		d.confirming = false
		return nil
	}
	turn, both := d.points[d.cursor].Turn, d.choice == rewindBoth
	m.rewind = nil
	if m.status.running {
		m.tr.notice("wait for the turn to end before rewinding", "warn")
		return nil
	}
	rw, _ := m.ext.undo.(Rewinder)
	ctx := m.ctx
	return func() tea.Msg {
		what, err := rw.RewindFiles(ctx, turn)
		if err != nil {
			return commandMsg{text: "rewind refused: " + err.Error(), style: "warn"}
		}
		if both {
			if err := rw.RewindConversation(ctx, turn); err != nil {
				return commandMsg{text: what + "; the conversation was not rewound: " + err.Error(), style: "warn"}
			}
			what += fmt.Sprintf("; the conversation continues from before turn %d", turn)
		}
		return commandMsg{text: what}
	}
}

// filesFrom lists, sorted and once each, the files of point i and every
// newer point (points are newest first).
func (d *rewindDialog) filesFrom(i int) []string {
	seen := map[string]bool{}
	var out []string
	for j := 0; j <= i; j++ {
		for _, f := range d.points[j].Files {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (d *rewindDialog) view(t *themes.Theme, width, maxHeight int) string {
	inner := max(width-4, 10)
	fit := func(s string) string { return ansi.Truncate(s, inner, "…") }
	if d.confirming {
		return d.confirmView(t, width, maxHeight, fit)
	}
	lines := []string{fit(t.Accent.Render("Rewind") + t.Muted.Render(" · go back to before a turn"))}
	rows := max(maxHeight-4, 1)
	first := max(0, min(d.cursor-rows+1, len(d.points)-rows))
	for i := first; i < len(d.points) && i < first+rows; i++ {
		p := d.points[i]
		files := "no files changed"
		switch n := len(p.Files); {
		case n == 1:
			files = "1 file: " + p.Files[0]
		case n > 1:
			files = fmt.Sprintf("%d files: %s", n, strings.Join(p.Files, ", "))
		}
		row := fmt.Sprintf("turn %d · %s · %s · %s", p.Turn, p.Started.Format("15:04"), oneLine(p.Prompt), files)
		if i == d.cursor {
			lines = append(lines, t.Accent.Render(fit("› "+row)))
		} else {
			lines = append(lines, t.Text.Render(fit("  "+row)))
		}
	}
	lines = append(lines, t.Muted.Render(fit("↑↓ choose · enter rewind to before this turn · esc close")))
	return dialogBox(t, width, lines)
}

func (d *rewindDialog) confirmView(t *themes.Theme, width, maxHeight int, fit func(string) string) string {
	p := d.points[d.cursor]
	lines := []string{fit(t.Accent.Render(fmt.Sprintf("Rewind to before turn %d", p.Turn)) + t.Muted.Render(" · "+oneLine(p.Prompt)))}
	if len(d.files) == 0 {
		lines = append(lines, t.Muted.Render(fit("no file changed since: only the conversation can go back")))
	} else {
		lines = append(lines, t.Text.Render(fit(fmt.Sprintf("these %d file(s) go back to their state before the turn:", len(d.files)))))
		room := max(maxHeight-len(rewindChoices)-5, 1)
		for i, f := range d.files {
			if i == room-1 && len(d.files) > room {
				lines = append(lines, t.Muted.Render(fit(fmt.Sprintf("  … and %d more", len(d.files)-i))))
				break
			}
			lines = append(lines, t.Text.Render(fit("  "+f)))
		}
	}
	for i, c := range rewindChoices {
		if rewindChoice(i) == d.choice {
			lines = append(lines, t.Accent.Render(fit("› "+c)))
		} else {
			lines = append(lines, t.Text.Render(fit("  "+c)))
		}
	}
	lines = append(lines, t.Muted.Render(fit("↑↓ choose · enter confirm · f files · c files and conversation · esc back")))
	return dialogBox(t, width, lines)
}

package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// pickerKind says what a picker picks.
type pickerKind string

const (
	pickRuntime pickerKind = "runtime"
	pickModel   pickerKind = "model"
)

// pickerItem is one row of a picker.
type pickerItem struct {
	runtime string
	model   string
	title   string
	detail  string
	current bool
	why     string // why it is unavailable, if it is
}

// picker is a list to choose a runtime or a model from. It does no IO:
// choosing returns the item and the root model asks the session.
type picker struct {
	kind   pickerKind
	items  []pickerItem
	cursor int
	err    string // the session's refusal of the last choice
}

func newRuntimePicker(infos []engine.RuntimeInfo, st engine.State) *picker {
	p := &picker{kind: pickRuntime}
	for _, r := range infos {
		model := ""
		if len(r.Models) > 0 {
			model = r.Models[0]
		}
		if r.Current {
			model = st.Model
		}
		detail := fmt.Sprintf("model %s · %s", orDash(model), r.Capabilities.Set)
		if len(r.Models) > 1 {
			detail = fmt.Sprintf("models %s · %s", strings.Join(r.Models, ", "), r.Capabilities.Set)
		}
		if err := engine.CheckMode(st.Mode, r.Name, model, r.Capabilities); err != nil && r.Unavailable == "" {
			detail += " · cannot serve " + string(st.Mode)
		}
		p.items = append(p.items, pickerItem{runtime: r.Name, title: r.Name, detail: detail, current: r.Current, why: r.Unavailable})
		if r.Current {
			p.cursor = len(p.items) - 1
		}
	}
	return p
}

func newModelPicker(infos []engine.RuntimeInfo, st engine.State) *picker {
	p := &picker{kind: pickModel}
	for _, r := range infos {
		if !r.Current {
			continue
		}
		for _, m := range r.Models {
			p.items = append(p.items, pickerItem{runtime: r.Name, model: m, title: m, current: m == st.Model})
			if m == st.Model {
				p.cursor = len(p.items) - 1
			}
		}
	}
	return p
}

// update moves the cursor; enter returns the chosen item, esc closes.
func (p *picker) update(msg tea.KeyPressMsg) (chosen *pickerItem, closed bool) {
	switch msg.String() {
	case "up", "k", "ctrl+p", "shift+tab":
		if p.cursor > 0 {
			p.cursor--
		}
	case "down", "j", "ctrl+n", "tab":
		if p.cursor < len(p.items)-1 {
			p.cursor++
		}
	case "enter":
		if len(p.items) > 0 {
			it := p.items[p.cursor]
			return &it, false
		}
	case "esc", "q", "ctrl+c":
		return nil, true
	}
	return nil, false
}

func (p *picker) view(t *themes.Theme, width, maxHeight int) string {
	inner := max(width-4, 10)
	title := "Switch runtime"
	if p.kind == pickModel {
		title = "Switch model"
	}
	lines := []string{t.Accent.Render(title) + t.Muted.Render("  ↑↓ choose · enter switch · esc close")}
	if len(p.items) == 0 {
		lines = append(lines, t.Muted.Render("nothing to choose: this runtime has one model"))
	}
	rows := max(maxHeight-4, 1)
	start := 0
	if p.cursor >= rows {
		start = p.cursor - rows + 1
	}
	for i := start; i < len(p.items) && i < start+rows; i++ {
		it := p.items[i]
		mark := "  "
		if it.current {
			mark = "● "
		}
		row := mark + it.title
		detail := it.detail
		if it.why != "" {
			detail = "unavailable: " + it.why
		}
		if detail != "" {
			row += "  " + detail
		}
		row = ansi.Truncate(oneLine(row), inner, "…")
		switch {
		case i == p.cursor:
			row = t.Selected.Render(row + strings.Repeat(" ", max(inner-ansi.StringWidth(row), 0)))
		case it.why != "":
			row = t.Muted.Render(row)
		default:
			row = t.Text.Render(row)
		}
		lines = append(lines, row)
	}
	if p.err != "" {
		for _, l := range wrapLines(sanitize(p.err), inner) {
			lines = append(lines, t.Error.Render(l))
		}
	}
	return t.Dialog.Width(width).Render(strings.Join(lines, "\n"))
}

package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
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

// picker is a list to choose a runtime or a model from. It does no IO:
// choosing returns the item and the root model asks the session.
//
// The model picker has a filter: what the person types narrows the list,
// and a name the list does not have can be chosen as typed (a provider
// knows models kz's catalog does not). The typed text belongs to the
// picker, not to its list: a new list (the runtimes fetched again) keeps
// it, and only esc or a successful switch ends it.
type picker struct {
	kind pickerKind
	// all is every item; items is what the filter lets through, plus the
	// typed name as a choice of its own when no item is called that.
	all    []pickerItem
	items  []pickerItem
	cursor int
	filter textinput.Model
	// runtime is the current runtime, whose model a typed name is.
	runtime string
	err     string // the session's refusal of the last choice
}

// pickerItem is one row of a picker.
type pickerItem struct {
	runtime string
	model   string
	title   string
	detail  string
	current bool
	why     string // why it is unavailable, if it is
	typed   bool   // the filter's text, offered as a model name
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
		var parts []string
		if r.Description != "" {
			parts = append(parts, r.Description)
		}
		if r.Unavailable == "" {
			if len(r.Models) > 1 {
				parts = append(parts, "models "+strings.Join(r.Models, ", "))
			} else {
				parts = append(parts, "model "+orDash(model))
			}
			if err := engine.CheckMode(st.Mode, r.Name, model, r.Capabilities); err != nil {
				parts = append(parts, "cannot serve "+string(st.Mode))
			}
		}
		p.all = append(p.all, pickerItem{runtime: r.Name, title: r.Name, detail: strings.Join(parts, " · "), current: r.Current, why: r.Unavailable})
		if r.Current {
			p.cursor = len(p.all) - 1
		}
	}
	p.items = p.all
	return p
}

func newModelPicker(infos []engine.RuntimeInfo, st engine.State) *picker {
	in := textinput.New()
	in.Prompt = "model › "
	in.Placeholder = "type to filter, or a model name to use"
	in.CharLimit = 200
	ist := in.Styles()
	ist.Cursor.Blink = false
	in.SetStyles(ist)
	in.Focus()
	p := &picker{kind: pickModel, filter: in, runtime: st.Runtime}
	for _, r := range infos {
		if !r.Current {
			continue
		}
		p.runtime = r.Name
		for _, m := range r.Models {
			p.all = append(p.all, pickerItem{runtime: r.Name, model: m, title: m, current: m == st.Model})
		}
	}
	p.refilter(st.Model)
	return p
}

// adopt takes over the typed text and the cursor's item of the picker it
// replaces (a new list of the same kind), so that nothing typed is lost.
func (p *picker) adopt(old *picker) {
	if old == nil || old.kind != p.kind || p.kind != pickModel {
		return
	}
	p.filter.SetValue(old.filter.Value())
	p.filter.CursorEnd()
	at := ""
	if old.cursor < len(old.items) {
		at = old.items[old.cursor].model
	}
	p.refilter(at)
}

// refilter rebuilds the visible items from the filter and puts the cursor
// on the item whose model is at (or the first).
func (p *picker) refilter(at string) {
	q := strings.TrimSpace(p.filter.Value())
	lq := strings.ToLower(q)
	p.items = p.items[:0:0]
	exact := false
	for _, it := range p.all {
		if strings.Contains(strings.ToLower(it.title), lq) {
			p.items = append(p.items, it)
		}
		exact = exact || it.model == q
	}
	if q != "" && !exact && !strings.ContainsFunc(q, isSpaceOrControl) {
		p.items = append(p.items, pickerItem{runtime: p.runtime, model: q, title: q, typed: true,
			detail: "use this name (not in the list)"})
	}
	p.cursor = 0
	for i, it := range p.items {
		if it.model == at && !it.typed {
			p.cursor = i
		}
	}
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// update moves the cursor and edits the filter; enter returns the chosen
// item, esc closes. Choosing an unavailable runtime says why instead.
func (p *picker) update(msg tea.KeyPressMsg) (chosen *pickerItem, closed bool) {
	keys := "up|ctrl+p|shift+tab|down|ctrl+n|tab|enter|esc|ctrl+c"
	if p.kind != pickModel {
		// Without a filter, letters are keys too.
		keys += "|k|j|q"
	}
	k := msg.String()
	if !strings.Contains("|"+keys+"|", "|"+k+"|") {
		if p.kind == pickModel {
			var cmd tea.Cmd
			before := p.filter.Value()
			p.filter, cmd = p.filter.Update(msg)
			_ = cmd // a steady cursor: no blink to schedule
			if p.filter.Value() != before {
				p.err = ""
				p.refilter("")
			}
		}
		return nil, false
	}
	switch k {
	case "up", "k", "ctrl+p", "shift+tab":
		if p.cursor > 0 {
			p.cursor--
		}
	case "down", "j", "ctrl+n", "tab":
		if p.cursor < len(p.items)-1 {
			p.cursor++
		}
	case "enter":
		if len(p.items) == 0 {
			return nil, false
		}
		it := p.items[p.cursor]
		if it.why != "" {
			p.err = fmt.Sprintf("%s is not available here: %s", it.title, it.why)
			return nil, false
		}
		return &it, false
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
	if p.kind == pickModel {
		p.filter.SetWidth(inner - 10)
		lines = append(lines, p.filter.View())
	}
	switch {
	case len(p.all) == 0 && p.kind == pickModel:
		lines = append(lines, t.Muted.Render("this runtime lists no models: type a model name"))
	case len(p.items) == 0:
		lines = append(lines, t.Muted.Render("nothing to choose"))
	}
	rows := max(maxHeight-4-len(lines)+1, 1)
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
			detail = strings.TrimPrefix(detail+" · unavailable: "+it.why, " · ")
		}
		if detail != "" {
			row += "  " + detail
		}
		row = ansi.Truncate(oneLine(row), inner, "…")
		switch {
		case i == p.cursor && it.why != "":
			// The cursor may rest on an unavailable runtime, but it
			// stays dim: enter there only says why.
			row = t.Muted.Reverse(true).Render(row + strings.Repeat(" ", max(inner-ansi.StringWidth(row), 0)))
		case i == p.cursor:
			row = t.Selected.Render(row + strings.Repeat(" ", max(inner-ansi.StringWidth(row), 0)))
		case it.why != "" || it.typed:
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

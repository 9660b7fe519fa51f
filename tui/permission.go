package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// permissionDialog shows one permission request at a time; requests that
// arrive meanwhile wait in order. An answer always names the request it
// was shown for, so it can never reach another one.
type permissionDialog struct {
	queue   []engine.Event
	offset  int // first body line shown
	denying bool
	input   textinput.Model
	keys    dialogKeys

	// headID and shownAt say which request is on screen and since when:
	// the root model takes answer keys only after a pause since then
	// (promptkeys.go), so keys typed for the prompt (say "yes" or "ls -a")
	// cannot answer a dialog that popped up under the person's fingers.
	headID  string
	shownAt time.Time
	// engaged says the person has already used the prompt on screen (a key
	// went to it after the pause): from then on its keys go to it at any
	// pace, so ] ] to skip two hunks is not taken for typing.
	engaged bool
	// children names the subagent behind a request, by request id, for
	// the requests of child sessions.
	children map[string]string
}

// answerAction is what the dialog asks the root model to send.
type answerAction struct {
	requestID string
	answer    engine.Answer
}

func newPermissionDialog(t *themes.Theme) *permissionDialog {
	in := textinput.New()
	in.Placeholder = "tell the model why, or what to do instead"
	in.Prompt = "✎ "
	in.CharLimit = 2000
	ist := in.Styles()
	ist.Cursor.Blink = false
	in.SetStyles(ist)
	return &permissionDialog{input: in, keys: defaultDialogKeys()}
}

func (d *permissionDialog) active() bool { return len(d.queue) > 0 }

func (d *permissionDialog) current() engine.Event { return d.queue[0] }

// touch notes when the request on screen changed.
func (d *permissionDialog) touch(now time.Time) {
	id := ""
	if d.active() {
		id = d.current().RequestID
	}
	if id != d.headID {
		d.headID, d.shownAt, d.engaged = id, now, false
	}
}

func (d *permissionDialog) push(ev engine.Event) {
	for _, q := range d.queue {
		if q.RequestID == ev.RequestID {
			return
		}
	}
	d.queue = append(d.queue, ev)
}

// pushChild queues a subagent's request; the title names the subagent.
func (d *permissionDialog) pushChild(ev engine.Event, label string) {
	if d.children == nil {
		d.children = map[string]string{}
	}
	d.children[ev.RequestID] = label
	// The child's turn id means nothing to the parent's dropTurn.
	ev.TurnID = -1
	d.push(ev)
}

// remove drops a request answered elsewhere (the turn ended, or another
// client answered it).
func (d *permissionDialog) remove(requestID string) {
	for i, q := range d.queue {
		if q.RequestID == requestID {
			d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
			if i == 0 {
				d.reset()
			}
			return
		}
	}
}

// dropTurn drops the requests of a turn that ended: the engine has
// already denied them.
func (d *permissionDialog) dropTurn(turnID int64) {
	kept := d.queue[:0:0]
	for i, q := range d.queue {
		if q.TurnID == turnID {
			if i == 0 {
				d.reset()
			}
			continue
		}
		kept = append(kept, q)
	}
	d.queue = kept
}

func (d *permissionDialog) reset() {
	d.offset, d.denying = 0, false
	d.input.Reset()
	d.input.Blur()
}

// update handles a key while the dialog is shown. It returns the answer to
// send, if the key gave one.
func (d *permissionDialog) update(msg tea.KeyPressMsg, bodyHeight int) (*answerAction, tea.Cmd) {
	if !d.active() {
		return nil, nil
	}
	id := d.current().RequestID
	if d.denying {
		switch msg.String() {
		case "enter":
			a := &answerAction{requestID: id, answer: engine.Answer{Decision: engine.DecisionDeny, Scope: engine.ScopeOnce, Feedback: strings.TrimSpace(d.input.Value())}}
			d.pop()
			return a, nil
		case "esc":
			d.denying = false
			d.input.Blur()
			return nil, nil
		}
		var cmd tea.Cmd
		d.input, cmd = d.input.Update(msg)
		return nil, cmd
	}
	answer := func(dec engine.Decision, scope engine.AnswerScope) *answerAction {
		a := &answerAction{requestID: id, answer: engine.Answer{Decision: dec, Scope: scope}}
		d.pop()
		return a
	}
	switch {
	case key.Matches(msg, d.keys.AllowOnce):
		return answer(engine.DecisionAllow, engine.ScopeOnce), nil
	case key.Matches(msg, d.keys.AllowSession):
		return answer(engine.DecisionAllow, engine.ScopeSession), nil
	case key.Matches(msg, d.keys.AllowAlways):
		return answer(engine.DecisionAllow, engine.ScopeAlways), nil
	case key.Matches(msg, d.keys.Deny):
		return answer(engine.DecisionDeny, engine.ScopeOnce), nil
	case key.Matches(msg, d.keys.DenyMessage):
		d.denying = true
		return nil, d.input.Focus()
	case key.Matches(msg, d.keys.Up):
		d.offset--
	case key.Matches(msg, d.keys.Down):
		d.offset++
	case key.Matches(msg, d.keys.PageUp):
		d.offset -= max(bodyHeight-1, 1)
	case key.Matches(msg, d.keys.PageDown):
		d.offset += max(bodyHeight-1, 1)
	}
	d.offset = max(d.offset, 0)
	return nil, nil
}

func (d *permissionDialog) pop() {
	d.queue = d.queue[1:]
	d.reset()
}

// body renders the request's details, wrapped to width.
func (d *permissionDialog) body(t *themes.Theme, width int) []string {
	ev := d.current()
	var out []string
	width = max(width, 10)
	if ev.Command != "" {
		out = append(out, t.Accent.Render("Command"))
		lines, rep := escapeCommand(ev.Command)
		for _, segs := range lines {
			var b strings.Builder
			for _, s := range segs {
				if s.marked {
					b.WriteString(t.Escaped.Render(s.text))
				} else {
					b.WriteString(t.Text.Render(s.text))
				}
			}
			for _, l := range strings.Split(ansi.Hardwrap(b.String(), width-2, true), "\n") {
				out = append(out, "  "+l)
			}
		}
		if rep.any() {
			out = append(out, t.Danger.Render("⚠ this command "+rep.summary()))
		}
	}
	if len(ev.Paths) > 0 {
		out = append(out, t.Accent.Render("Paths"))
		for _, p := range ev.Paths {
			segsLines, rep := escapeCommand(p)
			var b strings.Builder
			for _, segs := range segsLines {
				for _, s := range segs {
					if s.marked {
						b.WriteString(t.Escaped.Render(s.text))
					} else {
						b.WriteString(t.Text.Render(s.text))
					}
				}
			}
			for _, l := range strings.Split(ansi.Hardwrap(b.String(), width-2, true), "\n") {
				out = append(out, "  "+l)
			}
			if rep.any() {
				out = append(out, t.Danger.Render("⚠ this path "+rep.summary()))
			}
		}
	}
	if ev.Command == "" && len(ev.Paths) == 0 && len(ev.Input) > 0 {
		out = append(out, t.Accent.Render("Input"))
		for _, l := range wrapLines(sanitize(string(ev.Input)), width-2) {
			out = append(out, "  "+t.Text.Render(l))
		}
	}
	if ev.Diff != "" {
		a, r := countDiff(ev.Diff)
		out = append(out, t.Accent.Render("Proposed edit")+" "+t.Added.Render(fmt.Sprintf("+%d", a))+" "+t.Removed.Render(fmt.Sprintf("-%d", r)))
		for _, l := range strings.Split(strings.TrimRight(sanitize(ev.Diff), "\n"), "\n") {
			st := t.Text
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
				st = t.Muted
			case strings.HasPrefix(l, "+"):
				st = t.Added
			case strings.HasPrefix(l, "-"):
				st = t.Removed
			}
			for _, w := range wrapLines(l, width-2) {
				out = append(out, "  "+st.Render(w))
			}
		}
	}
	return append(out, askedWhy(t, ev, width)...)
}

// askedWhy says which stage of the gate asked, under which rule and why,
// and what "always allow" would save, wrapped to width.
func askedWhy(t *themes.Theme, ev engine.Event, width int) []string {
	var out []string
	for _, l := range whyLines(ev, width) {
		out = append(out, t.Muted.Render(l))
	}
	return out
}

// whyLines are askedWhy's lines without style. What "always allow" saves
// starts a line of its own: a permanent answer must not cover more than
// the person read, and allowing a shell command for good also allows what
// it writes.
func whyLines(ev engine.Event, width int) []string {
	lines := wrapLines(whyText(ev), width)
	if len(ev.Grants) > 0 {
		lines = append(lines, wrapLines("Always allow saves: "+oneLine(strings.Join(ev.Grants, ", ")), width)...)
	}
	return lines
}

func whyText(ev engine.Event) string {
	who := orDash(ev.Stage)
	if s, ok := stageNames[ev.Stage]; ok {
		who = s
	}
	why := "Asked by " + who
	if ev.Rule != "" {
		why += " (rule " + oneLine(ev.Rule) + ")"
	}
	if ev.Reason != "" {
		why += ": " + oneLine(ev.Reason)
	}
	return why
}

// keyRows lists bindings, wrapped rather than cut so that every key of a
// dialog stays visible, and breaks lines only between bindings, so a key
// is never separated from what it does.
func keyRows(t *themes.Theme, bs []key.Binding, width int) string {
	var items []string
	for _, b := range bs {
		if b.Enabled() {
			items = append(items, t.HelpKey.Render(b.Help().Key)+" "+t.HelpDesc.Render(b.Help().Desc))
		}
	}
	if len(items) == 0 {
		return ""
	}
	sep := t.Muted.Render(" · ")
	return strings.Join(joinWrapped(items, sep, sep, width), "\n")
}

// stageNames say in words which stage of the gate (tools/permission's
// Stage values) asked; a stage not listed is shown by its name.
var stageNames = map[string]string{
	"deny_rule":       "a deny rule",
	"ask_rule":        "an ask rule",
	"validation":      "input validation",
	"safety":          "the safety check",
	"mode":            "the mode",
	"capability":      "the capability check",
	"allow":           "the allow rules",
	"permission_mode": "the permission mode",
	"headless":        "the headless run",
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// view renders the dialog in at most maxHeight lines. The title, the keys
// and (when the body does not fit) the scroll position are always shown;
// the body scrolls between them.
func (d *permissionDialog) view(t *themes.Theme, width, maxHeight int) string {
	if !d.active() {
		return ""
	}
	ev := d.current()
	inner := max(width-4, 10)
	title := t.Warn.Bold(true).Render("⚠ Permission needed: ") + t.Accent.Render(requestName(ev))
	if who := d.children[ev.RequestID]; who != "" {
		title += t.Muted.Render(" · " + who)
	}
	if n := len(d.queue) - 1; n > 0 {
		title += t.Muted.Render(fmt.Sprintf("  (%d more waiting)", n))
	}
	title = ansi.Truncate(title, inner, "…")
	body := d.body(t, inner)
	var foot string
	if d.denying {
		d.input.SetWidth(inner - 4)
		foot = d.input.View() + "\n" + t.Muted.Render("enter send denial · esc back")
	} else {
		foot = keyRows(t, d.keys.ShortHelp(), inner)
		if lineCount(foot) > 1 && d.bodyHeight(maxHeight, lineCount(foot)) < 4 {
			// A short screen: the keys with one-word descriptions, so the
			// command keeps some room.
			foot = keyRows(t, d.keys.compact(), inner)
		}
	}
	footH := strings.Count(foot, "\n") + 1
	bodyH := d.bodyHeight(maxHeight, footH)
	scrollLine := ""
	if len(body) > bodyH {
		bodyH = max(bodyH-1, 1)
		d.offset = min(d.offset, len(body)-bodyH)
		end := d.offset + bodyH
		scrollLine = t.Muted.Render(ansi.Truncate(fmt.Sprintf("↑↓ scroll · lines %d–%d of %d", d.offset+1, end, len(body)), inner, "…"))
		body = body[d.offset:end]
	} else {
		d.offset = 0
	}
	parts := []string{title}
	parts = append(parts, body...)
	if scrollLine != "" {
		parts = append(parts, scrollLine)
	}
	parts = append(parts, foot)
	return t.Dialog.Width(width).Render(strings.Join(parts, "\n"))
}

// bodyHeight is the room for the body: the dialog's height minus the
// border, the title and the footer.
func (d *permissionDialog) bodyHeight(maxHeight, footH int) int {
	return max(maxHeight-2-1-footH, 2)
}

// requestName names a request in the dialog's title: its tool, or, for a
// command kz runs to verify a proposal (not the model's own call), what
// it is for.
func requestName(ev engine.Event) string {
	if ev.PatchID != "" && ev.Command != "" {
		return "verification of the proposal: " + oneLine(ev.Command)
	}
	return oneLine(ev.Tool)
}

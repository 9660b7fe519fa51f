package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// statusBar shows where the session stands: runtime, model, mode,
// permission mode, tokens, cost, budget and whether a turn runs.
type statusBar struct {
	state engine.State
	// total is the usage and cost of finished turns; turn those of the
	// running turn so far (from usage_updated events).
	total     engine.Usage
	totalCost float64
	turn      engine.Usage
	turnCost  float64
	running   bool
	// turnID is the turn that runs (or ran last): an interrupt names it.
	turnID int64
	queued int
	flash  string // a short message, e.g. "interrupting…"
	// preparing, when set, is all the bar shows: the session is not
	// there yet (see presession.go).
	preparing string
	// notice is a one-line request to the person, e.g. "press ctrl+c
	// again to quit"; it is never dropped for room.
	notice string
}

// apply folds the events that change the status.
func (s *statusBar) apply(ev engine.Event) {
	switch ev.Type {
	case engine.EventUserMessage:
		s.running, s.turnID = true, ev.TurnID
		s.turn, s.turnCost = engine.Usage{}, 0
	case engine.EventUsageUpdated:
		if ev.Usage != nil {
			s.turn.Add(*ev.Usage)
		}
		s.turnCost += ev.CostUSD
	case engine.EventFinalResult:
		s.running = false
		if ev.Usage != nil && !ev.Usage.IsZero() {
			s.total.Add(*ev.Usage)
		} else {
			s.total.Add(s.turn)
		}
		if ev.CostUSD > 0 {
			s.totalCost += ev.CostUSD
		} else {
			s.totalCost += s.turnCost
		}
		s.turn, s.turnCost = engine.Usage{}, 0
		s.flash = ""
	case engine.EventRuntimeSwitched:
		// An event without the new runtime's name (a replay of an old
		// journal) leaves the bar as it is rather than blank.
		if ev.Runtime != "" {
			s.state.Runtime, s.state.Model = ev.Runtime, ev.Model
		}
	case engine.EventModeChanged:
		s.state.Mode = ev.Mode
	}
}

// view renders the bar. When it does not fit, the least important parts
// are left out (permission mode, queue, budget, cost, tokens), never the
// runtime, the mode or the running indicator.
func (s *statusBar) view(t *themes.Theme, width int, spinner string) string {
	if s.preparing != "" {
		return s.preparingView(t, width)
	}
	in := s.total.InputTokens + s.turn.InputTokens
	out := s.total.OutputTokens + s.turn.OutputTokens
	cost := s.totalCost + s.turnCost
	rt := s.state.Runtime
	if s.state.Model != "" {
		rt += "/" + s.state.Model
	}
	type part struct {
		text string
		key  bool
		drop int    // parts with the highest drop go first; 0 never
		spin string // the spinner, already styled, before the text
	}
	parts := []part{
		{text: rt, key: true},
		{text: string(s.state.Mode)},
		{text: "perm " + string(s.state.PermissionMode), drop: 5},
		{text: fmt.Sprintf("↑%s ↓%s", fmtTokens(in), fmtTokens(out)), drop: 2},
		{text: fmt.Sprintf("$%.4f", cost), drop: 1},
	}
	if b := s.state.Limits.BudgetUSD; b > 0 {
		parts = append(parts, part{text: fmt.Sprintf("budget $%.2f left", max(b-s.turnCost, 0)), drop: 3})
	}
	if s.queued > 0 {
		parts = append(parts, part{text: fmt.Sprintf("%d queued", s.queued), drop: 4})
	}
	// The spinner arrives styled for the transcript; in the bar it takes
	// the bar's own colours, so its reset cannot cut the bar's background
	// and it is as readable as the bar's labels in every theme.
	spin := ""
	if s.running {
		spin = t.StatusKey.Render(ansi.Strip(spinner))
	}
	switch {
	case s.running && s.flash != "":
		parts = append(parts, part{text: " " + s.flash, spin: spin})
	case s.running:
		parts = append(parts, part{text: " running", spin: spin})
	case s.flash != "":
		parts = append(parts, part{text: s.flash})
	}
	if s.notice != "" {
		parts = append(parts, part{text: s.notice, key: true})
	}
	render := func() string {
		var b strings.Builder
		b.WriteString(t.Status.Render(" "))
		for i, p := range parts {
			if i > 0 {
				b.WriteString(t.Status.Render(" │ "))
			}
			b.WriteString(p.spin)
			if p.key {
				b.WriteString(t.StatusKey.Render(p.text))
			} else {
				b.WriteString(t.Status.Render(p.text))
			}
		}
		return b.String()
	}
	line := render()
	for level := 5; level > 0 && ansi.StringWidth(line) > width; level-- {
		kept := parts[:0:0]
		for _, p := range parts {
			if p.drop != level {
				kept = append(kept, p)
			}
		}
		parts = kept
		line = render()
	}
	w := ansi.StringWidth(line)
	if w > width {
		return ansi.Truncate(line, width, "…")
	}
	return line + t.Status.Render(strings.Repeat(" ", width-w))
}

// fmtTokens prints a token count compactly: 950, 12.3k, 4.5M.
func fmtTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}

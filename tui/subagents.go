package tui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
)

// childView is what a task card shows of its subagent: a live status line
// (running, done or failed, the tool calls, tokens and cost) and, when the
// transcript is expanded, one line per thing the child did. The child's
// events arrive wrapped (engine.EventChild) with the parent's tool call
// id, so they fold into the card of the call that spawned the child.
type childView struct {
	sessionID   string
	description string
	readOnly    bool
	runtime     string
	state       childState
	// status is the child's final status when it did not complete.
	status string
	tools  int
	tokens int64
	cost   float64
	// log holds one line per tool call, denial and error of the child,
	// and its answer last, at most maxChildLog lines.
	log []string
}

// childState is the card's word for where the child is.
type childState string

// Child states.
const (
	childRunning childState = "running"
	childDone    childState = "done"
	childFailed  childState = "failed"
)

// maxChildLog bounds the lines a child's card keeps; the child's session
// in the store holds everything.
const maxChildLog = 200

// applyChild folds a wrapped child event into the card of the parent's
// call.
func (tr *transcript) applyChild(ev engine.Event) {
	if ev.Child == nil || ev.ToolCallID == "" {
		return
	}
	it := tr.cardFor(engine.Event{Type: engine.EventToolCallStarted, TurnID: ev.TurnID, Tool: engine.TaskToolName, Time: ev.Time},
		ev.ToolCallID, false)
	c := it.card
	if c.child == nil {
		c.child = &childView{sessionID: ev.Child.SessionID, description: ev.Child.Description,
			readOnly: ev.Child.ReadOnly, state: childRunning}
	}
	c.child.apply(ev.Child.Event, tr.workspace)
	it.invalidate()
}

func (v *childView) apply(ev engine.Event, workspace string) {
	if ev.Runtime != "" {
		v.runtime = ev.Runtime
	}
	switch ev.Type {
	case engine.EventToolCallStarted:
		v.tools++
		t := titleOf(ev.Tool, ev.Input, ev.Command, ev.Paths, workspace)
		v.logf("▸ %s %s", t.verb, t.arg)
	case engine.EventPermissionDecided:
		if ev.Decision == engine.DecisionDeny {
			v.logf("✗ %s denied: %s", ev.Tool, ev.Reason)
		}
	case engine.EventError:
		v.logf("✗ %s", ev.Text)
	case engine.EventUsageUpdated:
		if ev.Usage != nil {
			v.tokens += ev.Usage.InputTokens + ev.Usage.OutputTokens
		}
		v.cost += ev.CostUSD
	case engine.EventFinalResult:
		v.state, v.status = childDone, ""
		if st := engine.Status(ev.Status); st != engine.StatusComplete {
			v.state, v.status = childFailed, ev.Status
		}
		if ev.Usage != nil {
			v.tokens = ev.Usage.InputTokens + ev.Usage.OutputTokens
		}
		v.cost = ev.CostUSD
		if out := strings.TrimSpace(ev.Output); out != "" {
			v.logf("= %s", firstLine(out))
		}
	}
}

func (v *childView) logf(format string, args ...any) {
	if len(v.log) >= maxChildLog {
		return
	}
	v.log = append(v.log, oneLine(strings.TrimSpace(fmt.Sprintf(format, args...))))
}

// statusLine is the card's summary of the child: "subagent · scripted ·
// running · 2 tools · 1.2k tokens · $0.0100".
func (v *childView) statusLine() string {
	parts := []string{"subagent"}
	if v.readOnly {
		parts[0] = "read-only subagent"
	}
	if v.runtime != "" {
		parts = append(parts, v.runtime)
	}
	state := string(v.state)
	if v.status != "" {
		state += " (" + v.status + ")"
	}
	parts = append(parts, state, plural(v.tools, "tool"))
	if v.tokens > 0 {
		parts = append(parts, fmtTokens(v.tokens)+" tokens")
	}
	if v.cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", v.cost))
	}
	return strings.Join(parts, " · ")
}

// lines renders the child's part of the card: the status line, then the
// log (expanded) or its last line (collapsed, while the child runs).
func (v *childView) lines(rc *renderCtx) []string {
	t := rc.theme
	gutter := t.Muted.Render("│ ")
	st := t.Accent
	switch v.state {
	case childDone:
		st = t.OK
	case childFailed:
		st = t.Error
	}
	w := max(rc.width-2, 1)
	out := []string{gutter + st.Render(truncateLine(v.statusLine(), w))}
	log := v.log
	if !rc.expand {
		log = nil
		if v.state == childRunning && len(v.log) > 0 {
			log = v.log[len(v.log)-1:]
		}
	}
	for _, l := range log {
		out = append(out, gutter+t.Muted.Render(truncateLine(sanitize(l), w)))
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TaskSubmitter is a session that delegates a prompt to a subagent for
// the person (/task); *engine.Session is one.
type TaskSubmitter interface {
	SubmitTask(req engine.ChildRequest) error
}

// cmdTask runs "/task RUNTIME PROMPT": a turn in which a subagent on
// RUNTIME answers PROMPT, shown as a task card with the child's live
// status.
func cmdTask(m *Model, args string) tea.Cmd {
	ts, ok := m.sess.(TaskSubmitter)
	runtime, prompt, _ := strings.Cut(args, " ")
	prompt = strings.TrimSpace(prompt)
	switch {
	case !ok:
		m.tr.notice("this session cannot run subagents", "warn")
		return nil
	case runtime == "" || prompt == "":
		m.tr.notice("usage: /task RUNTIME PROMPT (a subagent on RUNTIME answers PROMPT)", "warn")
		return nil
	case m.status.running || m.submitting:
		m.tr.notice("wait for the turn to end before /task (or interrupt it)", "warn")
		return nil
	}
	m.submitting = true
	text := "/task " + args
	desc := prompt
	if len(desc) > 40 {
		desc = truncateLine(desc, 40)
	}
	return func() tea.Msg {
		err := ts.SubmitTask(engine.ChildRequest{Runtime: runtime, Prompt: prompt, Description: desc})
		if errors.Is(err, engine.ErrBusy) {
			// A busy session would queue the line as a prompt: say so
			// instead.
			err = errors.New("a turn is running: /task again once it ends")
		}
		return submitMsg{prompt: text, err: err}
	}
}

// childLabel names a subagent in a permission dialog.
func childLabel(c *engine.ChildEvent) string {
	name := "subagent"
	if c.Event.Runtime != "" {
		name += " on " + c.Event.Runtime
	}
	if c.Description != "" {
		name += ": " + oneLine(c.Description)
	}
	return name
}

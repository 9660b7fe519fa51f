package tui

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// cardStatus is what a card's icon says about its call.
type cardStatus string

// Card statuses. Only cardOK shows a ✓: a call is a success when it
// finished and said so (an explicit exit 0, or a tool result without error
// for a call nobody denied). A call that ended without saying how is
// cardDone, never cardOK.
const (
	cardRunning     cardStatus = "running"
	cardPending     cardStatus = "pending" // a proposal waiting for its review
	cardOK          cardStatus = "ok"
	cardFailed      cardStatus = "failed"
	cardDenied      cardStatus = "denied"
	cardInterrupted cardStatus = "interrupted"
	cardDone        cardStatus = "done"
)

// final reports whether no later event can change the status but a late
// merge (a command_finished after its tool_call_finished, a denial the
// runtime reports at the end of the turn).
func (s cardStatus) final() bool { return s != cardRunning && s != cardPending }

// toolCard is one tool call, command, file edit or patch proposal. Every
// event about the same call (tool_call_*, command_*, permission_decided,
// file_edited, patch_*) folds into the one card, in whatever order the
// runtime sends them; status is derived from what the card has heard, so
// no order of events can turn a denied or failed call into a success.
type toolCard struct {
	id       string
	tool     string // the verb shown: "Bash", "Edit", "Read", …
	summary  string // what the call works on: the command, the path, …
	status   cardStatus
	output   strings.Builder
	progress string
	started  time.Time
	duration time.Duration
	exitCode *int
	files    []engine.FileChange
	decision string // the permission answer for this call, if one was asked
	allowed  bool
	outcome  string // how a proposal ended: applied, or why it was rejected
	// child is the subagent a task call spawned (subagents.go).
	child *childView

	// The call as the runtime named it; the title is computed from these.
	rawTool string
	input   json.RawMessage
	command string
	paths   []string

	// What the card has heard: status is a function of these (settle).
	called      bool // tool_call_started came
	result      bool // tool_call_finished came
	commanded   bool // command_started came
	cmdEnded    bool // command_finished came
	failed      bool // an error result, a failed command or a non-zero exit
	denied      bool // a permission answer denied the call
	interrupted bool // the turn ended while the call ran, or the runtime said so
	proposal    bool // a patch proposal (patch_proposed)
	applied     bool // the proposal was applied
}

// retitle computes the title from the call's normalized fields.
func (c *toolCard) retitle(workspace string) {
	if c.proposal {
		return
	}
	t := titleOf(c.rawTool, c.input, c.command, c.paths, workspace)
	c.tool, c.summary = t.verb, t.arg
}

// ended reports whether the call has finished: a tool call with its
// result, a command without a tool call with its command_finished, a
// denied call whatever else comes.
func (c *toolCard) ended() bool {
	return c.result || (c.cmdEnded && !c.called) || c.denied || c.interrupted
}

// settle derives the status from what the card has heard.
func (c *toolCard) settle() {
	switch {
	case c.interrupted:
		c.status = cardInterrupted
	case c.denied:
		c.status = cardDenied
	case c.failed || (c.exitCode != nil && *c.exitCode != 0):
		c.status = cardFailed
	case c.proposal && c.applied:
		c.status = cardOK
	case c.proposal:
		c.status = cardPending
	case !c.ended():
		c.status = cardRunning
	case c.exitCode != nil || c.result:
		c.status = cardOK
	default:
		c.status = cardDone
	}
}

// setOutput replaces the card's output with the final one of ev. A call
// the turn cut short keeps the output it showed: live, the card has it
// from tool_call_progress; reopened (progress is not stored), the closing
// event carries it in Text.
func (c *toolCard) setOutput(ev engine.Event) {
	out := ev.Output
	if out == engine.InterruptedNotRerun {
		if c.output.Len() > 0 {
			return
		}
		if ev.Text != "" {
			out = ev.Text
		}
	}
	if out == "" {
		return
	}
	c.output.Reset()
	c.output.WriteString(out)
}

// end records when the call ended.
func (c *toolCard) end(ev engine.Event) {
	switch {
	case ev.DurationMS > 0:
		c.duration = time.Duration(ev.DurationMS) * time.Millisecond
	case !c.started.IsZero() && !ev.Time.IsZero() && c.duration == 0:
		c.duration = ev.Time.Sub(c.started)
	}
}

// cardKey is the key that ties the events of one call together: the tool
// call id, else (a command some runtimes report without a tool call) the
// patch id and the command line.
func cardKey(ev engine.Event) string {
	switch {
	case ev.ToolCallID != "":
		return ev.ToolCallID
	case ev.Type == engine.EventCommandStarted || ev.Type == engine.EventCommandFinished:
		return "cmd:" + ev.PatchID + ":" + ev.Command
	}
	return ""
}

// cardFor returns the card of the event's call, adding one at the end of
// the transcript on first sight. A tool_call_started (start) for a key
// whose card already holds a started call, or an event of another turn,
// opens a new card: some runtimes reuse ids across turns.
func (tr *transcript) cardFor(ev engine.Event, key string, start bool) *item {
	if it := tr.tools[key]; it != nil && it.turnID == ev.TurnID && !(start && it.card.called) {
		return it
	}
	c := &toolCard{id: key, rawTool: ev.Tool, started: ev.Time, status: cardRunning}
	it := tr.add(&item{kind: kindTool, turnID: ev.TurnID, card: c})
	tr.tools[key] = it
	tr.live[it] = struct{}{}
	return it
}

// touch settles a card after an event changed it and forgets it as live
// once its status is final.
func (tr *transcript) touch(it *item) {
	c := it.card
	c.retitle(tr.workspace)
	c.settle()
	if c.status.final() {
		delete(tr.live, it)
	}
	it.invalidate()
}

// applyCall folds the events of tool calls and commands into cards. It
// reports whether the event was one of them.
func (tr *transcript) applyCall(ev engine.Event) bool {
	key := cardKey(ev)
	switch ev.Type {
	case engine.EventToolCallStarted:
		it := tr.cardFor(ev, key, true)
		c := it.card
		c.called, c.rawTool = true, ev.Tool
		if len(ev.Input) > 0 {
			c.input = ev.Input
		}
		if len(ev.Paths) > 0 {
			c.paths = ev.Paths
		}
		if !ev.Time.IsZero() {
			c.started = ev.Time
		}
		tr.touch(it)
	case engine.EventToolCallProgress:
		it := tr.cardFor(ev, key, false)
		it.card.output.WriteString(ev.Output)
		it.card.progress = ev.Text
		tr.touch(it)
	case engine.EventToolCallFinished:
		it := tr.cardFor(ev, key, false)
		c := it.card
		c.result = true
		if c.rawTool == "" {
			c.rawTool = ev.Tool
		}
		if len(c.input) == 0 && len(ev.Input) > 0 {
			c.input = ev.Input
		}
		if len(c.paths) == 0 && len(ev.Paths) > 0 {
			c.paths = ev.Paths
		}
		switch ev.Status {
		case engine.ToolStatusInterrupted:
			c.interrupted = true
		case engine.ToolStatusError:
			c.failed = true
		}
		c.failed = c.failed || ev.IsError
		c.setOutput(ev)
		c.end(ev)
		tr.touch(it)
	case engine.EventCommandStarted:
		it := tr.cardFor(ev, key, false)
		c := it.card
		c.commanded, c.command = true, ev.Command
		if c.rawTool == "" {
			c.rawTool = firstNonEmpty(ev.Tool, "bash")
		}
		if c.started.IsZero() {
			c.started = ev.Time
		}
		tr.touch(it)
	case engine.EventCommandFinished:
		it := tr.cardFor(ev, key, false)
		c := it.card
		c.cmdEnded = true
		if c.command == "" {
			c.command = ev.Command
		}
		if c.rawTool == "" {
			c.rawTool = firstNonEmpty(ev.Tool, "bash")
		}
		if ev.ExitCode != nil {
			code := *ev.ExitCode
			c.exitCode = &code
		}
		c.failed = c.failed || ev.IsError
		c.setOutput(ev)
		c.end(ev)
		tr.touch(it)
	case engine.EventFileEdited:
		a, r := countDiff(ev.Diff)
		fc := engine.FileChange{Path: ev.Path, Operation: "edit", Diff: ev.Diff, Added: a, Removed: r}
		switch {
		case ev.ToolCallID != "":
			it := tr.cardFor(ev, key, false)
			it.card.files = append(it.card.files, fc)
			if it.card.rawTool == "" {
				it.card.rawTool = ev.Tool
			}
			tr.touch(it)
		case ev.PatchID != "" && tr.tools[ev.PatchID] != nil:
			// The proposal's card lists what was applied already.
		default:
			c := &toolCard{tool: string(verbEdit), summary: relPath(ev.Path, tr.workspace), status: cardDone, files: []engine.FileChange{fc}}
			tr.add(&item{kind: kindTool, turnID: ev.TurnID, card: c})
		}
	case engine.EventPermissionDecided:
		if ev.ToolCallID == "" {
			// A check of kz's own (a mention, an agent's file read) that
			// belongs to no card.
			tr.add(&item{kind: kindDecision, turnID: ev.TurnID, text: decisionText(ev, tr.workspace), style: decisionStyle(ev)})
			return true
		}
		it := tr.cardFor(ev, key, false)
		c := it.card
		if c.rawTool == "" {
			c.rawTool = ev.Tool
		}
		if c.command == "" {
			c.command = ev.Command
		}
		if len(c.paths) == 0 {
			c.paths = ev.Paths
		}
		if len(c.input) == 0 && len(ev.Input) > 0 {
			c.input = ev.Input
		}
		c.decision, c.allowed = cardDecisionText(ev), ev.Decision == engine.DecisionAllow
		c.denied = c.denied || ev.Decision == engine.DecisionDeny
		tr.touch(it)
	default:
		return tr.applyPatch(ev)
	}
	return true
}

// applyPatch folds a proposal and its outcome into one card, keyed by the
// patch id (the engine asks about a proposal under that id).
func (tr *transcript) applyPatch(ev engine.Event) bool {
	switch ev.Type {
	case engine.EventPatchProposed:
		files := append([]engine.FileChange(nil), ev.Files...)
		for i := range files {
			if files[i].Added == 0 && files[i].Removed == 0 {
				files[i].Added, files[i].Removed = countDiff(files[i].Diff)
			}
		}
		key := firstNonEmpty(ev.PatchID, "patch")
		it := tr.cardFor(ev, key, true)
		c := it.card
		c.called, c.proposal, c.files = true, true, files
		c.tool, c.summary = "Proposal", ev.Text
		tr.touch(it)
	case engine.EventPatchApplied:
		it := tr.tools[ev.PatchID]
		if it == nil || ev.PatchID == "" {
			tr.add(&item{kind: kindNotice, turnID: ev.TurnID, text: "✓ patch applied " + ev.PatchID + " " + ev.Text, style: "ok"})
			return true
		}
		c := it.card
		c.applied, c.outcome = true, "✓ patch applied"
		if note := strings.TrimSpace(strings.TrimPrefix(ev.Text, c.summary)); note != "" {
			c.outcome += " " + note
		}
		if len(ev.Files) > 0 {
			c.files = nil
			for _, f := range ev.Files {
				if f.Added == 0 && f.Removed == 0 {
					f.Added, f.Removed = countDiff(f.Diff)
				}
				c.files = append(c.files, f)
			}
		}
		tr.touch(it)
	case engine.EventPatchRejected:
		what := "patch rejected"
		if ev.Reason != "" {
			what += " (" + ev.Reason + ")"
		}
		if ev.Text != "" {
			what += ": " + ev.Text
		}
		it := tr.tools[ev.PatchID]
		if it == nil || ev.PatchID == "" {
			tr.add(&item{kind: kindNotice, turnID: ev.TurnID, text: "✗ " + what, style: "warn"})
			return true
		}
		c := it.card
		c.outcome = "✗ " + what
		if ev.Reason == "declined" {
			c.denied = true
		} else {
			c.failed = true
		}
		tr.touch(it)
	default:
		return false
	}
	return true
}

// closeTurn ends the cards of a turn that ended: a call still running (or
// a proposal still waiting) was cut short, and says so.
func (tr *transcript) closeTurn(turnID int64) {
	for it := range tr.live {
		if it.turnID == turnID {
			it.card.interrupted = true
			tr.touch(it)
		}
	}
}

// closeAll ends every card still open, when a stored session is opened:
// its last turn can have stopped without a final_result (a crash).
func (tr *transcript) closeAll() {
	for it := range tr.live {
		it.card.interrupted = true
		tr.touch(it)
	}
}

// cardDecisionText is a permission answer as its card shows it: the card's
// title already names the call.
func cardDecisionText(ev engine.Event) string {
	var b strings.Builder
	if ev.Decision == engine.DecisionAllow {
		b.WriteString("✓ allowed")
	} else {
		b.WriteString("✗ denied")
	}
	writeDecisionDetail(&b, ev)
	return b.String()
}

// decisionText is a permission answer that belongs to no card: it names
// the call.
func decisionText(ev engine.Event, workspace string) string {
	t := titleOf(ev.Tool, ev.Input, ev.Command, ev.Paths, workspace)
	what := t.verb
	if t.arg != "" {
		what += " " + oneLine(t.arg)
	}
	var b strings.Builder
	if ev.Decision == engine.DecisionAllow {
		b.WriteString("✓ allowed ")
	} else {
		b.WriteString("✗ denied ")
	}
	b.WriteString(what)
	writeDecisionDetail(&b, ev)
	return b.String()
}

func writeDecisionDetail(b *strings.Builder, ev engine.Event) {
	if ev.Scope != "" && ev.Scope != engine.ScopeOnce {
		b.WriteString(" (" + string(ev.Scope) + ")")
	}
	if ev.Stage != "" && ev.Stage != "user" {
		b.WriteString(" — " + ev.Stage)
		if ev.Reason != "" {
			b.WriteString(": " + ev.Reason)
		}
	}
	if ev.Feedback != "" {
		b.WriteString(" — “" + ev.Feedback + "”")
	}
}

func decisionStyle(ev engine.Event) string {
	if ev.Decision == engine.DecisionAllow {
		return "ok"
	}
	return "warn"
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

package tui

import (
	"fmt"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// transcript is the scrollable conversation. It folds engine events into
// items and lays out only the items that are visible.
//
// Scrolling: while follow is set the view is anchored at the bottom and
// new output scrolls into view. Scrolling up clears follow and anchors the
// top of the view at (anchor, anchorLine), an item and a line within it, so
// text streaming in below never moves what the person is reading.
// Scrolling back down to the end sets follow again.
type transcript struct {
	items []*item
	// tools holds every card by the key that ties its events together
	// (see cardKey); a card stays in it after its call ended, so an event
	// that comes late (a command_finished after the tool result, a denial
	// reported at the end of the turn) still merges into its card. live
	// holds the cards whose status is not final yet.
	tools map[string]*item
	live  map[*item]struct{}
	// workspace is the session's directory: cards show paths inside it
	// relative to it.
	workspace  string
	follow     bool
	anchor     int
	anchorLine int
	expand     bool
	reasoning  bool
	// top is the index of the first item the last view showed; the
	// messages just above it are rendered ahead, off the UI goroutine.
	top int
	// keep bounds how far from top rendered lines are kept, in items, and
	// sweep is where the sweep that drops the others goes on (evictFar).
	keep, sweep int
	// deferred holds dividers that came while an answer was streaming:
	// they go below the answer once it ends, not into the middle of it.
	deferred []*item
}

func newTranscript() *transcript {
	return &transcript{tools: map[string]*item{}, live: map[*item]struct{}{}, follow: true, keep: keepItems}
}

func (tr *transcript) add(it *item) *item {
	tr.closeStreams(it.kind)
	tr.flushDeferred()
	tr.items = append(tr.items, it)
	return it
}

// addDivider adds a divider, after the answer streaming now if there is
// one (the mode can change while an answer streams).
func (tr *transcript) addDivider(it *item) {
	if tr.openItem(kindAssistant) != nil {
		tr.deferred = append(tr.deferred, it)
		return
	}
	tr.add(it)
}

func (tr *transcript) flushDeferred() {
	tr.items = append(tr.items, tr.deferred...)
	tr.deferred = nil
}

// closeStreams ends streaming items when something else starts, so the
// next delta opens a new item below it.
func (tr *transcript) closeStreams(next itemKind) {
	for i := len(tr.items) - 1; i >= 0 && i >= len(tr.items)-3; i-- {
		it := tr.items[i]
		if it.open && it.kind != next {
			it.open = false
			if it.md != nil {
				it.md.Finish()
			}
			it.invalidate()
		}
	}
}

// openItem returns the last item if it is an open stream of that kind.
func (tr *transcript) openItem(kind itemKind) *item {
	if n := len(tr.items); n > 0 {
		if it := tr.items[n-1]; it.open && it.kind == kind {
			return it
		}
	}
	return nil
}

// notice adds a local message (not from the engine), e.g. a refusal.
func (tr *transcript) notice(text, style string) {
	tr.add(&item{kind: kindNotice, text: text, style: style})
}

func (tr *transcript) hasNotice(text string) bool {
	for _, it := range tr.items {
		if it.kind == kindNotice && it.text == text {
			return true
		}
	}
	return false
}

// apply folds one engine event into the transcript.
func (tr *transcript) apply(ev engine.Event) {
	switch ev.Type {
	case engine.EventSessionStarted:
		// kz's own runtimes carry the model catalog's warning here (an
		// unknown model runs with conservative limits and no price). It
		// comes with every turn; the person needs to read it once.
		if ev.Text != "" && !tr.hasNotice("warning: "+ev.Text) {
			tr.add(&item{kind: kindNotice, turnID: ev.TurnID, text: "warning: " + ev.Text, style: "warn"})
		}
	case engine.EventUserMessage:
		tr.add(&item{kind: kindUser, turnID: ev.TurnID, text: ev.Text, images: imageLabels(ev.Images)})
	case engine.EventTextDelta:
		it := tr.openItem(kindAssistant)
		if it == nil {
			it = tr.add(&item{kind: kindAssistant, turnID: ev.TurnID, md: &mdDoc{}, open: true})
		}
		it.md.Append(sanitize(ev.Text))
	case engine.EventAssistantMessage:
		text := sanitize(ev.Text)
		if it := tr.openItem(kindAssistant); it != nil {
			if it.md.Text() != text {
				it.md.Reset(text)
			}
			it.md.Finish()
			it.open = false
			tr.flushDeferred()
			return
		}
		if strings.TrimSpace(text) == "" {
			return
		}
		d := &mdDoc{}
		d.Append(text)
		d.Finish()
		tr.add(&item{kind: kindAssistant, turnID: ev.TurnID, md: d})
	case engine.EventReasoningDelta:
		it := tr.openItem(kindReasoning)
		if it == nil {
			it = tr.add(&item{kind: kindReasoning, turnID: ev.TurnID, reason: &strings.Builder{}, open: true})
		}
		it.reason.WriteString(ev.Text)
	case engine.EventRuntimeSwitched:
		text := fmt.Sprintf("runtime %s → %s", ev.From, ev.To)
		if ev.Reason != "" {
			text += " (" + ev.Reason + ")"
		}
		tr.add(&item{kind: kindDivider, turnID: ev.TurnID, text: text})
	case engine.EventModeChanged:
		tr.addDivider(&item{kind: kindDivider, turnID: ev.TurnID, text: fmt.Sprintf("mode %s → %s", ev.From, ev.Mode)})
	case engine.EventCompactBoundary:
		text := "context compacted"
		if ev.TokensBefore > 0 {
			text = fmt.Sprintf("context compacted %s → %s tokens", fmtTokens(int64(ev.TokensBefore)), fmtTokens(int64(ev.TokensAfter)))
		}
		tr.add(&item{kind: kindDivider, turnID: ev.TurnID, text: text})
	case engine.EventError:
		text := ev.Text
		if ev.ErrorKind != "" {
			text = string(ev.ErrorKind) + ": " + text
		}
		if ev.Retryable {
			text += " (retrying elsewhere)"
		}
		tr.add(&item{kind: kindError, turnID: ev.TurnID, text: text})
	case engine.EventNotice:
		tr.add(&item{kind: kindNotice, turnID: ev.TurnID, text: ev.Stage + ": " + ev.Text, style: "warn"})
	case engine.EventChild:
		tr.applyChild(ev)
	case engine.EventFinalResult:
		tr.closeStreams("")
		tr.closeTurn(ev.TurnID)
		if st := engine.Status(ev.Status); st != engine.StatusComplete && st != "" {
			tr.add(&item{kind: kindNotice, turnID: ev.TurnID, text: "⊘ turn ended: " + finalText(st), style: "warn"})
		}
	default:
		// Tool calls, commands, file edits, permission answers and patch
		// proposals: cards.go.
		tr.applyCall(ev)
	}
}

func finalText(st engine.Status) string {
	switch st {
	case engine.StatusInterrupted:
		return "interrupted"
	case engine.StatusMaxCycles:
		return "max cycles reached"
	case engine.StatusBudgetExceeded:
		return "budget exceeded"
	case engine.StatusTimeout:
		return "timed out"
	}
	return string(st)
}

// height is the number of lines item i takes, with the blank line that
// separates it from the next one.
func (tr *transcript) height(rc *renderCtx, i int) int {
	n := len(tr.items[i].lines(rc))
	if i < len(tr.items)-1 {
		n++
	}
	return n
}

// view returns at most height lines. It renders only the items that reach
// into the view and copies only the lines it shows.
func (tr *transcript) view(rc *renderCtx, height int) []string {
	if height <= 0 || len(tr.items) == 0 {
		return nil
	}
	if tr.follow {
		return tr.bottom(rc, height)
	}
	tr.top = tr.anchor
	out := make([]string, 0, height)
	skip := tr.anchorLine
	for i := tr.anchor; i < len(tr.items) && len(out) < height; i++ {
		l := tr.items[i].lines(rc)
		if skip < len(l) {
			l = l[skip:]
			skip = 0
			l = l[:min(len(l), height-len(out))]
			out = append(out, l...)
		} else {
			skip -= len(l)
		}
		if i < len(tr.items)-1 && len(out) < height {
			if skip > 0 {
				skip--
			} else {
				out = append(out, "")
			}
		}
	}
	if len(out) < height {
		// The end came into view (e.g. after a resize): follow again.
		tr.follow = true
		return tr.bottom(rc, height)
	}
	return out
}

// bottom collects the last height lines, walking up from the end.
func (tr *transcript) bottom(rc *renderCtx, height int) []string {
	var parts [][]string
	need := height
	for i := len(tr.items) - 1; i >= 0 && need > 0; i-- {
		tr.top = i
		if i < len(tr.items)-1 {
			parts = append(parts, []string{""})
			need--
			if need == 0 {
				break
			}
		}
		l := tr.items[i].lines(rc)
		if len(l) > need {
			l = l[len(l)-need:]
		}
		parts = append(parts, l)
		need -= len(l)
	}
	out := make([]string, 0, height-need)
	for i := len(parts) - 1; i >= 0; i-- {
		out = append(out, parts[i]...)
	}
	return out
}

// topAnchor computes the anchor of the bottom-aligned view.
func (tr *transcript) topAnchor(rc *renderCtx, height int) (int, int) {
	n := 0
	for i := len(tr.items) - 1; i >= 0; i-- {
		l := tr.height(rc, i)
		if n+l >= height {
			return i, n + l - height
		}
		n += l
	}
	return 0, 0
}

// scroll moves the view by delta lines (negative is up).
func (tr *transcript) scroll(rc *renderCtx, height, delta int) {
	if len(tr.items) == 0 || delta == 0 {
		return
	}
	if tr.follow {
		if delta > 0 {
			return
		}
		tr.anchor, tr.anchorLine = tr.topAnchor(rc, height)
		tr.follow = false
	}
	tr.anchorLine += delta
	for tr.anchorLine < 0 {
		if tr.anchor == 0 {
			tr.anchorLine = 0
			break
		}
		tr.anchor--
		tr.anchorLine += tr.height(rc, tr.anchor)
	}
	for tr.anchor < len(tr.items)-1 {
		l := tr.height(rc, tr.anchor)
		if tr.anchorLine < l {
			break
		}
		tr.anchorLine -= l
		tr.anchor++
	}
	// Back at the end: follow again.
	rest := 0
	for i := tr.anchor; i < len(tr.items) && rest-tr.anchorLine <= height; i++ {
		rest += tr.height(rc, i)
	}
	if rest-tr.anchorLine <= height {
		tr.follow = true
	}
}

// atTop reports whether the view is scrolled back to the very first line.
func (tr *transcript) atTop() bool { return !tr.follow && tr.anchor == 0 && tr.anchorLine == 0 }

// toBottom jumps to the end and follows new output.
func (tr *transcript) toBottom() { tr.follow = true }

// streaming reports whether a visible streaming message lags its source,
// so the model schedules a frame to catch up.
func (tr *transcript) streaming() bool {
	for i := len(tr.items) - 1; i >= 0 && i >= len(tr.items)-3; i-- {
		if it := tr.items[i]; it.kind == kindAssistant && it.md.stale() {
			return true
		}
	}
	return false
}

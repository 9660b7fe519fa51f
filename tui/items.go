package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/themes"
)

// itemKind names what a transcript item shows.
type itemKind string

const (
	kindUser      itemKind = "user"
	kindAssistant itemKind = "assistant"
	kindReasoning itemKind = "reasoning"
	kindTool      itemKind = "tool"
	kindDivider   itemKind = "divider"
	kindError     itemKind = "error"
	kindNotice    itemKind = "notice"
	kindDecision  itemKind = "decision"
)

// previewLines is how many lines of tool output a collapsed card shows.
const previewLines = 4

// maxExpandedLines bounds an expanded card, so one huge output cannot make
// every frame slow; the rest is in the store.
const maxExpandedLines = 400

// item is one block of the transcript. Items render themselves into lines
// at a width; finished items cache the result, so a frame only pays for
// items that changed.
type item struct {
	kind   itemKind
	turnID int64
	text   string // user prompt, divider, error, notice, decision text
	// images labels a user prompt's attached images.
	images []string
	style  string // notice flavour: "warn", "error", "ok" or ""

	md     *mdDoc           // assistant
	reason *strings.Builder // reasoning
	open   bool             // assistant/reasoning still streaming
	card   *toolCard        // tool, command, file edit, patch

	cacheW   int
	cacheKey string
	cache    []string
}

// invalidate drops the cached render.
func (it *item) invalidate() { it.cache, it.cacheKey = nil, "" }

// renderCtx is what items need to render.
type renderCtx struct {
	theme     *themes.Theme
	md        *mdRenderer
	width     int
	now       time.Time
	spinner   string
	expand    bool // tool cards show their whole output
	reasoning bool // reasoning is shown in full
	force     bool // streaming text is rendered now, not at the next frame
	// deferCold shows a finished message that was never rendered at this
	// width as plain text and leaves glamour to a background render, so a
	// frame never waits for it (the program sets it; tests that need the
	// styled render at once do not).
	deferCold bool
}

// lines renders the item. Only items that are still changing (streaming
// text, running tool calls) are rendered again; the rest come from cache.
func (it *item) lines(rc *renderCtx) []string {
	switch it.kind {
	case kindAssistant:
		return it.md.Lines(rc.md, rc.width, rc.now, rc.force, rc.deferCold)
	case kindTool:
		if it.card.status == cardRunning || (it.card.child != nil && it.card.child.state == childRunning) {
			return it.card.render(rc)
		}
	}
	key := fmt.Sprintf("%t%t", rc.expand, rc.reasoning)
	if it.cache != nil && it.cacheW == rc.width && it.cacheKey == key && !it.open {
		return it.cache
	}
	var out []string
	t := rc.theme
	w := rc.width
	switch it.kind {
	case kindUser:
		body := wrapLines(sanitize(it.text), w-2)
		for i, l := range body {
			mark := "  "
			if i == 0 {
				mark = t.UserMark.Render("›") + " "
			}
			out = append(out, mark+t.User.Render(l))
		}
		for _, l := range it.images {
			out = append(out, "  "+t.Muted.Render(truncateLine(sanitize(l), w-2)))
		}
	case kindReasoning:
		out = renderReasoning(t, it.reason.String(), w, rc.reasoning, it.open)
	case kindTool:
		out = it.card.render(rc)
	case kindDivider:
		out = []string{divider(t, it.text, w)}
	case kindError:
		for i, l := range wrapLines(sanitize(it.text), w-2) {
			p := "  "
			if i == 0 {
				p = "✗ "
			}
			out = append(out, t.Error.Render(p+l))
		}
	case kindDecision, kindNotice:
		st := t.Muted
		switch it.style {
		case "warn":
			st = t.Warn
		case "error":
			st = t.Error
		case "ok":
			st = t.OK
		}
		for _, l := range wrapHanging(sanitize(it.text), w) {
			out = append(out, st.Render(l))
		}
	}
	it.cache, it.cacheW, it.cacheKey = out, w, key
	return out
}

func renderReasoning(t *themes.Theme, text string, w int, full, open bool) []string {
	text = strings.TrimSpace(sanitize(text))
	body := wrapLines(text, w-2)
	label := "✻ thinking"
	if open {
		label += "…"
	}
	if !full {
		return []string{t.Reasoning.Render(fmt.Sprintf("%s (%s, ctrl+t to show)", label, plural(len(body), "line")))}
	}
	out := []string{t.Reasoning.Render(label)}
	for _, l := range body {
		out = append(out, t.Reasoning.Render("  "+l))
	}
	return out
}

func divider(t *themes.Theme, text string, w int) string {
	label := " " + oneLine(text) + " "
	if textWidth(label) > w-4 {
		label = ansi.Truncate(label, max(w-4, 1), "…")
	}
	side := max(w-textWidth(label), 2)
	left := side / 2
	return t.Divider.Render(strings.Repeat("─", left) + label + strings.Repeat("─", side-left))
}

// wrapLines word-wraps text to width and hard-wraps words that are longer.
func wrapLines(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	s = strings.ReplaceAll(s, "\t", "    ")
	return strings.Split(ansi.Hardwrap(ansi.Wordwrap(s, width, ""), width, true), "\n")
}

// wrapHanging wraps like wrapLines, but a line's continuation keeps the
// line's indentation and steps past a leading list mark ("✗ ", "✓ ", "• ",
// "- "), so wrapped lists (the first-run screen, long notices) stay
// readable.
func wrapHanging(s string, width int) []string {
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(s, "\t", "    "), "\n") {
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		for _, mark := range []string{"✗ ", "✓ ", "• ", "- "} {
			if strings.HasPrefix(body, mark) {
				indent += textWidth(mark)
				break
			}
		}
		if indent > width/2 || textWidth(line) <= width {
			out = append(out, wrapLines(line, width)...)
			continue
		}
		first := wrapLines(line, width)[0]
		if !strings.HasPrefix(line, first) {
			out = append(out, wrapLines(line, width)...)
			continue
		}
		// Re-wrap what follows the first line in the narrower column.
		rest := strings.TrimSpace(line[len(first):])
		out = append(out, first)
		for _, l := range wrapLines(rest, width-indent) {
			out = append(out, strings.Repeat(" ", indent)+l)
		}
	}
	return out
}

// render draws the card: a header with status, tool and arguments, and
// the output preview in a gutter.
func (c *toolCard) render(rc *renderCtx) []string {
	t := rc.theme
	w := rc.width
	var icon string
	st := t.OK
	switch c.status {
	case cardRunning:
		icon, st = rc.spinner, t.Accent
	case cardPending:
		icon, st = "?", t.Accent
	case cardOK:
		icon = "✓"
	case cardDone:
		icon, st = "•", t.Muted
	case cardInterrupted:
		icon, st = "⊘", t.Warn
	default:
		icon, st = "✗", t.Error
	}
	head := st.Render(icon) + " " + t.Accent.Render(oneLine(c.tool))
	meta := ""
	switch {
	case c.status == cardRunning && !c.started.IsZero():
		meta = fmtDuration(rc.now.Sub(c.started))
	case c.duration > 0:
		meta = fmtDuration(c.duration)
	}
	if c.exitCode != nil {
		meta = strings.TrimSpace(fmt.Sprintf("exit %d  %s", *c.exitCode, meta))
	}
	if stat := diffStat(c.files); stat != "" {
		meta = strings.TrimSpace(stat + "  " + meta)
	}
	room := w - textWidth(head) - textWidth(meta) - 3
	if c.summary != "" && room > 3 {
		head += " " + t.Text.Render(ansi.Truncate(oneLine(c.summary), room, "…"))
	}
	if meta != "" {
		pad := max(w-textWidth(head)-textWidth(meta), 1)
		head += strings.Repeat(" ", pad) + t.Muted.Render(meta)
	}
	out := []string{head}
	gutter := t.Muted.Render("│ ")
	if c.child != nil {
		out = append(out, c.child.lines(rc)...)
	}
	if c.decision != "" {
		st := t.Warn
		if c.allowed {
			st = t.OK
		}
		for _, l := range wrapLines(sanitize(c.decision), max(w-2, 1)) {
			out = append(out, gutter+st.Render(l))
		}
	}
	for _, f := range c.files {
		line := fmt.Sprintf("%s %s", f.Operation, f.Path)
		stat := t.Added.Render(fmt.Sprintf("+%d", f.Added)) + " " + t.Removed.Render(fmt.Sprintf("-%d", f.Removed))
		out = append(out, gutter+ansi.Truncate(oneLine(strings.TrimSpace(line)), w-16, "…")+"  "+stat)
	}
	if c.outcome != "" {
		st := t.Warn
		if c.applied {
			st = t.OK
		}
		lines := wrapLines(sanitize(c.outcome), max(w-2, 1))
		if len(lines) > previewLines && !rc.expand {
			lines = append(lines[:previewLines], "…")
		}
		for _, l := range lines {
			out = append(out, gutter+st.Render(l))
		}
	}
	body := strings.TrimRight(sanitize(c.output.String()), "\n")
	if body == "" && c.progress != "" {
		body = sanitize(c.progress)
	}
	if body != "" {
		lines := strings.Split(body, "\n")
		limit := previewLines
		if rc.expand {
			limit = maxExpandedLines
		}
		hidden := 0
		if len(lines) > limit {
			hidden = len(lines) - limit
			lines = lines[:limit]
		}
		for _, l := range lines {
			l = strings.ReplaceAll(l, "\t", "    ")
			out = append(out, gutter+t.Text.Render(ansi.Truncate(l, max(w-2, 1), "…")))
		}
		if hidden > 0 {
			hint := "ctrl+o to expand"
			if rc.expand {
				hint = "see the store for the rest"
			}
			out = append(out, gutter+t.Muted.Render(fmt.Sprintf("… %d more lines (%s)", hidden, hint)))
		}
	}
	return out
}

// diffStat sums the added and removed lines of changed files.
func diffStat(files []engine.FileChange) string {
	if len(files) == 0 {
		return ""
	}
	a, r := 0, 0
	for _, f := range files {
		a += f.Added
		r += f.Removed
	}
	return fmt.Sprintf("%d file%s +%d -%d", len(files), map[bool]string{true: "", false: "s"}[len(files) == 1], a, r)
}

// countDiff counts added and removed lines of a unified diff.
func countDiff(text string) (added, removed int) {
	for _, f := range diff.Parse(text) {
		a, r := f.Stat()
		added += a
		removed += r
	}
	return added, removed
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

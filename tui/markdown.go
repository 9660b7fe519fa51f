package tui

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/patch"
)

// frameInterval is the shortest time between two re-renders of a streaming
// message: the terminal is repainted at most at 60 frames a second, so
// rendering more often would be work nobody sees.
const frameInterval = time.Second / 60

// mdRenderer renders markdown with one glamour style. It keeps one glamour
// renderer for the current width and makes a new one when the width
// changes (glamour fixes the wrap width at construction).
type mdRenderer struct {
	style gansi.StyleConfig
	width int
	tr    *glamour.TermRenderer
	// lead is glamour's output for chunkLead alone at width: the prefix
	// that renderChunk cuts off.
	lead string
}

func newMDRenderer(style gansi.StyleConfig) *mdRenderer { return &mdRenderer{style: style} }

// chunkLead is the paragraph renderChunk puts before a chunk so that the
// chunk's first block renders as it does after other blocks. One
// character never wraps, at any width.
const chunkLead = "S"

// render returns the rendered lines of src at width, without the blank
// lines at either end. It never fails: text glamour cannot render is
// shown wrapped as it is.
func (r *mdRenderer) render(src string, width int) []string {
	return trimBlankLines(r.renderChunk(src, width))
}

// renderChunk returns the lines src adds when it follows other blocks of
// a document: the blank line(s) glamour puts before its first block, then
// its blocks, blank-looking ones included (a code span of spaces, an empty
// heading or quote), and nothing trimmed at either end. The lines of
// consecutive chunks, joined as they are, are the lines of the whole
// document (see mdDoc); only the document's own ends are trimmed.
//
// Glamour renders a top-level block the same wherever it is, except that
// a paragraph or a heading that comes first gets no blank line before it.
// So the chunk is rendered after a one-character paragraph, and glamour's
// output for that paragraph alone is cut off the front.
func (r *mdRenderer) renderChunk(src string, width int) []string {
	if width < 1 {
		width = 1
	}
	if r.tr == nil || r.width != width {
		tr, err := glamour.NewTermRenderer(glamour.WithStyles(r.style), glamour.WithWordWrap(width))
		if err != nil {
			return chunkFallback(src, width)
		}
		lead, err := tr.Render(chunkLead)
		if err != nil {
			return chunkFallback(src, width)
		}
		r.tr, r.width, r.lead = tr, width, lead
	}
	// Glamour drops tabs inside code blocks; indentation must survive.
	parts := splitMetadata(strings.ReplaceAll(trimFenceTails(fenceEditBlocks(src)), "\t", "    "))
	var all []string
	for i, p := range parts {
		lines, err := r.follow(p.text)
		if err != nil {
			return chunkFallback(src, width)
		}
		// A metadata line right under the text before it keeps no blank
		// line between them. A part after a blank line is joined as a
		// chunk is. The first part of a chunk always follows a blank line:
		// mdDoc cuts only after one.
		if i > 0 && !p.gap {
			all = trimTrailingBlank(all)
			lines = trimBlankLines(lines)
		}
		all = append(all, lines...)
	}
	return finishLines(all, width)
}

// follow renders text after the chunk lead and returns the lines of what
// follows the lead's own output.
func (r *mdRenderer) follow(text string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	out, err := r.tr.Render(chunkLead + "\n\n" + text)
	if err != nil {
		return nil, fmt.Errorf("render markdown: %w", err)
	}
	rest, ok := strings.CutPrefix(out, r.lead)
	if !ok {
		// The lead did not render as it does alone: the text changed it.
		// Render the text alone, with the blank line a chunk starts with.
		out, err = r.tr.Render(text)
		if err != nil {
			return nil, fmt.Errorf("render markdown: %w", err)
		}
		return append([]string{""}, trimBlankLines(strings.Split(out, "\n"))...), nil
	}
	lines := strings.Split(rest, "\n")
	// What follows the last newline is no line of its own: nothing, or
	// padding (a code block's margin) that the next chunk's first line,
	// the blank line before its first block, would end.
	if isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines, nil
}

// chunkFallback is a chunk glamour cannot render: its text wrapped as it
// is, after the blank line a chunk starts with.
func chunkFallback(src string, width int) []string {
	return append([]string{""}, plainLines(src, width)...)
}

// finishLines trims glamour's padding off rendered lines and cuts them to
// width. It keeps blank lines: only the whole document's ends are trimmed.
func finishLines(lines []string, width int) []string {
	for i, l := range lines {
		l = trimStyledRight(l)
		if textWidth(l) > width {
			l = ansi.Truncate(l, width, "")
		}
		// A fresh string: the line must not keep glamour's whole output
		// alive through a substring.
		lines[i] = strings.Clone(l)
	}
	return lines
}

// trimStyledRight drops the padding glamour adds to every line: trailing
// blanks and the style sequences around them. It keeps the line's look
// and halves the memory a long transcript holds.
//
// It walks back from the end over blanks and over SGR sequences (ESC '['
// then digits, ';' and ':' only, then 'm') and stops at anything else. A
// padded line ends in hundreds of such sequences (each padding column is
// a styled blank), so each step only looks at the bytes it drops.
func trimStyledRight(l string) string {
	end := len(l)
	styled := false
	for end > 0 {
		switch l[end-1] {
		case ' ':
			end--
		case 'm':
			i := end - 2
			for i >= 0 && isSGRParam(l[i]) {
				i--
			}
			if i < 1 || l[i] != '[' || l[i-1] != '\x1b' {
				return l[:end] + reset(styled)
			}
			end, styled = i-1, true
		default:
			return l[:end] + reset(styled)
		}
	}
	return ""
}

// isSGRParam reports whether c may stand between an SGR sequence's "\x1b["
// and its 'm'.
func isSGRParam(c byte) bool { return c >= '0' && c <= '9' || c == ';' || c == ':' }

func reset(styled bool) string {
	if styled {
		return "\x1b[m"
	}
	return ""
}

// plainLines wraps text without markdown.
func plainLines(src string, width int) []string {
	return strings.Split(ansi.Hardwrap(ansi.Wordwrap(src, width, ""), width, true), "\n")
}

func trimBlankLines(lines []string) []string {
	start, end := 0, len(lines)
	for start < end && isBlank(lines[start]) {
		start++
	}
	for end > start && isBlank(lines[end-1]) {
		end--
	}
	return lines[start:end]
}

func trimTrailingBlank(lines []string) []string {
	end := len(lines)
	for end > 0 && isBlank(lines[end-1]) {
		end--
	}
	return lines[:end]
}

func isBlank(l string) bool { return strings.TrimSpace(ansi.Strip(l)) == "" }

// mdDoc is an assistant message, possibly still streaming. Its source is
// split at stable block boundaries (a blank line outside a code fence
// followed by an unindented line). Each stable chunk is rendered with
// glamour once per width and cached. While the message streams, the tail
// after the last boundary (the block being written) is shown wrapped as
// plain text, re-wrapped at most once per frame; glamour renders it once,
// when the message is complete. Rendering a message streamed in any number
// of deltas therefore costs about one glamour render of the whole message,
// instead of growing with the number of deltas times the length.
type mdDoc struct {
	src  strings.Builder
	cuts []int // end offsets of the stable chunks, increasing
	done bool  // the message is complete: the tail is rendered as markdown

	// Boundary scanner state: the next unscanned byte, whether it is inside
	// a fenced code block (and the fence that closes it), and a boundary
	// seen but not yet confirmed by the next line.
	scanPos    int
	inFence    bool
	fence      string
	pendingCut int
	// inEdit is set inside a search/replace block, inEnvelope inside a
	// "*** Begin Patch" envelope, and hunkOld/hunkNew count the lines
	// left in a unified diff's hunk (see fenceEditBlocks): none of them
	// is ever cut, so that its lines are shown as one code block.
	inEdit, inEnvelope bool
	hunkOld, hunkNew   int
	// htmlEnd is the text that ends the HTML block the scanner is in
	// ("-->" or a closing tag): such a block may hold blank lines. lastJoin
	// records whether the last non-blank line ends a block that glamour
	// separates from the next one by exactly one blank line, the only
	// separation a cut reproduces (see joinsCleanly).
	htmlEnd  string
	lastJoin bool

	// Render cache for one width. all holds the rendered chunks (the first
	// stableLen lines, append-only) followed by the rendered tail, which is
	// replaced in place at each refresh, so a frame never copies the lines
	// of a long message.
	width      int
	all        []string
	stableLen  int
	chunksDone int  // chunks rendered into all[:stableLen]
	tailLen    int  // len(src) when the tail was rendered
	tailDone   bool // the tail was rendered as markdown
	rendered   bool
	lastRender time.Time
	// ph is the plain-text stand-in shown while a cold message renders in
	// the background (see renderCtx.deferCold), for width phWidth.
	ph      []string
	phWidth int
}

// Append adds streamed text and finds new stable boundaries.
func (d *mdDoc) Append(s string) {
	d.src.WriteString(s)
	d.scan()
}

// Finish marks the message complete. A message that defines a link
// reference ("[id]: url") is then rendered whole: a reference may be
// used in a chunk before the one that defines it, and glamour resolves
// it only when both are in one render.
func (d *mdDoc) Finish() {
	d.done = true
	if len(d.cuts) > 0 && refDefinition().MatchString(d.src.String()) {
		d.cuts = nil
		d.all, d.stableLen, d.chunksDone, d.rendered = d.all[:0], 0, 0, false
	}
}

// refDefinition matches a line that defines a link reference.
// refDefinition is compiled on first use, so that every kz process does not pay
// for it at start.
var refDefinition = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:`) })

// Text returns the source so far.
func (d *mdDoc) Text() string { return d.src.String() }

// Reset replaces the source (a final message that differs from its deltas).
func (d *mdDoc) Reset(s string) {
	done := d.done
	*d = mdDoc{done: done}
	d.Append(s)
}

func (d *mdDoc) lastCut() int {
	if len(d.cuts) == 0 {
		return 0
	}
	return d.cuts[len(d.cuts)-1]
}

// scan looks at each complete line not yet scanned.
func (d *mdDoc) scan() {
	src := d.src.String()
	for {
		nl := strings.IndexByte(src[d.scanPos:], '\n')
		if nl < 0 {
			return
		}
		line := src[d.scanPos : d.scanPos+nl]
		end := d.scanPos + nl + 1
		d.scanPos = end
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if strings.TrimSpace(line) != "" {
			d.lastJoin = joinsCleanly(line)
		}
		switch {
		case d.inFence:
			if closesFence(trimmed, indent, d.fence) {
				d.inFence = false
			}
		case d.htmlEnd != "":
			if strings.Contains(strings.ToLower(line), d.htmlEnd) {
				d.htmlEnd = ""
			}
		case d.inEdit:
			d.inEdit = !patch.IsReplaceMarker(strings.TrimRight(line, "\r"))
		case d.inEnvelope:
			d.inEnvelope = strings.TrimSpace(line) != "*** End Patch"
		case d.hunkOld > 0 || d.hunkNew > 0:
			d.countHunkLine(strings.TrimRight(line, "\r"))
		case strings.TrimSpace(line) == "":
			if end-1 > d.lastCut() && d.lastJoin {
				d.pendingCut = end
			}
		default:
			if d.pendingCut > 0 {
				// A list item after a blank line may continue a loose
				// list, which glamour renders as one: no cut before it.
				if indent == 0 && !strings.HasPrefix(line, "\t") && !listItem(line) && joinsCleanly(line) {
					d.cuts = append(d.cuts, d.pendingCut)
				}
				d.pendingCut = 0
			}
			if indent <= 3 {
				d.htmlEnd = htmlBlockEnd(trimmed)
			}
			if patch.IsSearchMarker(strings.TrimRight(line, "\r")) {
				d.inEdit = true
			} else if strings.TrimSpace(line) == "*** Begin Patch" {
				d.inEnvelope = true
			} else if strings.HasPrefix(line, "@@ -") {
				d.hunkOld, d.hunkNew, _ = hunkCounts(strings.TrimRight(line, "\r"))
			} else if f := fenceOpener(trimmed); f != "" && indent <= 3 {
				d.inFence, d.fence = true, f
			}
		}
	}
}

// joinsCleanly reports whether a line may end a chunk or begin the next
// one. Glamour puts one blank line between most blocks, and a cut puts
// one between chunks; a few blocks are joined otherwise: HTML blocks
// (stripped, with no blank line around them), definitions (": text",
// followed by two), and a code block inside a list item or a quote
// (followed by two, or by the quote's own bar).
func joinsCleanly(line string) bool {
	body := strings.TrimLeft(line, " \t")
	inner := strings.TrimLeft(body, "> \t")
	nested := len(body) != len(line) || len(inner) != len(body)
	switch {
	case strings.HasPrefix(inner, "<"):
		return false
	case strings.HasPrefix(inner, ":") && (len(inner) == 1 || inner[1] == ' ' || inner[1] == '\t'):
		return false
	case nested && fenceOpener(inner) != "":
		return false
	}
	return true
}

// htmlBlockEnd returns what ends an HTML block that starts on this line
// and may hold blank lines (CommonMark's kinds 1 to 5: comments, <pre>,
// <script>, <style>, <textarea>, processing instructions, declarations
// and CDATA), or "" when the line starts none or ends it itself.
func htmlBlockEnd(trimmed string) string {
	low := strings.ToLower(trimmed)
	var end string
	switch {
	case strings.HasPrefix(low, "<!--"):
		end = "-->"
	case strings.HasPrefix(low, "<?"):
		end = "?>"
	case strings.HasPrefix(low, "<![cdata["):
		end = "]]>"
	case strings.HasPrefix(low, "<!"):
		end = ">"
	default:
		for _, tag := range []string{"pre", "script", "style", "textarea"} {
			if rest, ok := strings.CutPrefix(low, "<"+tag); ok && (rest == "" || rest[0] == ' ' || rest[0] == '>' || rest[0] == '\t') {
				end = "</" + tag + ">"
				break
			}
		}
	}
	if end == "" || strings.Contains(low[1:], end) {
		return ""
	}
	return end
}

// countHunkLine counts one line of a hunk the scanner is in; a new hunk
// header starts the count again.
func (d *mdDoc) countHunkLine(l string) {
	switch {
	case strings.HasPrefix(l, "@@ -"):
		d.hunkOld, d.hunkNew, _ = hunkCounts(l)
	case l == "" || l[0] == ' ':
		d.hunkOld, d.hunkNew = d.hunkOld-1, d.hunkNew-1
	case l[0] == '-':
		d.hunkOld--
	case l[0] == '+':
		d.hunkNew--
	case l[0] == '\\':
	default:
		// Not a hunk's line: the hunk was shorter than its header said.
		d.hunkOld, d.hunkNew = 0, 0
	}
}

// listItem reports whether an unindented line starts a list item: "-",
// "*" or "+", or a number and "." or ")", then a blank or the line's end.
func listItem(line string) bool {
	line = strings.TrimRight(line, "\r")
	i := 0
	switch {
	case line == "":
		return false
	case line[0] == '-' || line[0] == '*' || line[0] == '+':
		i = 1
	default:
		for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i == 0 || i == len(line) || (line[i] != '.' && line[i] != ')') {
			return false
		}
		i++
	}
	return i == len(line) || line[i] == ' ' || line[i] == '\t'
}

// trimFenceTails drops the blank lines just before the end of each fenced
// code block. Glamour shows them as empty lines of the block, but a block
// at the end of a document loses them with the document's own trailing
// blank lines, so a message rendered in chunks (see mdDoc) and the same
// message rendered whole would differ. Without them both are the same.
func trimFenceTails(src string) string {
	if !strings.Contains(src, "\n\n") {
		return src
	}
	lines := strings.SplitAfter(src, "\n")
	out := make([]string, 0, len(lines))
	fence, blanks := "", 0
	for _, l := range lines {
		line := strings.TrimRight(l, "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case fence == "":
			if f := fenceOpener(trimmed); f != "" && indent <= 3 {
				fence, blanks = f, 0
			}
		case closesFence(trimmed, indent, fence):
			out = out[:len(out)-blanks]
			fence = ""
		case strings.TrimSpace(line) == "":
			blanks++
		default:
			blanks = 0
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// closesFence reports whether a line (trimmed of its indent) closes a code
// block opened by fence.
func closesFence(trimmed string, indent int, fence string) bool {
	return indent <= 3 && strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == ""
}

// fenceOpener returns the fence (``` or ~~~, at least three) that opens a
// code block on this line, or "".
func fenceOpener(l string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(l) && l[n] == c {
			n++
		}
		if n >= 3 {
			return l[:n]
		}
	}
	return ""
}

// cold reports a complete message with no render at width yet: what a
// background prerender is for.
func (d *mdDoc) cold(width int) bool { return d.done && !(d.rendered && d.width == width) }

// stale reports whether the rendered lines lag behind the source.
func (d *mdDoc) stale() bool {
	return !d.rendered || d.tailLen != d.src.Len() || d.chunksDone != len(d.cuts) || d.tailDone != d.done
}

// Lines returns the rendered message at width. A stale render is refreshed
// when force is set, when the message is complete, or when a frame
// interval has passed since the last refresh; otherwise the previous
// render is returned and stale() stays true, so the caller schedules a
// frame to catch up. The result is only valid until the next call.
func (d *mdDoc) Lines(r *mdRenderer, width int, now time.Time, force, deferCold bool) []string {
	if deferCold && d.cold(width) {
		if d.ph == nil || d.phWidth != width {
			d.ph, d.phWidth = plainLines(strings.TrimRight(d.src.String(), "\n"), width), width
		}
		return d.ph
	}
	if width != d.width {
		d.width = width
		d.all, d.stableLen, d.chunksDone, d.rendered = d.all[:0], 0, 0, false
		force = true
	}
	if d.stale() && (force || d.done || now.Sub(d.lastRender) >= frameInterval) {
		d.refresh(r, now)
	}
	// The chunks keep the blank lines at their ends (see renderChunk);
	// the message's own ends are trimmed here, as a whole render's are.
	return trimBlankLines(d.all)
}

func (d *mdDoc) refresh(r *mdRenderer, now time.Time) {
	src := d.src.String()
	d.all = appendChunks(d.all[:d.stableLen], r, src, d.cuts, d.chunksDone, d.width)
	d.chunksDone, d.stableLen = len(d.cuts), len(d.all)
	d.all = appendTail(d.all, r, src[d.lastCut():], d.width, d.done)
	d.tailLen, d.tailDone = len(src), d.done
	d.rendered = true
	d.lastRender = now
}

// appendChunks renders the stable chunks from index `from` on and appends
// their lines. Each chunk's lines begin with the blank line(s) glamour
// puts before it, so they are joined as they are.
func appendChunks(all []string, r *mdRenderer, src string, cuts []int, from, width int) []string {
	for i := from; i < len(cuts); i++ {
		start := 0
		if i > 0 {
			start = cuts[i-1]
		}
		all = append(all, r.renderChunk(src[start:cuts[i]], width)...)
	}
	return all
}

// appendTail renders the text after the last stable boundary: as markdown
// once the message is complete, wrapped as plain text while it streams.
func appendTail(all []string, r *mdRenderer, rest string, width int, done bool) []string {
	if strings.TrimSpace(rest) == "" {
		return all
	}
	if done {
		return append(all, r.renderChunk(rest, width)...)
	}
	if len(all) > 0 && !isBlank(all[len(all)-1]) {
		all = append(all, "")
	}
	return append(all, plainLines(strings.TrimRight(rest, "\n"), width)...)
}

// prerendered is a complete message rendered away from the UI goroutine.
type prerendered struct {
	doc       *mdDoc
	width     int
	srcLen    int
	all       []string
	stableLen int
}

// prerender returns a function that renders a complete, not yet rendered
// message at width on another goroutine. It captures only immutable
// values (the source string, a copy of the cuts) and the shared background
// renderer, so it can run
// while the UI goroutine keeps using d. It returns nil when d needs no
// rendering.
func (d *mdDoc) prerender(bg *bgRenderer, width int) func() prerendered {
	if !d.done || (d.rendered && d.width == width) {
		return nil
	}
	src, cuts := d.src.String(), append([]int(nil), d.cuts...)
	return func() prerendered {
		all, stable := bg.renderDoc(src, cuts, width)
		return prerendered{doc: d, width: width, srcLen: len(src), all: all, stableLen: stable}
	}
}

// install adopts a prerendered result if it still matches the message.
func (d *mdDoc) install(p prerendered) bool {
	if !d.done || p.srcLen != d.src.Len() || (d.rendered && d.width == p.width) {
		return false
	}
	d.width, d.all, d.stableLen = p.width, p.all, p.stableLen
	d.chunksDone, d.tailLen, d.tailDone, d.rendered = len(d.cuts), p.srcLen, true, true
	d.ph = nil
	return true
}

func lastOf(cuts []int) int {
	if len(cuts) == 0 {
		return 0
	}
	return cuts[len(cuts)-1]
}

package tui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/themes"
)

// diffLayout is how the review shows lines.
type diffLayout string

const (
	layoutUnified diffLayout = "unified"
	layoutSplit   diffLayout = "split"
)

// splitMinWidth is the narrowest screen that gets side-by-side columns;
// below it each side would be too narrow to read, so split falls back to
// unified.
const splitMinWidth = 100

// rowKind says what a row of the diff view shows.
type rowKind uint8

const (
	rowFile   rowKind = iota // the file's header
	rowHunk                  // an @@ header
	rowLine                  // a line (unified) or a pair of lines (split)
	rowBinary                // a binary file's placeholder
	rowEmpty                 // a file without hunks (a pure rename or mode change)
)

// diffRow is one logical row. Rows are small and built for the whole
// change at once (a cheap O(lines) pass); their rendering, which is the
// costly part (highlighting, intra-line diffs, wrapping), happens only for
// rows on screen and is cached.
type diffRow struct {
	kind        rowKind
	file, hunk  int32
	left, right int32 // line indexes in the hunk; -1 when a side is empty. Unified rows use left.
}

// diffView renders a change lazily, one screenful at a time.
type diffView struct {
	files []diffFile
	pal   diffPalette

	layout diffLayout // what the person asked for
	// Built for (built, width): rows of the effective layout, and the row
	// of each file header and hunk header.
	built    diffLayout
	width    int
	rows     []diffRow
	fileRows []int
	hunkRows []int
	// partner[f][h][l] is the line paired with l for split view and
	// intra-line emphasis: the i-th removed line of a run with the i-th
	// added line that follows it, or -1.
	partner [][][]int32
	// nums[f][h][l] are line l's numbers in the old and the new file.
	nums [][][]lineNums

	lexers   map[int]chroma.Lexer
	rendered map[int][]string // row → its visual lines at width

	// top and sub are the first row on screen and how many of its visual
	// lines are scrolled past (a long wrapped line can be taller than the
	// screen, and none of it may be unreachable).
	top, sub int
	// end is the index after the last row the last view showed (some of).
	end int
	// hunkLabel gives a hunk header its state (rejected, …); set by the
	// review. Hunk headers are not cached, so the label can change.
	hunkLabel func(file, hunk int) string
}

func newDiffView(files []diffFile, t *themes.Theme) *diffView {
	v := &diffView{files: files, pal: paletteFor(t), layout: layoutUnified, lexers: map[int]chroma.Lexer{}}
	v.partner = make([][][]int32, len(files))
	v.nums = make([][][]lineNums, len(files))
	for fi := range files {
		v.partner[fi] = make([][]int32, len(files[fi].hunks))
		v.nums[fi] = make([][]lineNums, len(files[fi].hunks))
		for hi, h := range files[fi].hunks {
			v.partner[fi][hi] = pairLines(h.Lines)
			v.nums[fi][hi] = numberLines(h)
		}
	}
	return v
}

// lineNums are a line's numbers in the old and the new file; 0 where the
// line is not on that side.
type lineNums struct{ old, new int32 }

// numberLines numbers a hunk's lines from its header's first lines (a
// header that names line 0 of the old side numbers from 0, shown blank).
func numberLines(h diff.Hunk) []lineNums {
	out := make([]lineNums, len(h.Lines))
	o, n := int32(h.OldStart), int32(max(h.NewStart, 1))
	for i, l := range h.Lines {
		switch l.Op {
		case diff.Add:
			out[i].new = n
			n++
		case diff.Delete:
			out[i].old = o
			o++
		default:
			out[i] = lineNums{o, n}
			o++
			n++
		}
	}
	return out
}

// pairLines pairs each run of removed lines with the run of added lines
// right after it.
func pairLines(ls []diff.Line) []int32 {
	p := make([]int32, len(ls))
	for i := range p {
		p[i] = -1
	}
	for i := 0; i < len(ls); {
		if ls[i].Op != diff.Delete {
			i++
			continue
		}
		rs := i
		for i < len(ls) && ls[i].Op == diff.Delete {
			i++
		}
		as := i
		for i < len(ls) && ls[i].Op == diff.Add {
			i++
		}
		for k := 0; rs+k < as && as+k < i; k++ {
			p[rs+k], p[as+k] = int32(as+k), int32(rs+k)
		}
	}
	return p
}

// effective is the layout used at width w.
func (v *diffView) effective(w int) diffLayout {
	if v.layout == layoutSplit && w >= splitMinWidth {
		return layoutSplit
	}
	return layoutUnified
}

// ensure builds the rows for width w, keeping the position on the same
// file and hunk when the layout changes.
func (v *diffView) ensure(w int) {
	lay := v.effective(w)
	if v.rows != nil && v.built == lay && v.width == w {
		return
	}
	var keep diffRow
	hadRows := v.rows != nil
	if hadRows && v.top < len(v.rows) {
		keep = v.rows[v.top]
	}
	if v.built != lay || v.rows == nil {
		v.buildRows(lay)
	}
	v.width, v.rendered = w, map[int][]string{}
	if hadRows {
		v.top, v.sub = v.findRow(keep), 0
	}
}

func (v *diffView) buildRows(lay diffLayout) {
	v.built = lay
	v.rows, v.fileRows, v.hunkRows = v.rows[:0], v.fileRows[:0], v.hunkRows[:0]
	for fi, f := range v.files {
		v.fileRows = append(v.fileRows, len(v.rows))
		v.rows = append(v.rows, diffRow{kind: rowFile, file: int32(fi), left: -1, right: -1})
		switch {
		case f.binary:
			v.rows = append(v.rows, diffRow{kind: rowBinary, file: int32(fi), left: -1, right: -1})
			continue
		case len(f.hunks) == 0:
			v.rows = append(v.rows, diffRow{kind: rowEmpty, file: int32(fi), left: -1, right: -1})
			continue
		}
		for hi, h := range f.hunks {
			v.hunkRows = append(v.hunkRows, len(v.rows))
			v.rows = append(v.rows, diffRow{kind: rowHunk, file: int32(fi), hunk: int32(hi), left: -1, right: -1})
			part := v.partner[fi][hi]
			for li := range h.Lines {
				r := diffRow{kind: rowLine, file: int32(fi), hunk: int32(hi), left: int32(li), right: -1}
				if lay == layoutSplit {
					switch h.Lines[li].Op {
					case diff.Context:
						r.right = int32(li)
					case diff.Delete:
						r.right = part[li]
					case diff.Add:
						if part[li] >= 0 {
							continue // shown beside its removed partner
						}
						r.left, r.right = -1, int32(li)
					}
				}
				v.rows = append(v.rows, r)
			}
		}
	}
}

// findRow is the row of the new layout closest to r of the old one.
func (v *diffView) findRow(r diffRow) int {
	for i, x := range v.rows {
		if x.file == r.file && x.hunk == r.hunk && x.kind == r.kind &&
			(r.kind != rowLine || x.left == r.left || x.right == r.left || (r.left < 0 && x.right == r.right)) {
			return i
		}
	}
	if int(r.file) < len(v.fileRows) {
		return v.fileRows[r.file]
	}
	return 0
}

// rowLines renders one row, cached except for hunk headers.
func (v *diffView) rowLines(i int) []string {
	r := v.rows[i]
	if r.kind == rowHunk {
		return []string{v.renderHunkHeader(r)}
	}
	if ls, ok := v.rendered[i]; ok {
		return ls
	}
	var ls []string
	f := &v.files[r.file]
	switch r.kind {
	case rowFile:
		ls = v.renderFileHeader(f)
	case rowBinary:
		ls = []string{v.pal.muted("  binary file: contents not shown")}
	case rowEmpty:
		ls = []string{v.pal.muted("  no content change")}
	case rowLine:
		if v.built == layoutSplit {
			ls = v.renderSplit(r)
		} else {
			ls = v.renderUnified(r)
		}
	}
	v.rendered[i] = ls
	return ls
}

// view returns exactly h lines (padded with blanks) starting at the
// scroll position.
func (v *diffView) view(w, h int) []string {
	v.ensure(w)
	v.clamp()
	out := make([]string, 0, h)
	v.end = v.top
	for i, skip := v.top, v.sub; i < len(v.rows) && len(out) < h; i, skip = i+1, 0 {
		ls := v.rowLines(i)
		for _, l := range ls[min(skip, len(ls)):] {
			if len(out) == h {
				break
			}
			out = append(out, l)
		}
		v.end = i + 1
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// fit is the height the diff needs at width w, at most h. It counts
// lines only up to h, so a long diff costs no more than one screen.
func (v *diffView) fit(w, h int) int {
	v.ensure(w)
	n := 0
	for i := range v.rows {
		if n += len(v.rowLines(i)); n >= h {
			return h
		}
	}
	return max(n, 1)
}

// scroll moves by n visual lines on a screen h lines high. Scrolling
// down stops once the last line is at the bottom; jumps to a file or hunk
// may go further, so that what was asked for is at the top.
func (v *diffView) scroll(n, h int) {
	for ; n > 0 && v.below(h) > 0; n-- {
		if v.sub+1 < len(v.rowLines(v.top)) {
			v.sub++
		} else if v.top+1 < len(v.rows) {
			v.top, v.sub = v.top+1, 0
		}
	}
	for ; n < 0; n++ {
		switch {
		case v.sub > 0:
			v.sub--
		case v.top > 0:
			v.top--
			v.sub = len(v.rowLines(v.top)) - 1
		}
	}
}

// below counts the visual lines under a screen of h lines from the
// current position, stopping at one: it stays lazy.
func (v *diffView) below(h int) int {
	if v.top >= len(v.rows) {
		return 0
	}
	n := len(v.rowLines(v.top)) - v.sub
	for i := v.top + 1; i < len(v.rows) && n <= h; i++ {
		n += len(v.rowLines(i))
	}
	return max(n-h, 0)
}

// settle scrolls back up while the diff's end leaves blank lines at the
// bottom of a screen h lines high, so a view that grew (the window was
// made taller) never hides lines above while showing nothing below.
func (v *diffView) settle(h int) {
	for v.top > 0 || v.sub > 0 {
		n := len(v.rowLines(v.top)) - v.sub
		for i := v.top + 1; i < len(v.rows) && n < h; i++ {
			n += len(v.rowLines(i))
		}
		if n >= h {
			return
		}
		v.scroll(-(h - n), h)
	}
}

// clamp keeps the position inside the rows.
func (v *diffView) clamp() {
	if len(v.rows) == 0 {
		v.top, v.sub = 0, 0
		return
	}
	v.top = min(max(v.top, 0), len(v.rows)-1)
	v.sub = min(max(v.sub, 0), len(v.rowLines(v.top))-1)
}

// current is the row at the top of the screen.
func (v *diffView) current() diffRow {
	if v.top < len(v.rows) {
		return v.rows[v.top]
	}
	return diffRow{}
}

// jumpHunk moves to the next (dir 1) or previous (dir -1) hunk header and
// returns its index among all hunks, or -1 when there is none that way.
//
// On a file header the file's first hunk counts as the current one (hunkAt
// says so, and it is on screen right below the header): the next hunk from
// there is the second, so that the first ] of a fresh review moves.
func (v *diffView) jumpHunk(dir int) int {
	from := v.top
	if f, h := v.hunkAt(); dir > 0 && h == 0 && v.current().kind == rowFile && f < len(v.fileRows) {
		from = v.fileRows[f] + 1
	}
	for k := range v.hunkRows {
		idx := k
		if dir < 0 {
			idx = len(v.hunkRows) - 1 - k
		}
		r := v.hunkRows[idx]
		if (dir > 0 && r > from) || (dir < 0 && (r < v.top || (r == v.top && v.sub > 0))) {
			v.top, v.sub = r, 0
			return idx
		}
	}
	return -1
}

// jumpFile shows file fi from its header.
func (v *diffView) jumpFile(fi int) {
	if fi >= 0 && fi < len(v.fileRows) {
		v.top, v.sub = v.fileRows[fi], 0
	}
}

// hunkAt is the index among all hunks of the hunk the top row belongs to,
// or -1 (a file header or a binary file).
func (v *diffView) hunkAt() (file, hunk int) {
	r := v.current()
	if r.kind == rowHunk || r.kind == rowLine {
		return int(r.file), int(r.hunk)
	}
	// On a file header: its first hunk, if it has one.
	if r.kind == rowFile && int(r.file) < len(v.files) && len(v.files[r.file].hunks) > 0 {
		return int(r.file), 0
	}
	return int(r.file), -1
}

func (v *diffView) renderFileHeader(f *diffFile) []string {
	p := v.pal
	name := sanitize(f.path)
	if f.oldPath != "" {
		name = sanitize(f.oldPath) + " → " + name
	}
	label := fmt.Sprintf("%s %s ", opLetter(f.op), name)
	stats := fmt.Sprintf("+%d −%d", f.added, f.removed)
	if f.binary {
		stats = "binary"
	}
	head := p.header(label) + p.add(fmt.Sprintf("+%d", f.added)) + " " + p.del(fmt.Sprintf("−%d", f.removed))
	if f.binary {
		head = p.header(label) + p.muted(stats)
	}
	return []string{ansi.Truncate(head, v.width, "…"), p.muted(strings.Repeat("─", max(v.width, 1)))}
}

func (v *diffView) renderHunkHeader(r diffRow) string {
	h := &v.files[r.file].hunks[r.hunk]
	text := h.Header
	if text == "" {
		text = "@@"
	}
	text = oneLine(text)
	if v.hunkLabel != nil {
		if l := v.hunkLabel(int(r.file), int(r.hunk)); l != "" {
			text = l + " " + text
		}
	}
	return v.pal.hunk(ansi.Truncate(text, v.width, "…"))
}

// numWidth is the gutter width of a file's line numbers.
func (v *diffView) numWidth(f *diffFile) int {
	m := 0
	for _, h := range f.hunks {
		m = max(m, h.OldStart+len(h.Lines), h.NewStart+len(h.Lines))
	}
	return max(len(strconv.Itoa(m)), 3)
}

func (v *diffView) renderUnified(r diffRow) []string {
	f := &v.files[r.file]
	n := v.nums[r.file][r.hunk][r.left]
	nw := v.numWidth(f)
	gutter := v.pal.gutter(num(n.old, nw) + " " + num(n.new, nw) + " ")
	blank := strings.Repeat(" ", 2*nw+2)
	content := v.lineCells(int(r.file), int(r.hunk), int(r.left), max(v.width-2*nw-2, 8))
	out := make([]string, len(content))
	for i, c := range content {
		if i == 0 {
			out[i] = gutter + c
		} else {
			out[i] = blank + c
		}
	}
	return out
}

func (v *diffView) renderSplit(r diffRow) []string {
	f := &v.files[r.file]
	nw := v.numWidth(f)
	half := (v.width - 1) / 2
	side := func(li int32, left bool) []string {
		if li < 0 {
			return []string{strings.Repeat(" ", half)}
		}
		n := v.nums[r.file][r.hunk][li].new
		if left {
			n = v.nums[r.file][r.hunk][li].old
		}
		cells := v.lineCells(int(r.file), int(r.hunk), int(li), max(half-nw-1, 4))
		out := make([]string, len(cells))
		for i, c := range cells {
			g := strings.Repeat(" ", nw+1)
			if i == 0 {
				g = v.pal.gutter(num(n, nw) + " ")
			}
			out[i] = g + c
		}
		return out
	}
	ls, rs := side(r.left, true), side(r.right, false)
	n := max(len(ls), len(rs))
	out := make([]string, n)
	pad := strings.Repeat(" ", half)
	for i := range n {
		a, b := pad, ""
		if i < len(ls) {
			a = ls[i]
		}
		if i < len(rs) {
			b = rs[i]
		}
		out[i] = a + v.pal.muted("│") + b
	}
	return out
}

func num(n int32, w int) string {
	if n <= 0 {
		return strings.Repeat(" ", w)
	}
	s := strconv.Itoa(int(n))
	return strings.Repeat(" ", max(w-len(s), 0)) + s
}

func opLetter(op string) string {
	switch op {
	case "add", "create":
		return "A"
	case "delete":
		return "D"
	case "rename":
		return "R"
	}
	return "M"
}

// lineCells renders a line's marker and text, highlighted, with its
// changed characters emphasised, wrapped to width (marker included) so
// that no part of an untrusted line is ever cut off.
func (v *diffView) lineCells(fi, hi, li, width int) []string {
	l := v.files[fi].hunks[hi].Lines[li]
	text := l.Content()
	runes := []rune(text)
	fg := v.highlight(fi, text, len(runes))
	emph := v.emphasis(fi, hi, li)
	var bg, emBg string
	switch l.Op {
	case diff.Add:
		bg, emBg = v.pal.addBg, v.pal.addEm
	case diff.Delete:
		bg, emBg = v.pal.delBg, v.pal.delEm
	}
	w := newCellWriter(width, bg, v.pal.noColor)
	w.put(string(rune(l.Op)), v.pal.markerFg(l.Op), bg, l.Op != diff.Context)
	col := 0
	for i, r := range runes {
		b := bg
		em := emph != nil && emph[i]
		if em {
			b = emBg
		}
		switch {
		case r == '\t':
			n := 4 - col%4
			w.put(strings.Repeat(" ", n), "", b, em)
			col += n
			continue
		case needsSanitizing(r) || invisibleNames[r] != "":
			s := sanitize(string(r))
			if invisibleNames[r] != "" {
				s = "⟨" + invisibleNames[r] + "⟩"
			}
			w.put(s, v.pal.escFg, b, true)
			col += ansi.StringWidth(s)
			continue
		}
		w.put(string(r), fg[i], b, em)
		col += ansi.StringWidth(string(r))
	}
	switch l.EOL() {
	case "\r\n":
		w.put("␍", v.pal.mutedFg, bg, false)
	case "":
		w.put("∅", v.pal.mutedFg, bg, false)
	}
	return w.finish()
}

// lexerCache maps a file's extension ("*.go"), or its base name when a
// lexer names such files whole (Makefile, CMakeLists.txt), to its lexer:
// lexers.Match tries every lexer's glob patterns, a millisecond or more,
// and a review opens many files of the same few kinds. Chroma lexers are
// safe for concurrent use once built.
var (
	lexerCache   sync.Map // key → cachedLexer
	wholeNames   []string
	wholeNamesMu sync.Once
)

type cachedLexer struct{ lx chroma.Lexer }

// warmHighlighting reads chroma's lexers, which the forked chroma reads on
// first use, and the whole-name patterns of lexerFor. It uses only
// upstream chroma's API, so kz builds with or without the fork.
func warmHighlighting() { _ = lexerFor("warm.go") }

func lexerFor(path string) chroma.Lexer {
	base := filepath.Base(path)
	wholeNamesMu.Do(func() {
		// Names and Get read the whole registry; its Lexers field may
		// be filled only on first use.
		for _, name := range lexers.Names(false) {
			cfg := lexers.Get(name).Config()
			for _, g := range append(append([]string(nil), cfg.Filenames...), cfg.AliasFilenames...) {
				if !strings.HasPrefix(g, "*.") || strings.ContainsAny(g[2:], "*?[") {
					wholeNames = append(wholeNames, g)
				}
			}
		}
	})
	key := base
	if ext := filepath.Ext(base); ext != "" && ext != base {
		key = "*" + ext
		for _, g := range wholeNames {
			if ok, _ := filepath.Match(g, base); ok {
				key = base
				break
			}
		}
	}
	if c, ok := lexerCache.Load(key); ok {
		return c.(cachedLexer).lx
	}
	lx := lexers.Match(base)
	if lx != nil {
		lx = chroma.Coalesce(lx)
	}
	lexerCache.Store(key, cachedLexer{lx})
	return lx
}

// highlight colours the runes of one line. Each line is tokenised on its
// own, which is what makes lazy rendering possible; a multi-line string or
// comment may be coloured wrongly, which a review can live with.
func (v *diffView) highlight(fi int, text string, n int) []string {
	fg := make([]string, n)
	if v.pal.style == nil || text == "" || n > 4000 {
		return fg
	}
	lx, ok := v.lexers[fi]
	if !ok {
		lx = lexerFor(v.files[fi].path)
		v.lexers[fi] = lx
	}
	if lx == nil {
		return fg
	}
	it, err := lx.Tokenise(nil, text)
	if err != nil {
		return fg
	}
	i := 0
	for tok := it(); tok != chroma.EOF && i < n; tok = it() {
		c := v.pal.tokenFg(tok.Type)
		for range tok.Value {
			if i >= n {
				break
			}
			fg[i] = c
			i++
		}
	}
	return fg
}

// emphasis marks the runes of line li that differ from its partner, or
// returns nil when the line has none or the lines differ too much for
// emphasis to help.
func (v *diffView) emphasis(fi, hi, li int) []bool {
	p := v.partner[fi][hi][li]
	if p < 0 {
		return nil
	}
	ls := v.files[fi].hunks[hi].Lines
	a, b := ls[li].Content(), ls[p].Content()
	if len(a) > 2000 || len(b) > 2000 {
		return nil
	}
	var marks []bool
	if ls[li].Op == diff.Add {
		_, marks = diff.Changed(b, a, 20*time.Millisecond)
	} else {
		marks, _ = diff.Changed(a, b, 20*time.Millisecond)
	}
	changed, total := 0, len(marks)
	for _, m := range marks {
		if m {
			changed++
		}
	}
	if changed == 0 || total == 0 || changed*10 > total*7 {
		return nil
	}
	return marks
}

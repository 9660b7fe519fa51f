package uv

import (
	"bytes"
	"image/color"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// StyledString is a string that can be decomposed into a series of styled
// lines and cells. It is used to disassemble a rendered string with ANSI
// escape codes into a series of cells that can be used in a [Buffer].
// A StyledString supports reading [ansi.SGR] and [ansi.Hyperlink] escape
// codes.
type StyledString struct {
	// Text is the original string that was used to create the styled string.
	Text string
	// Wrap determines whether the styled string should wrap to the next line.
	Wrap bool
	// Tail is the string that will be appended to the end of the line when the
	// string is truncated i.e. when [StyledString.Wrap] is false.
	Tail string
}

var _ Drawable = (*StyledString)(nil)

// NewStyledString creates a new [StyledString] for the given method and styled
// string. The method is used to calculate the width of each line.
func NewStyledString(str string) *StyledString {
	ss := new(StyledString)
	ss.Text = str
	return ss
}

// String returns the text of the styled string.
//
// It implements the [fmt.Stringer] interface.
func (s *StyledString) String() string {
	return s.Text
}

// Lines returns the styled string decomposed into a slice of [Line]s.
func (s *StyledString) Lines(m ansi.Method) []Line {
	return printString(nil, m, 0, 0, Rectangle{}, s.Text, false, "", nil)
}

// Draw renders the styled string to the given buffer at the
// specified area.
func (s *StyledString) Draw(buf Screen, area Rectangle) {
	// Clear the area before drawing.
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			buf.SetCell(x, y, nil)
		}
	}
	// kz fork: the drawing itself is DrawCleared's.
	s.DrawCleared(buf, area)
}

// DrawCleared draws the string into area of buf as Draw does, for a buf
// the caller has just cleared (kz fork). Draw first sets every cell of
// the area blank, one SetCell each; Bubble Tea's renderer clears its whole
// buffer before every frame, so that was a second pass over every cell of
// every frame, about 2 % of kz's CPU while an answer streams.
func (s *StyledString) DrawCleared(buf Screen, area Rectangle) {
	// We need to normalize newlines "\n" to "\r\n" to emulate a raw terminal
	// output.
	str := strings.ReplaceAll(s.Text, "\r\n", "\n")
	printString(buf, buf.WidthMethod(), area.Min.X, area.Min.Y, area, str, !s.Wrap, s.Tail, nil)
}

// DrawClearedCached is DrawCleared into the whole of buf, a buffer the
// caller has just cleared, taking from c the cells of every line it drew
// in an earlier call instead of decoding the line again (kz fork). Bubble
// Tea's renderer draws its whole view at every frame; while an answer
// streams, the transcript scrolls and all but a line or two of a frame
// were on the screen in the frame before, so decoding every line (its
// escape sequences, its graphemes and their widths) was a third of the
// renderer's work for a frame. The cells and touched ranges buf ends with
// are those DrawCleared gives it (TestLineCacheDrawsAsDrawCleared).
func (s *StyledString) DrawClearedCached(buf ScreenBuffer, c *LineCache) {
	s.drawCached(buf, c, false)
}

// DrawCached is DrawClearedCached into buf as the call before left it,
// not cleared (kz fork): the buffer ends as Clear and DrawClearedCached
// leave it, its touched ranges included, but a row copied from the cache
// is not blanked first, only a row that is decoded, and the rows below
// the text. Clearing the whole buffer and then copying most of its rows
// over the blanks wrote every cell of every frame twice.
func (s *StyledString) DrawCached(buf ScreenBuffer, c *LineCache) {
	s.drawCached(buf, c, true)
}

// drawCached is DrawCached when lazy is set, else DrawClearedCached.
func (s *StyledString) drawCached(buf ScreenBuffer, c *LineCache, lazy bool) {
	area := buf.Bounds()
	if c == nil || s.Wrap || area.Min.X != 0 {
		if c != nil {
			c.keys = c.keys[:0]
		}
		if lazy {
			buf.Clear()
		}
		s.DrawCleared(buf, area)
		return
	}
	if lazy {
		// Every row is touched as Clear touches it; its cells are set
		// as the row is drawn.
		for y := area.Min.Y; y < area.Max.Y; y++ {
			buf.TouchLine(area.Min.X, y, area.Dx())
		}
	}
	str := strings.ReplaceAll(s.Text, "\r\n", "\n")
	c.begin(area.Dx(), buf.Method, s.Tail)
	c.keys = slices.Grow(c.keys[:0], area.Max.Y)[:area.Max.Y]
	clear(c.keys)
	cd := &cachedDraw{c: c, rb: buf.RenderBuffer, lazy: lazy, blankFrom: area.Min.Y}
	printString(buf, buf.WidthMethod(), area.Min.X, area.Min.Y, area, str, true, s.Tail, cd)
	c.end()
}

// LineCache holds the cells of lines drawn by DrawClearedCached, by their
// text, for the next call (kz fork). A line is kept when it starts with
// no style or link in effect and ends, at its newline, with no escape
// sequence open and nothing drawn outside its own row; its cells then
// depend on its text, the width, the width method and the truncation tail
// alone, and a change of any of the three empties the cache. A line not
// drawn in one call is forgotten at the end of the next. The zero value is
// ready to use.
type LineCache struct {
	width  int
	method ansi.Method
	tail   string
	// prev holds the lines of the call before; cur those of this one,
	// taken from prev or newly decoded.
	prev, cur map[string]*cachedLine
	free      []*cachedLine
	// keys holds, for each row of the last call's buffer, the key of the
	// cached line that row holds whole, or 0 (see RowKeys); lastKey is
	// the last key given to a line.
	keys    []uint64
	lastKey uint64
}

// RowKeys returns, for each row of the buffer the last DrawClearedCached
// drew, a key of the row's cells, or 0 when the row has none; the slice
// is the cache's own and valid until the next call. Two rows with the
// same non-zero key hold equal cells, in the same frame or in any two
// frames: a key names one decoded line, and a line's key is never given
// to another (a recycled entry gets a new one). A row has a key when it
// was copied from the cache or recorded into it, and nothing drawn after
// that wrote into it (a combining mark that starts the next line folds
// into it and takes its key away). So a renderer that knows which key
// each row of the terminal holds can skip comparing a row whose key it
// already shows (TerminalRenderer.SetRowKeys).
func (c *LineCache) RowKeys() []uint64 { return c.keys }

// setKey records that row y holds line l whole, or nothing whole for a
// nil l.
func (c *LineCache) setKey(y int, l *cachedLine) {
	if y < 0 || y >= len(c.keys) {
		return
	}
	if l == nil {
		c.keys[y] = 0
		return
	}
	c.keys[y] = l.id
}

// cachedLine is one decoded line: its row's cells and touched range, and
// the state the decoder leaves it in.
type cachedLine struct {
	cells       Line
	first, last int
	style       Style
	link        Link
	// lastX is the column of the last cell the line wrote, or -1.
	lastX int
	// id is the line's key (LineCache.RowKeys), new each time an entry
	// is filled.
	id uint64
}

func (c *LineCache) begin(width int, m ansi.Method, tail string) {
	if c.width != width || c.method != m || c.tail != tail {
		c.width, c.method, c.tail = width, m, tail
		c.prev, c.cur = nil, nil
	}
	if c.cur == nil {
		c.cur = map[string]*cachedLine{}
	}
}

// end forgets the lines of the call before that this one did not draw.
func (c *LineCache) end() {
	for _, l := range c.prev {
		c.free = append(c.free, l)
	}
	clear(c.prev)
	c.prev, c.cur = c.cur, c.prev
	if c.cur == nil {
		c.cur = map[string]*cachedLine{}
	}
}

func (c *LineCache) get(text string) *cachedLine {
	if l := c.cur[text]; l != nil {
		return l
	}
	if l := c.prev[text]; l != nil {
		delete(c.prev, text)
		c.cur[text] = l
		return l
	}
	return nil
}

// keep records row y of rb as the cells of text.
func (c *LineCache) keep(text string, rb *RenderBuffer, y int, style Style, link Link, lastX int) {
	if _, ok := c.cur[text]; ok || y >= len(rb.Touched) || rb.Touched[y] == nil {
		return
	}
	var l *cachedLine
	if n := len(c.free); n > 0 {
		l, c.free = c.free[n-1], c.free[:n-1]
	} else {
		l = &cachedLine{}
	}
	l.cells = append(l.cells[:0], rb.Lines[y]...)
	l.first, l.last = rb.Touched[y].FirstCell, rb.Touched[y].LastCell
	l.style, l.link, l.lastX = style, link, lastX
	c.lastKey++
	l.id = c.lastKey
	c.cur[text] = l
	c.setKey(y, l)
}

// cachedDraw is a printString that takes lines from c and draws into rb.
type cachedDraw struct {
	c  *LineCache
	rb *RenderBuffer
	// The line being decoded, to be kept at its newline when on: its
	// text, its row, and the length of the input left at that newline.
	on   bool
	text string
	y    int
	end  int
	// lazy is set when the buffer was not cleared (DrawCached): a row
	// about to be decoded is blanked first. blankFrom is the first row
	// not yet drawn; printString blanks it and the rows below it at its
	// end.
	lazy      bool
	blankFrom int
}

// decoding readies row y for printString to decode a line into it.
func (d *cachedDraw) decoding(y int) {
	if d.lazy {
		d.blank(y)
		d.blankFrom = max(d.blankFrom, y+1)
	}
}

// blank sets the cells of row y blank, as Buffer.Clear does.
func (d *cachedDraw) blank(y int) {
	if y < 0 || y >= len(d.rb.Lines) {
		return
	}
	line := d.rb.Lines[y]
	for x := range line {
		line[x] = EmptyCell
	}
}

// replay draws l at row y, as decoding its text there did.
func (d *cachedDraw) replay(l *cachedLine, y int) {
	copy(d.rb.Lines[y], l.cells)
	d.rb.TouchLine(l.first, y, l.last-l.first)
	d.c.setKey(y, l)
	d.blankFrom = max(d.blankFrom, y+1)
}

// Height returns the number of lines in the styled string. This is the number
// of lines that the styled string will occupy when rendered to the screen.
func (s *StyledString) Height() int {
	return strings.Count(s.Text, "\n") + 1
}

// UnicodeWidth returns the cells width of the widest line in the styled string
// using the [ansi.GraphemeWidth] method.
func (s *StyledString) UnicodeWidth() int {
	w, _ := s.widthHeight(ansi.GraphemeWidth)
	return w
}

// WcWidth returns the cells width of the widest line in the styled string
// using the [ansi.WcWidth] method.
func (s *StyledString) WcWidth() int {
	w, _ := s.widthHeight(ansi.WcWidth)
	return w
}

func (s *StyledString) widthHeight(m ansi.Method) (w, h int) {
	lines := strings.Split(s.Text, "\n")
	h = len(lines)
	for _, l := range lines {
		w = max(w, m.StringWidth(l))
	}
	return
}

// Bounds returns the minimum area that can contain the whole styled string.
func (s *StyledString) Bounds() Rectangle {
	w, h := s.widthHeight(ansi.GraphemeWidth)
	return Rect(0, 0, w, h)
}

// printString draws a string starting at the given position. If s is nil, it
// will build and return a slice of [Line]s instead (unwrapped, ignoring bounds).
func printString[T []byte | string](
	s Screen,
	m WidthMethod,
	x, y int,
	bounds Rectangle, str T,
	truncate bool, tail string,
	cd *cachedDraw,
) (lines []Line) {
	p := ansi.GetParser()
	defer ansi.PutParser(p)

	var tailc Cell
	if truncate && len(tail) > 0 {
		tailc = *NewCell(m, tail)
	}

	// A [WidthMethod] the ansi package doesn't know about falls back to
	// wcwidth, so the segmenter below always agrees with the decoder.
	decoder, method := ansi.DecodeSequenceWc[T], ansi.WcWidth
	if m == ansi.GraphemeWidth {
		decoder, method = ansi.DecodeSequence[T], ansi.GraphemeWidth
	}

	if s == nil {
		lines = []Line{}
	}

	var cell Cell
	var style Style
	var link Link
	var state byte
	lastX, lastY := -1, -1 // last cell written, for folding in combining marks
	lineStart := cd != nil
	for len(str) > 0 {
		// kz fork: at the start of a line that begins in the decoder's
		// ground state with no style or link, a line drawn before is
		// copied from the cache, and any other is recorded for it (see
		// DrawClearedCached).
		if lineStart {
			lineStart = false
			cd.on = false
			if state == 0 && cell.IsZero() && style.IsZero() && link.IsZero() && y >= bounds.Min.Y && y < bounds.Max.Y {
				if i := strings.IndexByte(string(str), '\n'); i >= 0 {
					text := string(str[:i])
					if l := cd.c.get(text); l != nil {
						cd.replay(l, y)
						style, link = l.style, l.link
						if l.lastX >= 0 {
							lastX, lastY = l.lastX, y
						}
						str = str[i:]
						continue
					}
					cd.on, cd.text, cd.y, cd.end = true, text, y, len(str)-i
				}
			}
			cd.decoding(y)
		}
		seq, width, n, newState := decoder(str, state, p)
		// The decoder's ASCII fast path doesn't check for trailing combining
		// sequences, so re-decode as a full cluster when one starts here.
		// The str[1] >= 0xc0 check skips the segmenter for plain ASCII.
		if n == 1 && seq[0] > 0x1f && seq[0] < 0x7f && len(str) > 1 && str[1] >= 0xc0 {
			if cluster, cw := ansi.FirstGraphemeCluster(str, method); len(cluster) > 1 {
				seq, width, n = cluster, cw, len(cluster)
			}
		}
		switch {
		// Any positive width is a printable grapheme cluster. Wcwidth measures
		// a cluster per codepoint, so this is not bounded by how wide a glyph
		// can be: a ZWJ emoji sequence such as "👨‍👩‍👧‍👦" is eight columns,
		// and capping the width here would fall through to the escape sequence
		// branch and drop the cluster from the screen.
		case width > 0:
			cell.Width = width
			cell.Content = string(seq)
			cell.Style = style
			cell.Link = link

			if s == nil {
				// Building lines: unwrapped, no bounds
				if y >= len(lines) {
					lines = append(lines, Line{})
				}
				lines[y] = append(lines[y], cell)
				lastX, lastY = len(lines[y])-1, y
				x += width
			} else {
				// Drawing to screen: handle wrapping, truncation, and bounds
				if !truncate && x+cell.Width > bounds.Max.X && y+1 < bounds.Max.Y {
					// Wrap the string to the width of the window
					x = bounds.Min.X
					y++
				}

				pos := Pos(x, y)
				if pos.In(bounds) {
					if truncate && tailc.Width > 0 && x+cell.Width > bounds.Max.X-tailc.Width {
						// Truncate the string and append the tail if any.
						cell = tailc
						cell.Style = style
						cell.Link = link
						s.SetCell(x, y, &cell)
						lastX, lastY = x, y
						x += tailc.Width
					} else {
						// Print the cell to the screen
						s.SetCell(x, y, &cell)
						lastX, lastY = x, y
						x += width
					}
				}
			}

			// Reset cell for next iteration
			cell = Cell{}
		default:
			// Valid sequences always have a non-zero Cmd.
			// TODO: Handle cursor movement and other sequences
			switch {
			case ansi.HasCsiPrefix(seq) && p.Command() == 'm':
				// SGR - Select Graphic Rendition
				ReadStyle(p.Params(), &style)
			case ansi.HasOscPrefix(seq) && p.Command() == 8:
				// Hyperlinks
				ReadLink(p.Data(), &link)
			case ansi.Equal(seq, T("\n")):
				if cd != nil {
					// kz fork: the end of a line DrawClearedCached may keep.
					if cd.on && len(str) == cd.end && state == 0 && cell.IsZero() {
						kept := -1
						if lastY == cd.y {
							kept = lastX
						}
						cd.c.keep(cd.text, cd.rb, cd.y, style, link, kept)
					}
					cd.on, lineStart = false, true
				}
				if s == nil {
					// When building lines, we need to ensure empty lines are represented.
					if y >= len(lines) {
						lines = append(lines, Line{})
					}
				}
				y++
				// Always treat a NL as CR-LF similar to Termios ONLCR.
				fallthrough
			case ansi.Equal(seq, T("\r")):
				if s == nil {
					x = 0
				} else {
					x = bounds.Min.X
				}
			case len(seq) > 0 && seq[0] >= 0xc0:
				// A zero-width grapheme, i.e. a combining mark the re-decode
				// above couldn't fold because an escape sequence sits between
				// it and its base, as in "a\x1b[31m\u0301". Every escape
				// introducer is a C0 or C1 byte, so a UTF-8 lead byte here is
				// always text. The mark belongs to the cell we last wrote; the
				// accumulator below would let the next glyph clobber it.
				if cd != nil && (lastX < 0 || lastY != y) {
					// kz fork: a mark with no cell of its own row before it
					// folds into a row above, or into nothing; either way
					// the line depends on what came before it.
					cd.on = false
				}
				if s == nil {
					if lastY >= 0 && lastY < len(lines) && lastX < len(lines[lastY]) {
						lines[lastY][lastX].Content += string(seq)
					}
				} else if lastX >= 0 {
					if cd != nil {
						// kz fork: the row no longer holds its cached
						// line alone.
						cd.c.setKey(lastY, nil)
					}
					if prev := s.CellAt(lastX, lastY); prev != nil {
						folded := *prev
						folded.Content += string(seq)
						s.SetCell(lastX, lastY, &folded)
					}
				}
			default:
				cell.Content += string(seq)
			}
		}

		// Advance the state and data
		state = newState
		str = str[n:]

		if y >= bounds.Max.Y {
			// We've reached the bottom of the bounds, stop processing further
			// lines.
			break
		}
	}

	if cd != nil && cd.lazy {
		// kz fork: the rows the text did not reach are blank, before
		// the last cell lands on one of them.
		for row := cd.blankFrom; row < bounds.Max.Y; row++ {
			cd.blank(row)
		}
	}

	// Make sure to set the last cell if it's not empty.
	if !cell.IsZero() && s != nil {
		s.SetCell(x, y, &cell)
	}

	return lines
}

// ReadStyle reads a Select Graphic Rendition (SGR) escape sequences from a
// list of parameters into pen.
func ReadStyle(params ansi.Params, pen *Style) {
	if len(params) == 0 {
		*pen = Style{}
		return
	}

	for i := 0; i < len(params); i++ {
		param, hasMore, _ := params.Param(i, 0)
		switch param {
		case 0: // Reset
			*pen = Style{}
		case 1: // Bold
			pen.Attrs |= AttrBold
		case 2: // Dim/Faint
			pen.Attrs |= AttrFaint
		case 3: // Italic
			pen.Attrs |= AttrItalic
		case 4: // Underline
			nextParam, _, ok := params.Param(i+1, 0)
			if hasMore && ok { // Only accept subparameters i.e. separated by ":"
				switch nextParam {
				case 0, 1, 2, 3, 4, 5:
					i++
					switch nextParam {
					case 0: // No Underline
						pen.Underline = UnderlineStyleNone
					case 1: // Single Underline
						pen.Underline = UnderlineStyleSingle
					case 2: // Double Underline
						pen.Underline = UnderlineStyleDouble
					case 3: // Curly Underline
						pen.Underline = UnderlineStyleCurly
					case 4: // Dotted Underline
						pen.Underline = UnderlineStyleDotted
					case 5: // Dashed Underline
						pen.Underline = UnderlineStyleDashed
					}
				}
			} else {
				// Single Underline
				pen.Underline = UnderlineStyleSingle
			}
		case 5: // Slow Blink
			pen.Attrs |= AttrBlink
		case 6: // Rapid Blink
			pen.Attrs |= AttrRapidBlink
		case 7: // Reverse
			pen.Attrs |= AttrReverse
		case 8: // Conceal
			pen.Attrs |= AttrConceal
		case 9: // Crossed-out/Strikethrough
			pen.Attrs |= AttrStrikethrough
		case 22: // Normal Intensity (not bold or faint)
			pen.Attrs &^= (AttrBold | AttrFaint)
		case 23: // Not italic, not Fraktur
			pen.Attrs &^= AttrItalic
		case 24: // Not underlined
			pen.Underline = UnderlineStyleNone
		case 25: // Blink off
			pen.Attrs &^= (AttrBlink | AttrRapidBlink)
		case 27: // Positive (not reverse)
			pen.Attrs &^= AttrReverse
		case 28: // Reveal
			pen.Attrs &^= AttrConceal
		case 29: // Not crossed out
			pen.Attrs &^= AttrStrikethrough
		case 30, 31, 32, 33, 34, 35, 36, 37: // Set foreground
			pen.Fg = ansi.Black + ansi.BasicColor(param-30) //nolint:gosec
		case 38: // Set foreground 256 or truecolor
			var c color.Color
			n := ansi.ReadStyleColor(params[i:], &c)
			if n > 0 {
				pen.Fg = c
				i += n - 1
			}
		case 39: // Default foreground
			pen.Fg = nil
		case 40, 41, 42, 43, 44, 45, 46, 47: // Set background
			pen.Bg = ansi.Black + ansi.BasicColor(param-40) //nolint:gosec
		case 48: // Set background 256 or truecolor
			var c color.Color
			n := ansi.ReadStyleColor(params[i:], &c)
			if n > 0 {
				pen.Bg = c
				i += n - 1
			}
		case 49: // Default Background
			pen.Bg = nil
		case 58: // Set underline color
			var c color.Color
			n := ansi.ReadStyleColor(params[i:], &c)
			if n > 0 {
				pen.UnderlineColor = c
				i += n - 1
			}
		case 59: // Default underline color
			pen.UnderlineColor = nil
		case 90, 91, 92, 93, 94, 95, 96, 97: // Set bright foreground
			pen.Fg = ansi.BrightBlack + ansi.BasicColor(param-90) //nolint:gosec
		case 100, 101, 102, 103, 104, 105, 106, 107: // Set bright background
			pen.Bg = ansi.BrightBlack + ansi.BasicColor(param-100) //nolint:gosec
		}
	}
}

// ReadLink reads a hyperlink escape sequence from a data buffer into link.
func ReadLink(p []byte, link *Link) {
	params := bytes.Split(p, []byte{';'})
	if len(params) != 3 {
		return
	}
	link.Params = string(params[1])
	link.URL = string(params[2])
}

package uv

// kz fork: row keys let the renderer skip the rows of a frame it already
// shows. Bubble Tea draws its whole view at every frame, and while an
// answer streams the transcript scrolls: each frame is the one before
// moved up a line or two. The renderer still hashed every row of both
// screens (to find the scroll) and compared every cell of every row (to
// find what changed), most of its work per frame, though the line cache
// that drew the frame (LineCache) already knew which rows hold a line it
// drew before, and which line.
//
// A row key names the exact cells of one decoded line (LineCache.RowKeys).
// The renderer keeps, for each row of its model of the terminal (curbuf),
// the key of the line that row holds whole, or 0 when it does not know.
// Invariant: a row of curbuf with key k holds cells equal (cellEqual) to
// those of line k. transformLine makes a row of curbuf equal to the new
// frame's row, so the row takes the new row's key; a scroll moves keys
// with their rows; anything else that writes into curbuf (clearing the
// screen or its bottom, a resize) forgets the keys of the rows it wrote.
// A row of the new frame whose key is the key curbuf shows at that row is
// therefore equal to it, and transformLine would find nothing to write:
// it is skipped, unless the line holds a cell transformLine repaints a
// line for (lineHasDrift), so that the bytes written stay what they were.
// What the renderer computes of a row from its cells alone (its hash, its
// drift, its last cell that is not blank) is kept per key for the same
// reason.

// rowKeys is a TerminalRenderer's knowledge of row keys.
type rowKeys struct {
	// next holds the keys of the rows of the buffer the next Render
	// draws (SetRowKeys); nil when they are not known. Render forgets
	// them when it returns.
	next []uint64
	// cur holds the key of each row of curbuf, or 0.
	cur []uint64
	// info holds what is known of the lines of the keys in cur and next;
	// spare is the map the next prune fills.
	info, spare map[uint64]*rowInfo
}

// rowInfo is what the renderer has computed of one keyed line: its hash,
// whether it has drift (lineHasDrift), and the index of its last cell
// that is not an empty one, or -1.
type rowInfo struct {
	hash                    uint64
	drift                   bool
	last                    int
	hashed, drifted, lasted bool
}

// SetRowKeys gives the keys of the rows of the buffer the next Render
// draws: keys[y] is the key of row y's cells (LineCache.RowKeys), or 0.
// Render uses them once; the caller must not change keys until then.
// A buffer whose rows do not hold exactly the keyed lines' cells must not
// be given keys.
func (s *TerminalRenderer) SetRowKeys(keys []uint64) {
	s.keys.next = keys
}

// newKey is the key of row y of the buffer being rendered, or 0.
func (s *TerminalRenderer) newKey(y int) uint64 {
	if y < len(s.keys.next) {
		return s.keys.next[y]
	}
	return 0
}

// curKey is the key of row y of curbuf, or 0.
func (s *TerminalRenderer) curKey(y int) uint64 {
	if y >= 0 && y < len(s.keys.cur) {
		return s.keys.cur[y]
	}
	return 0
}

// shown reports whether row y of newbuf is the row curbuf holds at y,
// known by their keys, and transformLine would write nothing for it.
func (s *TerminalRenderer) shown(newbuf *RenderBuffer, y int) bool {
	k := s.newKey(y)
	if k == 0 || k != s.curKey(y) {
		return false
	}
	return !s.rowDrift(k, newbuf.Line(y))
}

// rowDrift is lineHasDrift of line, whose key is k (0 for none).
func (s *TerminalRenderer) rowDrift(k uint64, line Line) bool {
	if k == 0 {
		return lineHasDrift(s.method, line)
	}
	in := s.rowInfo(k)
	if !in.drifted {
		in.drift, in.drifted = lineHasDrift(s.method, line), true
	}
	return in.drift
}

// lastNotBlank is where transformLine's search from the end of line
// (width cells, its key k) for its last cell that is not blank stops:
// that cell, or floor when none after floor is. Where blank is an empty
// cell, as it is on most rows, the last cell that is not is kept per key.
func (s *TerminalRenderer) lastNotBlank(k uint64, line Line, blank *Cell, width, floor int) int {
	if k != 0 && len(line) == width && blank != nil && blank.Equal(&EmptyCell) {
		in := s.rowInfo(k)
		if !in.lasted {
			in.last = len(line) - 1
			for in.last >= 0 && line[in.last].Equal(&EmptyCell) {
				in.last--
			}
			in.lasted = true
		}
		return max(in.last, floor)
	}
	i := width - 1
	for i > floor && cellEqual(line.At(i), blank) {
		i--
	}
	return i
}

// rowHash is hash of line, whose key is k (0 for none).
func (s *TerminalRenderer) rowHash(k uint64, line Line) uint64 {
	if k == 0 {
		return hash(&s.hasher, &s.hashScratch, line)
	}
	in := s.rowInfo(k)
	if !in.hashed {
		in.hash, in.hashed = hash(&s.hasher, &s.hashScratch, line), true
	}
	return in.hash
}

func (s *TerminalRenderer) rowInfo(k uint64) *rowInfo {
	if s.keys.info == nil {
		s.keys.info = map[uint64]*rowInfo{}
	}
	in := s.keys.info[k]
	if in == nil {
		in = &rowInfo{}
		s.keys.info[k] = in
	}
	return in
}

// adoptKey records that row y of curbuf now equals row y of the buffer
// being rendered.
func (s *TerminalRenderer) adoptKey(y int) {
	if y >= 0 && y < len(s.keys.cur) {
		s.keys.cur[y] = s.newKey(y)
	}
}

// forgetKeys forgets the keys of curbuf's rows from..to-1.
func (s *TerminalRenderer) forgetKeys(from, to int) {
	from, to = max(from, 0), min(to, len(s.keys.cur))
	if from < to {
		clear(s.keys.cur[from:to])
	}
}

// resetKeys forgets every row's key and sizes cur to curbuf.
func (s *TerminalRenderer) resetKeys() {
	h := 0
	if s.curbuf != nil {
		h = s.curbuf.Height()
	}
	s.keys.cur = append(s.keys.cur[:0], make([]uint64, h)...)
}

// scrollKeys moves the keys of rows top..bot of curbuf as scrollBuffer
// moves the rows: n lines up (n > 0) or down (n < 0); the rows it blanks
// lose theirs.
func (s *TerminalRenderer) scrollKeys(n, top, bot int) {
	k := s.keys.cur
	if top < 0 || bot < top || bot >= len(k) || n == 0 {
		s.forgetKeys(top, bot+1)
		return
	}
	if n > 0 {
		for line := top; line <= bot; line++ {
			if line+n <= bot {
				k[line] = k[line+n]
			} else {
				k[line] = 0
			}
		}
		return
	}
	for line := bot; line >= top; line-- {
		if line+n >= top {
			k[line] = k[line+n]
		} else {
			k[line] = 0
		}
	}
}

// endKeys forgets the keys given for the buffer just rendered and what
// is known of lines no row of curbuf holds any more.
func (s *TerminalRenderer) endKeys() {
	s.keys.next = nil
	if len(s.keys.info) == 0 {
		return
	}
	if s.keys.spare == nil {
		s.keys.spare = map[uint64]*rowInfo{}
	}
	for _, k := range s.keys.cur {
		if in := s.keys.info[k]; in != nil {
			s.keys.spare[k] = in
		}
	}
	clear(s.keys.info)
	s.keys.info, s.keys.spare = s.keys.spare, s.keys.info
}

// untouched sets each of marks to a new LineData with no cell touched,
// all made in one allocation (Render's end, kz fork).
func untouched(marks []*LineData) {
	lines := make([]LineData, len(marks))
	for i := range marks {
		lines[i] = LineData{FirstCell: -1, LastCell: -1}
		marks[i] = &lines[i]
	}
}

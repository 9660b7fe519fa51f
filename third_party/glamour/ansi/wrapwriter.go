package ansi

import (
	"bytes"
	"fmt"
	"io"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// wrapWriter is lipgloss.WrapWriter without its per-byte cost: it keeps
// track of the pen (the style and hyperlink set by the escape sequences
// written so far) and, at each newline, resets the pen before the newline
// and sets it again after, so that every line stands on its own. Its
// output is byte for byte that of lipgloss.WrapWriter for any input split
// into any writes; it differs only in how it gets there.
//
// lipgloss.WrapWriter feeds every byte to an ANSI parser and writes every
// byte to the next writer as a one-byte slice, which allocates. Glamour
// stacks several of these writers per nesting level, so a document's bytes
// went through that path many times over. This writer writes each run of
// bytes between newlines in one call, and skips the parser over printable
// ASCII while the parser is in its ground state: there such a byte is a
// print action that changes nothing the pen depends on (the parser keeps
// the byte as its command, which is cleared before any sequence is
// dispatched). Every other byte (escape sequences, controls, non-ASCII
// text, whose bytes may be C1 controls or parts of a rune) goes through
// the parser as before.
type wrapWriter struct {
	w     io.Writer
	p     *ansi.Parser
	style uv.Style
	link  uv.Link
	// params is the scratch space of sgr.
	params [maxSGRParams]ansi.Param
}

// maxSGRParams and maxSGRDigits bound the SGR sequences sgr decodes
// itself; longer ones, rare in glamour's output, go through the parser,
// whose limits then apply as before.
const (
	maxSGRParams = 16
	maxSGRDigits = 9
)

// newWrapWriter returns a wrapWriter writing to w. Close returns its parser
// to the pool.
func newWrapWriter(w io.Writer) *wrapWriter {
	ww := &wrapWriter{w: w, p: ansi.GetParser()}
	ww.p.SetHandler(ansi.Handler{
		HandleCsi: func(cmd ansi.Cmd, params ansi.Params) {
			if cmd == 'm' {
				uv.ReadStyle(params, &ww.style)
			}
		},
		HandleOsc: func(cmd int, data []byte) {
			if cmd == 8 {
				uv.ReadLink(data, &ww.link)
			}
		},
	})
	return ww
}

// Style returns the current pen style.
func (w *wrapWriter) Style() uv.Style { return w.style }

// Link returns the current pen link.
func (w *wrapWriter) Link() uv.Link { return w.link }

// Write writes p, resetting and restoring the pen around each newline.
func (w *wrapWriter) Write(p []byte) (int, error) {
	if w.p == nil {
		// Closed: lipgloss.WrapWriter drops such writes too (they happen
		// when a chain of writers is torn down out of order).
		return len(p), nil
	}
	n := len(p)
	if w.style.IsZero() && w.link.IsZero() && w.p.State() == parser.GroundState && penClear(p, true) {
		// Nothing in p sets the pen at a newline or at its end: the
		// writer would write p as it is and end as it started (see
		// penClear), so it does, in one write.
		if _, err := w.w.Write(p); err != nil {
			return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
		}
		return n, nil
	}
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			end = len(p)
		}
		if end > 0 {
			w.advance(p[:end])
			if _, err := w.w.Write(p[:end]); err != nil {
				return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
			}
		}
		if end == len(p) {
			break
		}
		w.p.Advance('\n')
		if err := w.newline(); err != nil {
			return 0, err
		}
		p = p[end+1:]
	}
	return n, nil
}

// advance feeds b to the parser, skipping printable ASCII in the ground
// state and decoding plain SGR sequences itself (see wrapWriter and sgr).
func (w *wrapWriter) advance(b []byte) {
	for i := 0; i < len(b); {
		if w.p.State() == parser.GroundState {
			for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
				i++
			}
			if i == len(b) {
				return
			}
			if n := w.sgr(b[i:]); n > 0 {
				i += n
				continue
			}
		}
		w.p.Advance(b[i])
		i++
	}
}

// sgr decodes a complete SGR sequence of digits and semicolons only
// ("\x1b[38;5;252m", "\x1b[0m", "\x1b[m") at the start of b, seen in
// the parser's ground state, and applies it to the pen as the parser's
// CSI handler would; it returns the sequence's length, or 0 to leave b to
// the parser (anything else, or a sequence cut by the end of b). The
// parameters are the parser's: a missing one is parser.MissingParam, and
// a sequence with no digits and no semicolon has none. The parser is left
// in its ground state, where the sequence would have left it; the command
// and parameters it keeps from earlier are cleared before it dispatches
// anything else.
func (w *wrapWriter) sgr(b []byte) int {
	if len(b) < 3 || b[0] != ansi.ESC || b[1] != '[' {
		return 0
	}
	params := w.params[:0]
	cur, digits := ansi.Param(parser.MissingParam), 0
	for i := 2; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			if digits == maxSGRDigits {
				return 0
			}
			if cur == parser.MissingParam {
				cur = 0
			}
			cur, digits = cur*10+ansi.Param(c-'0'), digits+1
		case c == ';':
			if len(params) == maxSGRParams-1 {
				return 0
			}
			params, cur, digits = append(params, cur), parser.MissingParam, 0
		case c == 'm':
			if len(params) > 0 || cur != parser.MissingParam {
				params = append(params, cur)
			}
			uv.ReadStyle(ansi.Params(params), &w.style)
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// newline writes a newline between a reset and a restore of the pen, in
// the order lipgloss.WrapWriter does.
func (w *wrapWriter) newline() error {
	var buf []byte
	if !w.style.IsZero() {
		buf = append(buf, ansi.ResetStyle...)
	}
	if !w.link.IsZero() {
		buf = append(buf, ansi.ResetHyperlink()...)
	}
	buf = append(buf, '\n')
	if !w.link.IsZero() {
		buf = append(buf, ansi.SetHyperlink(w.link.URL, w.link.Params)...)
	}
	if !w.style.IsZero() {
		buf = append(buf, w.style.String()...)
	}
	if _, err := w.w.Write(buf); err != nil {
		return fmt.Errorf("glamour: error writing newline: %w", err)
	}
	return nil
}

// Close resets the pen if it is set and returns the parser to the pool.
func (w *wrapWriter) Close() error {
	var err error
	if !w.style.IsZero() {
		_, err = io.WriteString(w.w, ansi.ResetStyle)
	}
	if !w.link.IsZero() && err == nil {
		_, err = io.WriteString(w.w, ansi.ResetHyperlink())
	}
	if w.p != nil {
		ansi.PutParser(w.p)
		w.p = nil
	}
	if err != nil {
		return fmt.Errorf("glamour: error closing writer: %w", err)
	}
	return nil
}

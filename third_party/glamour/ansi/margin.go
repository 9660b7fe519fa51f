package ansi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// MarginWriter is a Writer that applies indentation and padding around
// whatever you write to it.
type MarginWriter struct {
	iw *IndentWriter
}

// NewMarginWriter returns a new MarginWriter.
//
// The padding and the indentation are one styled string repeated, so each
// is rendered once, on first use, instead of once per column of every
// line. The writer lives within one Finish call, while the block stack
// does not change, so the parent style read on first use is the one every
// later use would read.
func NewMarginWriter(ctx RenderContext, w io.Writer, rules StyleBlock) *MarginWriter {
	bs := ctx.blockStack

	var indentation uint
	var margin uint
	if rules.Indent != nil {
		indentation = *rules.Indent
	}
	if rules.Margin != nil {
		margin = *rules.Margin
	}

	pad := onceText(func(b *bytes.Buffer) { _, _ = renderText(b, rules.StylePrimitive, " ") })
	pw := NewPaddingWriter(w, int(bs.Width(ctx)), func(_ io.Writer) {
		_, _ = io.WriteString(w, pad())
	})

	ic := " "
	if rules.IndentToken != nil {
		ic = *rules.IndentToken
	}
	indent := onceText(func(b *bytes.Buffer) { _, _ = renderText(b, bs.Parent().Style.StylePrimitive, ic) })
	iw := NewIndentWriter(pw, int(indentation+margin), func(_ io.Writer) {
		_, _ = io.WriteString(w, indent())
	})

	return &MarginWriter{iw: iw}
}

// onceText returns a function that renders text with render on its first
// call and returns the same text on every call.
func onceText(render func(*bytes.Buffer)) func() string {
	var s string
	done := false
	return func() string {
		if !done {
			var b bytes.Buffer
			render(&b)
			s, done = b.String(), true
		}
		return s
	}
}

// Write writes to the margin writer and implements [io.Writer].
func (w *MarginWriter) Write(b []byte) (int, error) {
	n, err := w.iw.Write(b)
	if err != nil {
		return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
	}
	return n, nil
}

// Close closes the [MarginWriter].
func (w *MarginWriter) Close() error {
	return w.iw.Close()
}

// PaddingFunc is a function that applies padding around whatever you write to it.
type PaddingFunc = func(w io.Writer)

// PaddingWriter is a writer that applies padding around whatever you write to
// it: each line narrower than Padding columns is filled up to it, the
// padding written before the line's newline.
type PaddingWriter struct {
	Padding int
	PadFunc PaddingFunc
	w       *wrapWriter
	// cache holds the current line so far, to measure its width.
	cache bytes.Buffer
}

// NewPaddingWriter returns a new PaddingWriter.
func NewPaddingWriter(w io.Writer, padding int, padFunc PaddingFunc) *PaddingWriter {
	return &PaddingWriter{
		Padding: padding,
		PadFunc: padFunc,
		w:       newWrapWriter(w),
	}
}

// Write writes to the padding writer. It writes each run of bytes up to a
// newline in one call: the output is the same as writing rune by rune.
func (w *PaddingWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			w.cache.Write(p)
			if _, err := w.w.Write(p); err != nil {
				return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
			}
			break
		}
		w.cache.Write(p[:end])
		if _, err := w.w.Write(p[:end]); err != nil {
			return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
		}
		if err := w.pad(); err != nil {
			return 0, err
		}
		w.cache.Reset()
		if _, err := w.w.Write(p[end : end+1]); err != nil {
			return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
		}
		p = p[end+1:]
	}
	return n, nil
}

// pad fills the current line up to Padding columns.
func (w *PaddingWriter) pad() error {
	if w.Padding <= 0 {
		return nil
	}
	linew := lineWidth(w.cache.Bytes())
	if linew >= w.Padding {
		return nil
	}
	if w.PadFunc != nil {
		for n := 0; n < w.Padding-linew; n++ {
			w.PadFunc(w.w)
		}
		return nil
	}
	if _, err := io.WriteString(w.w, strings.Repeat(" ", w.Padding-linew)); err != nil {
		return fmt.Errorf("glamour: error writing padding: %w", err)
	}
	return nil
}

// lineWidth is ansi.StringWidth of a line, counted without a copy of the
// line when it is printable ASCII and SGR sequences (one column a
// printable byte, none for a sequence), as padded lines are, or valid
// UTF-8 text and SGR sequences (see stringWidth).
func lineWidth(b []byte) int {
	switch kind, w := scanLine(b); kind {
	case asciiLine:
		return w
	case utf8Line:
		return stringWidth(b)
	}
	return ansi.StringWidth(string(b))
}

// Close closes the [PaddingWriter].
func (w *PaddingWriter) Close() error {
	return w.w.Close()
}

// IndentFunc is a function that applies indentation around whatever you write to
// it.
type IndentFunc = func(w io.Writer)

// IndentWriter is a writer that applies indentation around whatever you write to
// it: before the first byte of each line, the pen is reset, the indentation
// written, and the pen set again.
type IndentWriter struct {
	Indent     int
	IndentFunc PaddingFunc
	w          io.Writer
	pw         *wrapWriter
	skipIndent bool
}

// NewIndentWriter returns a new IndentWriter.
func NewIndentWriter(w io.Writer, indent int, indentFunc IndentFunc) *IndentWriter {
	return &IndentWriter{
		Indent:     indent,
		IndentFunc: indentFunc,
		pw:         newWrapWriter(w),
		w:          w,
	}
}

func (w *IndentWriter) resetPen() {
	style := w.pw.Style()
	link := w.pw.Link()
	if !style.IsZero() {
		_, _ = io.WriteString(w.w, ansi.ResetStyle)
	}
	if !link.IsZero() {
		_, _ = io.WriteString(w.w, ansi.ResetHyperlink())
	}
}

func (w *IndentWriter) restorePen() {
	style := w.pw.Style()
	link := w.pw.Link()
	if !style.IsZero() {
		_, _ = io.WriteString(w.w, style.String())
	}
	if !link.IsZero() {
		_, _ = io.WriteString(w.w, ansi.SetHyperlink(link.URL, link.Params))
	}
}

// Write writes to the indentation writer. It writes each line, newline
// included, in one call: the output is the same as writing rune by rune.
func (w *IndentWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if !w.skipIndent {
			if err := w.indent(); err != nil {
				return 0, err
			}
		}
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			end = len(p)
		} else {
			end++
			w.skipIndent = false
		}
		if _, err := w.pw.Write(p[:end]); err != nil {
			return 0, fmt.Errorf("glamour: error writing bytes: %w", err)
		}
		p = p[end:]
	}
	return n, nil
}

// indent writes the indentation of a new line between a reset and a
// restore of the pen.
func (w *IndentWriter) indent() error {
	w.resetPen()
	if w.IndentFunc != nil {
		for j := 0; j < w.Indent; j++ {
			w.IndentFunc(w.pw)
		}
	} else if _, err := io.WriteString(w.pw, strings.Repeat(" ", w.Indent)); err != nil {
		return fmt.Errorf("glamour: error writing indentation: %w", err)
	}
	w.skipIndent = true
	w.restorePen()
	return nil
}

// Close closes the [IndentWriter].
func (w *IndentWriter) Close() error {
	// Close the wrap writer (w.pw) before the downstream writer (w.w). w.pw
	// wraps w.w, so its Close flushes a trailing style/link reset back through
	// w.w. Closing w.w first would return its parser to the pool and nil it
	// out, turning that flush into a write on a closed writer.
	werr := w.pw.Close()

	if c, ok := w.w.(io.WriteCloser); ok {
		werr = errors.Join(werr, c.Close())
	}

	return werr
}

package ansi

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

const (
	// The chroma style theme name used for rendering.
	chromaStyleTheme = "charm"

	// The chroma formatter name used for rendering.
	chromaFormatter = "terminal256"
)

// chromaStyles holds the chroma style made from each distinct Chroma rule
// set, keyed by its entries (kz fork, see chromaStyleFor).
var chromaStyles sync.Map

// A CodeBlockElement is used to render code blocks.
type CodeBlockElement struct {
	Code     string
	Language string
}

func chromaStyle(style StylePrimitive) string {
	var s string

	if style.Color != nil {
		s = *style.Color
	}
	if style.BackgroundColor != nil {
		if s != "" {
			s += " "
		}
		s += "bg:" + *style.BackgroundColor
	}
	if style.Italic != nil && *style.Italic {
		if s != "" {
			s += " "
		}
		s += "italic"
	}
	if style.Bold != nil && *style.Bold {
		if s != "" {
			s += " "
		}
		s += "bold"
	}
	if style.Underline != nil && *style.Underline {
		if s != "" {
			s += " "
		}
		s += "underline"
	}

	return s
}

// Render renders a CodeBlockElement.
func (e *CodeBlockElement) Render(w io.Writer, ctx RenderContext) error {
	bs := ctx.blockStack

	var indentation uint
	var margin uint
	formatter := chromaFormatter
	rules := ctx.options.Styles.CodeBlock
	if rules.Indent != nil {
		indentation = *rules.Indent
	}
	if rules.Margin != nil {
		margin = *rules.Margin
	}
	if len(ctx.options.ChromaFormatter) > 0 {
		formatter = ctx.options.ChromaFormatter
	}
	var style *chroma.Style
	if rules.Chroma != nil {
		style = chromaStyleFor(rules.Chroma)
	} else if rules.Theme != "" {
		style = styles.Get(rules.Theme)
	}

	iw := NewIndentWriter(w, int(indentation+margin), func(_ io.Writer) {
		_, _ = renderText(w, bs.Current().Style.StylePrimitive, " ")
	})
	defer iw.Close() //nolint:errcheck

	if style != nil {
		_, _ = renderText(iw, bs.Current().Style.StylePrimitive, rules.BlockPrefix)

		if err := highlight(iw, e.Code, e.Language, formatter, style); err != nil {
			return fmt.Errorf("glamour: error highlighting code: %w", err)
		}
		_, _ = renderText(iw, bs.Current().Style.StylePrimitive, rules.BlockSuffix)
		return nil
	}

	// fallback rendering
	el := &BaseElement{
		Token: e.Code,
		Style: rules.StylePrimitive,
	}

	return el.Render(iw, ctx)
}

// highlight is chroma's quick.Highlight with a style value instead of a
// registry name (kz fork).
func highlight(w io.Writer, source, lexer, formatter string, style *chroma.Style) error {
	l := lexers.Get(lexer)
	if l == nil {
		l = lexers.Analyse(source)
	}
	if l == nil {
		l = lexers.Fallback
	}
	f := formatters.Get(formatter)
	if f == nil {
		f = formatters.Fallback
	}
	it, err := chroma.Coalesce(l).Tokenise(nil, source)
	if err != nil {
		return fmt.Errorf("tokenise: %w", err)
	}
	if err := f.Format(w, style, it); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	return nil
}

// chromaStyleFor returns the chroma style of a Chroma rule set.
//
// kz fork: upstream registered the first rule set it saw in chroma's
// global style registry under the fixed name "charm" and used that entry
// from then on, so every theme's code blocks took the colours of whichever
// theme rendered code first in the process, and registry reads raced with
// the write. Styles are kept here instead, keyed by their entries, so each
// rule set gets its own and the registry is only read.
func chromaStyleFor(c *Chroma) *chroma.Style {
	entries := chroma.StyleEntries{
		chroma.Text:                chromaStyle(c.Text),
		chroma.Error:               chromaStyle(c.Error),
		chroma.Comment:             chromaStyle(c.Comment),
		chroma.CommentPreproc:      chromaStyle(c.CommentPreproc),
		chroma.Keyword:             chromaStyle(c.Keyword),
		chroma.KeywordReserved:     chromaStyle(c.KeywordReserved),
		chroma.KeywordNamespace:    chromaStyle(c.KeywordNamespace),
		chroma.KeywordType:         chromaStyle(c.KeywordType),
		chroma.Operator:            chromaStyle(c.Operator),
		chroma.Punctuation:         chromaStyle(c.Punctuation),
		chroma.Name:                chromaStyle(c.Name),
		chroma.NameBuiltin:         chromaStyle(c.NameBuiltin),
		chroma.NameTag:             chromaStyle(c.NameTag),
		chroma.NameAttribute:       chromaStyle(c.NameAttribute),
		chroma.NameClass:           chromaStyle(c.NameClass),
		chroma.NameConstant:        chromaStyle(c.NameConstant),
		chroma.NameDecorator:       chromaStyle(c.NameDecorator),
		chroma.NameException:       chromaStyle(c.NameException),
		chroma.NameFunction:        chromaStyle(c.NameFunction),
		chroma.NameOther:           chromaStyle(c.NameOther),
		chroma.Literal:             chromaStyle(c.Literal),
		chroma.LiteralNumber:       chromaStyle(c.LiteralNumber),
		chroma.LiteralDate:         chromaStyle(c.LiteralDate),
		chroma.LiteralString:       chromaStyle(c.LiteralString),
		chroma.LiteralStringEscape: chromaStyle(c.LiteralStringEscape),
		chroma.GenericDeleted:      chromaStyle(c.GenericDeleted),
		chroma.GenericEmph:         chromaStyle(c.GenericEmph),
		chroma.GenericInserted:     chromaStyle(c.GenericInserted),
		chroma.GenericStrong:       chromaStyle(c.GenericStrong),
		chroma.GenericSubheading:   chromaStyle(c.GenericSubheading),
		chroma.Background:          chromaStyle(c.Background),
	}
	types := make([]chroma.TokenType, 0, len(entries))
	for t := range entries {
		types = append(types, t)
	}
	slices.Sort(types)
	var key strings.Builder
	for _, t := range types {
		fmt.Fprintf(&key, "%d=%s;", t, entries[t])
	}
	if s, ok := chromaStyles.Load(key.String()); ok {
		return s.(*chroma.Style)
	}
	s, _ := chromaStyles.LoadOrStore(key.String(), chroma.MustNewStyle(chromaStyleTheme, entries))
	return s.(*chroma.Style)
}

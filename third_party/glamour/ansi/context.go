package ansi

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// RenderContext holds the current rendering options and state.
type RenderContext struct {
	options Options

	blockStack *BlockStack
	table      *TableElement
	// document is the block buffer of the document, which holds the
	// whole rendered output before the document's margins are applied.
	// kz fork: it is kept from one render to the next (see
	// ANSIRenderer.renderNode) instead of growing a new buffer by
	// doubling through all of it at every render.
	document *bytes.Buffer
}

// maxKeptDocument bounds the document buffer a renderer keeps between
// renders: a larger one, left by an unusually long document, is let go.
const maxKeptDocument = 1 << 20

// NewRenderContext returns a new RenderContext.
func NewRenderContext(options Options) RenderContext {
	return RenderContext{
		options:    options,
		blockStack: &BlockStack{},
		table:      &TableElement{},
		document:   &bytes.Buffer{},
	}
}

// SanitizeHTML sanitizes HTML content: it returns the text of s without
// its tags, comments and doctype, and without the content of elements whose
// content is not text to show (script, style and the like).
//
// kz fork: upstream used bluemonday's StrictPolicy and unescaped its output,
// which gives the same text; importing bluemonday cost every kz process
// about 6 ms of package init (its CSS tables and regular expressions), even
// one that never renders markdown.
func (ctx RenderContext) SanitizeHTML(s string, trimSpaces bool) string {
	s = stripTags(s)
	if trimSpaces {
		s = strings.TrimSpace(s)
	}
	return s
}

// skipContent are the elements whose content bluemonday's StrictPolicy
// drops along with the tags.
var skipContent = map[string]bool{
	"frame": true, "frameset": true, "iframe": true, "noembed": true, "noframes": true,
	"noscript": true, "nostyle": true, "object": true, "script": true, "style": true, "title": true,
}

func stripTags(s string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken:
			if name, _ := z.TagName(); skipContent[string(name)] {
				skip++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); skipContent[string(name)] && skip > 0 {
				skip--
			}
		}
	}
}

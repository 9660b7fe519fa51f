package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// contentKind is how web_fetch reads a media type.
type contentKind string

// Content kinds.
const (
	kindHTML   contentKind = "html"
	kindJSON   contentKind = "json"
	kindText   contentKind = "text"
	kindBinary contentKind = "binary"
)

// kindOf classifies a media type. Types that are text in all but name
// (XML, JavaScript, YAML, TOML) read as text; anything else is binary.
func kindOf(mediaType string) contentKind {
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		return kindHTML
	case mediaType == "application/json" || mediaType == "text/json" || strings.HasSuffix(mediaType, "+json"):
		return kindJSON
	case strings.HasPrefix(mediaType, "text/"), mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/javascript", mediaType == "application/x-yaml", mediaType == "application/yaml",
		mediaType == "application/toml", mediaType == "application/x-sh":
		return kindText
	}
	return kindBinary
}

// markdown converts the page to what the model reads: HTML becomes
// markdown (its main content unless fullPage), JSON is indented in a code
// block, text stays as it is. Binary content is refused: it is not
// something a model can read, and a misnamed type is caught by looking
// for NUL bytes.
func (p *fetchedPage) markdown(ctx context.Context, fullPage bool) (string, error) {
	mt := p.mediaType
	if mt == "" || mt == "application/octet-stream" {
		// No type, or the catch-all one: go by the content.
		if sniffed, _, err := mime.ParseMediaType(http.DetectContentType(p.body)); err == nil {
			mt = sniffed
		}
	}
	kind := kindOf(mt)
	if kind != kindBinary && bytes.IndexByte(p.body[:min(len(p.body), 8192)], 0) >= 0 {
		kind = kindBinary
	}
	switch kind {
	case kindBinary:
		return "", fmt.Errorf("%s serves %s, which is binary: web_fetch reads HTML, text and JSON only", p.finalURL, mt)
	case kindJSON:
		var buf bytes.Buffer
		text := p.body
		if json.Indent(&buf, p.body, "", "  ") == nil {
			text = buf.Bytes()
		}
		s := strings.ToValidUTF8(string(text), "\uFFFD")
		fence := codeFence(s)
		return fence + "json\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n", nil
	case kindText:
		return p.decoded(), nil
	}
	return htmlMarkdown(ctx, p.decoded(), p.finalURL.String(), fullPage)
}

// decoded returns the body as UTF-8, converted from the charset the
// Content-Type header, a byte-order mark or an HTML meta tag names.
func (p *fetchedPage) decoded() string {
	b := p.body
	if enc, name, _ := charset.DetermineEncoding(b, p.contentType); name != "utf-8" && enc != nil {
		if out, err := enc.NewDecoder().Bytes(b); err == nil {
			b = out
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// htmlMarkdown converts an HTML page to markdown. Unless fullPage, the
// page's main content is extracted first (navigation, sidebars and
// footers dropped) when the page looks like an article; a page that does
// not, or whose extraction comes out empty, is converted whole.
func htmlMarkdown(ctx context.Context, page, pageURL string, fullPage bool) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
	opts := []converter.ConvertOptionFunc{converter.WithContext(ctx), converter.WithDomain(pageURL)}
	if !fullPage {
		if md, ok := mainContent(conv, page, pageURL, opts); ok {
			return md, nil
		}
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", fmt.Errorf("parse the HTML of %s: %w", pageURL, err)
	}
	md, err := conv.ConvertNode(doc, opts...)
	if err != nil {
		return "", fmt.Errorf("convert %s to markdown: %w", pageURL, err)
	}
	return string(md), nil
}

// mainContent returns the markdown of the page's main content, headed by
// its title, or false when the page has none to extract.
func mainContent(conv *converter.Converter, page, pageURL string, opts []converter.ConvertOptionFunc) (string, bool) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil || !readability.CheckDocument(doc) {
		return "", false
	}
	u, err := parseFetchURL(pageURL)
	if err != nil {
		return "", false
	}
	art, err := readability.FromDocument(doc, u)
	if err != nil || art.Node == nil {
		return "", false
	}
	md, err := conv.ConvertNode(art.Node, opts...)
	if err != nil || len(bytes.TrimSpace(md)) == 0 {
		return "", false
	}
	out := strings.TrimSpace(string(md))
	if t := strings.TrimSpace(art.Title()); t != "" && !strings.HasPrefix(out, "# ") {
		out = "# " + t + "\n\n" + out
	}
	return out + "\n", true
}

// codeFence returns a backtick fence longer than any backtick run in s,
// so the content cannot end the code block.
func codeFence(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

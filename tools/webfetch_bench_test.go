package tools

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkWebFetchMarkdown measures the conversion of fetched HTML to what
// the model reads: a documentation page (main-content extraction, then
// markdown) and a 300 KB page of 4000 paragraphs.
func BenchmarkWebFetchMarkdown(b *testing.B) {
	article, err := os.ReadFile(filepath.Join("testdata", "webfetch", "article.html"))
	if err != nil {
		b.Fatal(err)
	}
	var huge strings.Builder
	huge.WriteString("<html><body>")
	for i := range 4000 {
		fmt.Fprintf(&huge, "<p>Paragraph %05d of a very long page.</p>\n", i)
	}
	huge.WriteString("</body></html>")
	u, _ := url.Parse("https://docs.test/page")
	for _, c := range []struct {
		name string
		body []byte
	}{{"article", article}, {"huge", []byte(huge.String())}} {
		b.Run(c.name, func(b *testing.B) {
			p := &fetchedPage{finalURL: u, mediaType: "text/html", contentType: "text/html; charset=utf-8", body: c.body}
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.markdown(context.Background(), false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

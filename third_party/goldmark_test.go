package thirdparty

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// The goldmark fork and the autolink patterns of the glamour fork build
// their regular expressions and tables on first use instead of in package
// initialisation (README.md). These tests hold what uses them to
// upstream's output: links found in text, e-mail domains, Unicode case
// folding of link labels, GitHub links shortened. Each also runs from
// several goroutines at once, the first use included, since the lazy
// values are built by whichever caller comes first.

func TestGoldmarkForkLazyTables(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for src, want := range map[string]string{
		"see www.example.com/a?b=1 now":               `<a href="http://www.example.com/a?b=1">www.example.com/a?b=1</a>`,
		"see https://example.com:8080/x now":          `<a href="https://example.com:8080/x">https://example.com:8080/x</a>`,
		"ftp://files.example.org/f.txt":               `<a href="ftp://files.example.org/f.txt">ftp://files.example.org/f.txt</a>`,
		"mail me@mail.example.com today":              `<a href="mailto:me@mail.example.com">me@mail.example.com</a>`,
		"<me@example.com>":                            `<a href="mailto:me@example.com">me@example.com</a>`,
		"[ẞ]\n\n[SS]: /url\n":                         `<a href="/url">ẞ</a>`,
		"[Straße]\n\n[STRASSE]: /s\n":                 `<a href="/s">Straße</a>`,
		"[ΑΓΩ]\n\n[αγω]: /φου\n":                      `<a href="/%CF%86%CE%BF%CF%85">ΑΓΩ</a>`,
		"no www.x link: www.example":                  "no www.x link: www.example",
		"| a | b |\n|:--|--:|\n| 1 | 2 |\n":           `<th style="text-align:left">a</th>`,
		"- [x] done\n- [ ] open\n":                    `<input checked="" disabled="" type="checkbox"`,
		"http://" + strings.Repeat("a", 300) + ".com": "http://" + strings.Repeat("a", 300) + ".com",
		// The HTML block and raw HTML patterns of the parser.
		"<script>\nlet a = 1;\n</script>\n\nafter": "<!-- raw HTML omitted -->",
		"<div class=\"x\">\nblock\n</div>\n":       "<!-- raw HTML omitted -->",
		"<!-- a comment -->\n":                     "<!-- raw HTML omitted -->",
		"text <span title='t'>in</span> line":      "text <!-- raw HTML omitted -->in<!-- raw HTML omitted --> line",
		"a < b and c > d":                          "a &lt; b and c &gt; d",
		"<custom-tag a=1/>\n":                      "<!-- raw HTML omitted -->",
	} {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				var out bytes.Buffer
				if err := md.Convert([]byte(src), &out); err != nil {
					t.Errorf("Convert(%q): %v", src, err)
					return
				}
				if !strings.Contains(out.String(), want) {
					t.Errorf("Convert(%q) = %q, want it to contain %q", src, out.String(), want)
				}
			})
		}
		wg.Wait()
	}
}

// GitHub links in a table are shortened in the table (the link itself is
// listed below it), which is where glamour uses the autolink patterns.
func TestGlamourForkShortensGitHubLinks(t *testing.T) {
	for src, want := range map[string]string{
		"https://github.com/owner/repo/issues/12":                         "owner/repo#12",
		"https://github.com/owner/repo/pull/7#issuecomment-99":            "owner/repo#7 (comment)",
		"https://github.com/owner/repo/commit/0123456789abcdef":           "owner/repo@0123456",
		"https://github.com/owner/repo/pull/3#pullrequestreview-5":        "owner/repo#3 (review)",
		"https://github.com/owner/repo/discussions/4#discussioncomment-1": "owner/repo#4 (comment)",
	} {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				out, err := glamour.Render("| link |\n|---|\n| "+src+" |\n", "dark")
				if err != nil {
					t.Errorf("Render(%q): %v", src, err)
					return
				}
				if got := ansi.Strip(out); !strings.Contains(got, want) {
					t.Errorf("Render(%q) = %q, want it to contain %q", src, got, want)
				}
			})
		}
		wg.Wait()
	}
}
